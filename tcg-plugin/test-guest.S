/*
 * test-guest.S: a 32-bit multiboot (v1) kernel that exercises the insn-count plugin with
 * regions of known numbers of instructions. Built by CMake with plain binutils:
 *   as --32 [--defsym UNBALANCED=1] -o test-guest.o test-guest.S
 *   ld -m elf_i386 -n -Ttext=0x100000 -e _start -o test-guest.elf test-guest.o
 * Boot: qemu-system-x86_64 -accel tcg -kernel test-guest.elf -display none -nodefaults
 *   -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=0x04 -plugin ...
 * QEMU then exits with status 99 ((0x31 << 1) | 1). Without the isa-debug-exit device the
 * guest triple-faults (empty IDT), which -no-reboot (or libvirt's on_reboot=destroy) turns
 * into the end of the VM. It writes one byte ('G') to COM1 first, so a console watcher sees
 * it start. Only the boot CPU runs it: other vCPUs stay halted, waiting for a SIPI.
 *
 * In 32-bit code "nopl DISP(%eax)" has the bytes 0F 1F 80 disp32 of the markers of
 * guest-tools/insn-marker.h (there written "nopl DISP(%rax)" for 64-bit code).
 *
 * Three steps. Instructions executed from STEP_BEGIN to STEP_END (both markers included):
 *   step 1, 32-bit protected mode (all "user" by address):
 *     region = REGION_BEGIN 1 + mov 1 + 1000 x (add, dec, jnz) 3000 + REGION_END 1 = 3003,
 *     n = 1, unbalanced = 0; step = STEP_BEGIN 1 + 3003 + STEP_END 1 = 3005.
 *     UNBALANCED: a second REGION_BEGIN before the region (the first opens a region that the
 *     second restarts: unbalanced 1) and a second REGION_END after it (no region open:
 *     unbalanced 2); the region is still 3003 with n = 1, and the step 3007.
 *   step 2, long mode, the region calling code at the kernel alias KBASE + kernel_loop:
 *     region user = REGION_BEGIN 1 + lea, movabs, add, call 4 + REGION_END 1 = 6,
 *     region kernel = mov 1 + 500 x (add, dec, jnz) 1500 + ret 1 = 1502 (n = 1);
 *     step user = 1 + 6 + 1 = 8, step kernel = 1502. Kernel profile of the step: the
 *     translation blocks at kernel_loop (4), its loop label (1497) and the ret (1).
 *   step 3, long mode, region classes (all "user"; a marker of one class inside a region of
 *   another counts as one instruction of that region):
 *     class 0 = REGION_BEGIN 1 + mov 1 + 100 x (dec, jnz) 200 + REGION_END 1 = 203, n = 1;
 *     class 1, two regions right after it: REGION1_BEGIN 1 + mov 1 + 200 x 2 + REGION1_END 1
 *       = 403, then 1 + 1 + 10 x 2 + 1 = 23: n = 2, user = 426, median = 23 (the lower of two);
 *     class 2 around those three: REGION2_BEGIN 1 + 203 + 403 + 23 + REGION2_END 1 = 631, n = 1;
 *     class 3, empty: REGION3_BEGIN 1 + REGION3_END 1 = 2, n = 1;
 *     step = STEP_BEGIN 1 + 631 + 2 + STEP_END 1 = 635. No unbalanced marker in any class.
 *     UNBALANCED: a REGION1_END after the class-3 region (no class-1 region open): class 1
 *     unbalanced 1, its regions unchanged, the other classes unaffected; the step 636.
 */
	.set KBASE, 0xffffffff80000000

	.code32
	.section .text
	.globl _start
	.align 4
multiboot_header:
	.long 0x1BADB002		/* magic */
	.long 0				/* flags: none (the ELF headers give the load layout) */
	.long -0x1BADB002		/* checksum: magic + flags + checksum = 0 */

_start:
	mov $0x3f8, %dx
	mov $0x47, %al			/* 'G' */
	out %al, %dx

	nopl 0x15A1B003(%eax)		/* ISOLAB_MARK_STEP_BEGIN */
.ifdef UNBALANCED
	nopl 0x15A1B001(%eax)		/* ISOLAB_MARK_REGION_BEGIN (restarted by the next) */
.endif
	nopl 0x15A1B001(%eax)		/* ISOLAB_MARK_REGION_BEGIN */
	mov $1000, %ecx
1:	add $1, %eax
	dec %ecx
	jnz 1b
	nopl 0x15A1B002(%eax)		/* ISOLAB_MARK_REGION_END */
.ifdef UNBALANCED
	nopl 0x15A1B002(%eax)		/* ISOLAB_MARK_REGION_END with no region open */
.endif
	nopl 0x15A1B004(%eax)		/* ISOLAB_MARK_STEP_END */

	/* Long mode with two mappings of the low 1 GiB (2 MiB pages): identity, and at
	 * KBASE = 0xffffffff80000000 (PML4 slot 511, PDPT slot 510), where the plugin counts
	 * code as kernel. Tables at 2 MiB: PML4, low PDPT, high PDPT, PD. */
	mov $0x200000, %edi
	xor %eax, %eax
	mov $(4 * 4096 / 4), %ecx
	cld
	rep stosl
	movl $0x201003, 0x200000	/* PML4[0] -> low PDPT */
	movl $0x202003, 0x200ff8	/* PML4[511] -> high PDPT */
	movl $0x203003, 0x201000	/* low PDPT[0] -> PD */
	movl $0x203003, 0x202ff0	/* high PDPT[510] -> PD */
	xor %ecx, %ecx
3:	mov %ecx, %eax			/* PD[i] = i x 2 MiB, present, writable, large */
	shl $21, %eax
	or $0x83, %eax
	mov %eax, 0x203000(,%ecx,8)
	inc %ecx
	cmp $512, %ecx
	jne 3b
	mov %cr4, %eax
	or $0x20, %eax			/* CR4.PAE */
	mov %eax, %cr4
	mov $0x200000, %eax
	mov %eax, %cr3
	mov $0xC0000080, %ecx		/* EFER.LME */
	rdmsr
	or $0x100, %eax
	wrmsr
	mov %cr0, %eax
	or $0x80000001, %eax		/* CR0.PG | CR0.PE */
	mov %eax, %cr0
	lgdt gdtr
	ljmp $8, $long_mode

	.code64
long_mode:
	mov $0x90000, %esp		/* a stack in low memory for the call below */
	nopl 0x15A1B003(%rax)		/* ISOLAB_MARK_STEP_BEGIN (step 2) */
	nopl 0x15A1B001(%rax)		/* ISOLAB_MARK_REGION_BEGIN */
	lea kernel_loop(%rip), %rax	/* its KBASE alias (an ELF32 object has no 64-bit */
	movabs $KBASE, %rdx		/* relocations, so the address is computed) */
	add %rdx, %rax
	call *%rax
	nopl 0x15A1B002(%rax)		/* ISOLAB_MARK_REGION_END */
	nopl 0x15A1B004(%rax)		/* ISOLAB_MARK_STEP_END */

	nopl 0x15A1B003(%rax)		/* ISOLAB_MARK_STEP_BEGIN (step 3) */
	nopl 0x15A1B007(%rax)		/* ISOLAB_MARK_REGION2_BEGIN */
	nopl 0x15A1B001(%rax)		/* ISOLAB_MARK_REGION_BEGIN */
	mov $100, %ecx
6:	dec %ecx
	jnz 6b
	nopl 0x15A1B002(%rax)		/* ISOLAB_MARK_REGION_END */
	nopl 0x15A1B005(%rax)		/* ISOLAB_MARK_REGION1_BEGIN */
	mov $200, %ecx
7:	dec %ecx
	jnz 7b
	nopl 0x15A1B006(%rax)		/* ISOLAB_MARK_REGION1_END */
	nopl 0x15A1B005(%rax)		/* ISOLAB_MARK_REGION1_BEGIN */
	mov $10, %ecx
8:	dec %ecx
	jnz 8b
	nopl 0x15A1B006(%rax)		/* ISOLAB_MARK_REGION1_END */
	nopl 0x15A1B008(%rax)		/* ISOLAB_MARK_REGION2_END */
	nopl 0x15A1B009(%rax)		/* ISOLAB_MARK_REGION3_BEGIN */
	nopl 0x15A1B00A(%rax)		/* ISOLAB_MARK_REGION3_END */
.ifdef UNBALANCED
	nopl 0x15A1B006(%rax)		/* ISOLAB_MARK_REGION1_END with no class-1 region open */
.endif
	nopl 0x15A1B004(%rax)		/* ISOLAB_MARK_STEP_END */

	mov $0xf4, %dx			/* isa-debug-exit: QEMU exits with (0x31 << 1) | 1 */
	mov $0x31, %eax
	out %eax, %dx
	lidt empty_idt64(%rip)	/* no such device: any exception now triple-faults */
	int3
4:	hlt
	jmp 4b

	/* Called at its KBASE alias: 1 + 500 x 3 + 1 = 1502 kernel instructions in three
	 * translation blocks: [mov, add, dec, jnz] once (4), [add, dec, jnz] 499 times (1497),
	 * [ret] once (1). */
	.balign 64, 0xcc
kernel_loop:
	mov $500, %ecx
5:	add $1, %rbx
	dec %ecx
	jnz 5b
	ret

	.balign 8
gdt:
	.quad 0, 0x00209A0000000000	/* null, 64-bit code */
gdtr:
	.word 15
	.long gdt
empty_idt64:
	.word 0
	.quad 0

	.section .note.GNU-stack, "", @progbits
