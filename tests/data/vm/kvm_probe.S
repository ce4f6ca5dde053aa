/* isolab KVM probe: multiboot (a.out kludge) image loaded at 1 MiB by QEMU -kernel.
 * Markers on the isa-debugcon port 0x402: the banner "\nISOLAB-KVM-PROBE " from
 * protected mode, 'L' long mode, one '.' per MiB
 * touched in [16 MiB, 48 MiB), one '+' per 2^22 compute
 * iterations (8 blocks), 'E' done; then isa-debug-exit at 0xf4 with 0x31 makes
 * QEMU exit with status (0x31 << 1) | 1 = 99. Page tables live at 2 MiB (PML4, PDPT, PD). */
	.code32
	.globl _start
mbhdr:
	.long 0x1BADB002, 0x00010000, -(0x1BADB002 + 0x00010000)
	.long mbhdr, mbhdr, end, 0, _start
_start:
	cli
	mov $0x402, %dx
	mov $banner, %esi
0:	lodsb
	test %al, %al
	jz 9f
	out %al, %dx
	jmp 0b
9:	mov $0x200000, %edi
	xor %eax, %eax
	mov $(3 * 4096 / 4), %ecx
	cld
	rep stosl
	movl $0x201003, 0x200000      /* PML4[0] -> PDPT */
	movl $0x202003, 0x201000      /* PDPT[0] -> PD */
	xor %ecx, %ecx                /* PD: 512 x 2 MiB identity pages = 1 GiB */
1:	mov %ecx, %eax
	shl $21, %eax
	or $0x83, %eax
	mov %eax, 0x202000(,%ecx,8)
	inc %ecx
	cmp $512, %ecx
	jne 1b
	mov %cr4, %eax
	or $0x20, %eax                /* CR4.PAE */
	mov %eax, %cr4
	mov $0x200000, %eax
	mov %eax, %cr3
	mov $0xC0000080, %ecx         /* EFER.LME */
	rdmsr
	or $0x100, %eax
	wrmsr
	mov %cr0, %eax
	or $0x80000001, %eax          /* CR0.PG | CR0.PE */
	mov %eax, %cr0
	lgdt gdtr
	ljmp $8, $long64
	.code64
long64:
	mov $0x402, %dx
	mov $'L', %al
	out %al, %dx
	mov $0x1000000, %rdi
2:	movq %rdi, (%rdi)
	add $4096, %rdi
	test $0xfffff, %edi
	jnz 2b
	mov $'.', %al
	out %al, %dx
	cmp $0x3000000, %rdi
	jb 2b
	mov $8, %rsi                  /* compute: 8 x 2^22 loop iterations, '+' each */
4:	mov $0x400000, %rcx
5:	imul %rcx, %rbx
	dec %rcx
	jnz 5b
	mov $'+', %al
	out %al, %dx
	dec %rsi
	jnz 4b
	mov $'E', %al
	out %al, %dx
	mov $0xf4, %dx
	mov $0x31, %al
	out %al, %dx
3:	hlt
	jmp 3b
	.balign 8
gdt:
	.quad 0, 0x00209A0000000000
gdtr:
	.word 15
	.long gdt
banner:
	.asciz "\nISOLAB-KVM-PROBE "
end:
