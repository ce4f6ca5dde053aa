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
 * Six steps, all in long mode after the guest has called kernel code once (k_init): what a
 * vCPU executes before its first kernel instruction (the firmware, QEMU's multiboot loader and
 * the 32-bit setup below) is boot code, counted apart. Code at the alias KBASE + x counts as
 * kernel, the rest as user. The kernel code lies at fixed offsets (.org), which the
 * hand-written symbol file test-guest.map names like a kernel's System.map. Instructions from
 * STEP_BEGIN to STEP_END (both markers included):
 *   step 1, user:
 *     region = REGION_BEGIN 1 + mov 1 + 1000 x (add, dec, jnz) 3000 + REGION_END 1 = 3003,
 *     n = 1, unbalanced = 0; step = STEP_BEGIN 1 + 3003 + STEP_END 1 = 3005.
 *     UNBALANCED: a second REGION_BEGIN before the region (the first opens a region that the
 *     second restarts: unbalanced 1) and a second REGION_END after it (no region open:
 *     unbalanced 2); the region is still 3003 with n = 1, and the step 3007.
 *   step 2, the region calling kernel_loop at its kernel alias:
 *     region user = REGION_BEGIN 1 + lea, movabs, add, call 4 + REGION_END 1 = 6,
 *     region kernel = mov 1 + 500 x (add, dec, jnz) 1500 + ret 1 = 1502 (n = 1);
 *     step user = 1 + 6 + 1 = 8, step kernel = 1502, all of it in kernel_loop's profile line.
 *   step 3, region classes (all user; a marker of one class inside a region of another counts
 *   as one instruction of that region):
 *     class 0 = REGION_BEGIN 1 + mov 1 + 100 x (dec, jnz) 200 + REGION_END 1 = 203, n = 1;
 *     class 1, two regions right after it: REGION1_BEGIN 1 + mov 1 + 200 x 2 + REGION1_END 1
 *       = 403, then 1 + 1 + 10 x 2 + 1 = 23: n = 2, user = 426, median = 23 (the lower of two);
 *     class 2 around those three: REGION2_BEGIN 1 + 203 + 403 + 23 + REGION2_END 1 = 631, n = 1;
 *     class 3, empty: REGION3_BEGIN 1 + REGION3_END 1 = 2, n = 1;
 *     step = STEP_BEGIN 1 + 631 + 2 + STEP_END 1 = 635. No unbalanced marker in any class.
 *     UNBALANCED: a REGION1_END after the class-3 region (no class-1 region open): class 1
 *     unbalanced 1, its regions unchanged, the other classes unaffected; the step 636.
 *   step 4, rep-string instructions (QEMU: once per iteration plus the final check):
 *     region user = REGION_BEGIN 1 + 3 mov + rep movsb of 100 bytes 101 + lea, movabs, add,
 *     call 4 + REGION_END 1 = 110 (rep 101); region kernel = k_rep: 3 (mov, mov, xor) + rep
 *     stosb of 50 bytes 51 + ret 1 = 55 (rep 51); region rep 152, norep_median 165 - 152 = 13;
 *     step user 112 (rep 101), kernel 55 (rep 51), k_rep's profile line 55 insns, rep 51.
 *   step 5, a page fault left in the middle of a user block: the store to 0x600000 (its page
 *     directory entry not present) enters asm_exc_page_fault, which maps the 2 MiB page and
 *     returns to the store. region user = REGION_BEGIN 1 + mov 1 + movl 1 + add 1 +
 *     REGION_END 1 = 5 (the instructions after the store counted once: the fault correction),
 *     region kernel = movl, invlpg, add, iretq = 4; step user 7, kernel 4; one fault fixed.
 *   step 6, wakeup paths: WAKE_ARM, int $0x21 (asm_common_interrupt: iretq 1; an entry that
 *     wakes nothing), int $0x20 (asm_sysvec_apic_timer_interrupt: push, call, pop, iretq 4,
 *     calling hrtimer_wakeup: xor, ret 2), WAKE: a path of 6 from the timer's entry; WAKE_ARM,
 *     int $0x20, add, WAKE: 7 (the add is user code on the path); WAKE_ARM, WAKE: no wakeup.
 *     wake: n = 2, lengths 6 and 7, nowake 1, timer 2; the longest path by function:
 *     asm_sysvec_apic_timer_interrupt 4, hrtimer_wakeup 2, user 1. step user = STEP_BEGIN 1 +
 *     3 WAKE_ARM + 3 int + add 1 + 3 WAKE + STEP_END 1 = 12, kernel = 1 + 6 + 6 = 13.
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

	/* Long mode with two mappings of the low 1 GiB (2 MiB pages): identity, and at
	 * KBASE = 0xffffffff80000000 (PML4 slot 511, PDPT slot 510), where the plugin counts
	 * code as kernel. Tables at 2 MiB: PML4, low PDPT, high PDPT, PD. The 2 MiB page at
	 * 6 MiB stays absent until step 5's page fault maps it. */
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
	movl $0, 0x203018		/* PD[3] (6-8 MiB) not present */
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
	/* rax = the low address of a handler: IDT gate rcx -> its kernel alias. */
set_gate:
	movabs $KBASE, %rdx
	add %rdx, %rax
	shl $4, %rcx
	lea idt(%rip), %rdi
	add %rcx, %rdi
	mov %ax, (%rdi)
	movw $8, 2(%rdi)		/* the 64-bit code selector */
	movw $0x8E00, 4(%rdi)		/* present 64-bit interrupt gate */
	shr $16, %rax
	mov %ax, 6(%rdi)
	shr $16, %rax
	mov %eax, 8(%rdi)
	movl $0, 12(%rdi)
	ret

	/* Calls the kernel alias of the code at the low address in rax. */
call_kernel:
	movabs $KBASE, %rdx
	add %rdx, %rax
	jmp *%rax

long_mode:
	mov $0x90000, %esp		/* a stack in low memory for calls and interrupts */
	xor %eax, %eax
	mov %eax, %ss			/* a null SS, which iretq restores */
	lea asm_exc_page_fault(%rip), %rax
	mov $14, %ecx
	call set_gate
	lea asm_sysvec_apic_timer_interrupt(%rip), %rax
	mov $0x20, %ecx
	call set_gate
	lea asm_common_interrupt(%rip), %rax
	mov $0x21, %ecx
	call set_gate
	lidt idtr(%rip)
	lea k_init(%rip), %rax		/* the first kernel instruction: boot code ends */
	call call_kernel

	nopl 0x15A1B003(%rax)		/* ISOLAB_MARK_STEP_BEGIN (step 1) */
.ifdef UNBALANCED
	nopl 0x15A1B001(%rax)		/* ISOLAB_MARK_REGION_BEGIN (restarted by the next) */
.endif
	nopl 0x15A1B001(%rax)		/* ISOLAB_MARK_REGION_BEGIN */
	mov $1000, %ecx
1:	add $1, %eax
	dec %ecx
	jnz 1b
	nopl 0x15A1B002(%rax)		/* ISOLAB_MARK_REGION_END */
.ifdef UNBALANCED
	nopl 0x15A1B002(%rax)		/* ISOLAB_MARK_REGION_END with no region open */
.endif
	nopl 0x15A1B004(%rax)		/* ISOLAB_MARK_STEP_END */

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

	nopl 0x15A1B003(%rax)		/* ISOLAB_MARK_STEP_BEGIN (step 4) */
	nopl 0x15A1B001(%rax)		/* ISOLAB_MARK_REGION_BEGIN */
	mov $0x300000, %esi
	mov $0x301000, %edi
	mov $100, %ecx
	rep movsb
	lea k_rep(%rip), %rax
	movabs $KBASE, %rdx
	add %rdx, %rax
	call *%rax
	nopl 0x15A1B002(%rax)		/* ISOLAB_MARK_REGION_END */
	nopl 0x15A1B004(%rax)		/* ISOLAB_MARK_STEP_END */

	nopl 0x15A1B003(%rax)		/* ISOLAB_MARK_STEP_BEGIN (step 5) */
	nopl 0x15A1B001(%rax)		/* ISOLAB_MARK_REGION_BEGIN */
	mov $0x600000, %edi
	movl $7, (%rdi)			/* page fault: its page is not present yet */
	add $1, %eax
	nopl 0x15A1B002(%rax)		/* ISOLAB_MARK_REGION_END */
	nopl 0x15A1B004(%rax)		/* ISOLAB_MARK_STEP_END */

	nopl 0x15A1B003(%rax)		/* ISOLAB_MARK_STEP_BEGIN (step 6) */
	nopl 0x15A1B00B(%rax)		/* ISOLAB_MARK_WAKE_ARM */
	int $0x21			/* an interrupt that wakes nothing */
	int $0x20			/* the "timer": its handler calls hrtimer_wakeup */
	nopl 0x15A1B00C(%rax)		/* ISOLAB_MARK_WAKE: a path of 6 */
	nopl 0x15A1B00B(%rax)		/* ISOLAB_MARK_WAKE_ARM */
	int $0x20
	add $1, %eax
	nopl 0x15A1B00C(%rax)		/* ISOLAB_MARK_WAKE: a path of 7 */
	nopl 0x15A1B00B(%rax)		/* ISOLAB_MARK_WAKE_ARM */
	nopl 0x15A1B00C(%rax)		/* ISOLAB_MARK_WAKE with no wakeup */
	nopl 0x15A1B004(%rax)		/* ISOLAB_MARK_STEP_END */

	mov $0xf4, %dx			/* isa-debug-exit: QEMU exits with (0x31 << 1) | 1 */
	mov $0x31, %eax
	out %eax, %dx
	lidt empty_idt64(%rip)	/* no such device: any exception now triple-faults */
	int3
4:	hlt
	jmp 4b

	/* The kernel side, called at its KBASE alias, at the offsets test-guest.map names. Each
	 * function ends in a control transfer, so the .org filler never runs. */

	.org 0x1000
	/* 1 + 500 x 3 + 1 = 1502 kernel instructions in three translation blocks: [mov, add,
	 * dec, jnz] once (4), [add, dec, jnz] 499 times (1497), [ret] once (1). */
kernel_loop:
	mov $500, %ecx
5:	add $1, %rbx
	dec %ecx
	jnz 5b
	ret

	.org 0x1040
k_init:
	ret

	.org 0x1080
k_rep:
	mov $0x302000, %edi
	mov $50, %ecx
	xor %eax, %eax
	rep stosb
	ret

	.org 0x1100
asm_exc_page_fault:
	movl $0x600083, 0x203018	/* PD[3]: 6 MiB, present, writable, large */
	invlpg 0x600000
	add $8, %rsp			/* the error code */
	iretq

	.org 0x1180
asm_sysvec_apic_timer_interrupt:
	push %rax
	call hrtimer_wakeup
	pop %rax
	iretq

	.org 0x1200
hrtimer_wakeup:
	xor %eax, %eax
	ret

	.org 0x1240
asm_common_interrupt:
	iretq

	.org 0x1280
	.balign 8
gdt:
	.quad 0, 0x00209A0000000000	/* null, 64-bit code */
gdtr:
	.word 15
	.long gdt
empty_idt64:
	.word 0
	.quad 0
	.balign 16
idt:
	.fill 0x22 * 16, 1, 0		/* gates 0-0x21; set_gate fills 14, 0x20 and 0x21 */
idtr:
	.word 0x22 * 16 - 1
	.long idt, 0

	.section .note.GNU-stack, "", @progbits
