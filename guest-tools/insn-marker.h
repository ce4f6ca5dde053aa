/*
 * insn-marker.h: the marker instructions a guest program executes so that isolab's QEMU TCG
 * plugin (tcg-plugin/insn-count.c) can count the guest instructions of a marked region.
 *
 * A marker is the 7-byte multi-byte NOP "nopl DISP(%rax)" (0F 1F 80 + little-endian disp32)
 * with a displacement no compiler emits (compilers pad with displacement 0). It has no
 * architectural effect: on KVM, on hardware or under QEMU without the plugin it is a NOP.
 * The plugin recognises the thirteen displacements below when it translates the instruction.
 *
 *   ISOLAB_MARK_REGION_BEGIN  starts a measured region of class 0 on the executing vCPU (e.g.
 *                             just before one mlock()+munlock() pair).
 *   ISOLAB_MARK_REGION_END    ends it: the vCPU's user and kernel instructions executed since
 *                             the begin marker are added to that vCPU's class-0 region totals,
 *                             and its class-0 region count goes up by one. A begin while a
 *                             region of the class is open, or an end with none open, counts as
 *                             unbalanced for that class on that vCPU.
 *   ISOLAB_MARK_REGION<c>_BEGIN, ISOLAB_MARK_REGION<c>_END  (c = 1, 2, 3)
 *                             the same for region class c. The four classes are independent:
 *                             each has its own open region, totals, count and unbalanced count
 *                             per vCPU, so regions of different classes may follow each other
 *                             or nest (a class-0 region then a class-1 region on one vCPU in
 *                             one step are told apart: page-fault-bench marks a batch's page
 *                             faults class 0 and its MADV_DONTNEED class 1 in its single phase,
 *                             classes 2 and 3 in its per_cpu phase).
 *   ISOLAB_MARK_WAKE_ARM      the executing task is about to sleep until a timer wakes it.
 *   ISOLAB_MARK_WAKE          the task's first user instruction after that sleep returned: the
 *                             plugin records the wakeup's path length, the instructions its
 *                             vCPU executed from the entry of the interrupt that woke the task
 *                             to this marker (tcg-plugin/wakeup.c; guest-tools/wake-marker.c
 *                             puts both around clock_nanosleep()).
 *   ISOLAB_MARK_STEP_ARM      a workload step is about to start: a plugin that counts only
 *                             inside steps (count=steps) starts counting, which takes effect
 *                             before the executing vCPU runs its next translation block; the
 *                             STEP_BEGIN that follows is then exact. A NOP for a plugin that
 *                             counts everything.
 *   ISOLAB_MARK_STEP_BEGIN    a workload step starts: the plugin records every vCPU's
 *                             cumulative user and kernel instruction counts.
 *   ISOLAB_MARK_STEP_END      the step ends: the same snapshot, then every vCPU's region totals
 *                             of the step (and the step's kernel profile) are written out; a
 *                             plugin with count=steps stops counting.
 *
 * The counts attributed to a region include the marker instructions at both ends and whatever
 * the vCPU executed in between: the system calls the region makes, and any interrupt, softirq
 * or kernel thread that ran on that vCPU meanwhile. That is the point: the region's cost on an
 * isolated CPU is what the kernel made that CPU do.
 *
 * x86-64 only (the guest tools are built for the host's architecture, x86-64 here); on other
 * architectures the macros expand to nothing.
 */
#ifndef ISOLAB_INSN_MARKER_H
#define ISOLAB_INSN_MARKER_H

#define ISOLAB_MARK_DISP_REGION_BEGIN 0x15A1B001u
#define ISOLAB_MARK_DISP_REGION_END 0x15A1B002u
#define ISOLAB_MARK_DISP_STEP_BEGIN 0x15A1B003u
#define ISOLAB_MARK_DISP_STEP_END 0x15A1B004u
#define ISOLAB_MARK_DISP_REGION1_BEGIN 0x15A1B005u
#define ISOLAB_MARK_DISP_REGION1_END 0x15A1B006u
#define ISOLAB_MARK_DISP_REGION2_BEGIN 0x15A1B007u
#define ISOLAB_MARK_DISP_REGION2_END 0x15A1B008u
#define ISOLAB_MARK_DISP_REGION3_BEGIN 0x15A1B009u
#define ISOLAB_MARK_DISP_REGION3_END 0x15A1B00Au
#define ISOLAB_MARK_DISP_WAKE_ARM 0x15A1B00Bu
#define ISOLAB_MARK_DISP_WAKE 0x15A1B00Cu
#define ISOLAB_MARK_DISP_STEP_ARM 0x15A1B00Du

#if defined(__x86_64__)
/* The asm is volatile with a memory clobber so that the compiler neither drops it nor moves
 * memory accesses (the region's work) across it. */
#define ISOLAB_MARK_(disp) __asm__ __volatile__("nopl " #disp "(%%rax)" ::: "memory")
#define ISOLAB_MARK_REGION_BEGIN() ISOLAB_MARK_(0x15A1B001)
#define ISOLAB_MARK_REGION_END() ISOLAB_MARK_(0x15A1B002)
#define ISOLAB_MARK_STEP_BEGIN() ISOLAB_MARK_(0x15A1B003)
#define ISOLAB_MARK_STEP_END() ISOLAB_MARK_(0x15A1B004)
#define ISOLAB_MARK_REGION1_BEGIN() ISOLAB_MARK_(0x15A1B005)
#define ISOLAB_MARK_REGION1_END() ISOLAB_MARK_(0x15A1B006)
#define ISOLAB_MARK_REGION2_BEGIN() ISOLAB_MARK_(0x15A1B007)
#define ISOLAB_MARK_REGION2_END() ISOLAB_MARK_(0x15A1B008)
#define ISOLAB_MARK_REGION3_BEGIN() ISOLAB_MARK_(0x15A1B009)
#define ISOLAB_MARK_REGION3_END() ISOLAB_MARK_(0x15A1B00A)
#define ISOLAB_MARK_WAKE_ARM() ISOLAB_MARK_(0x15A1B00B)
#define ISOLAB_MARK_WAKE() ISOLAB_MARK_(0x15A1B00C)
#define ISOLAB_MARK_STEP_ARM() ISOLAB_MARK_(0x15A1B00D)
#else
#define ISOLAB_MARK_REGION_BEGIN() ((void)0)
#define ISOLAB_MARK_REGION_END() ((void)0)
#define ISOLAB_MARK_STEP_BEGIN() ((void)0)
#define ISOLAB_MARK_STEP_END() ((void)0)
#define ISOLAB_MARK_REGION1_BEGIN() ((void)0)
#define ISOLAB_MARK_REGION1_END() ((void)0)
#define ISOLAB_MARK_REGION2_BEGIN() ((void)0)
#define ISOLAB_MARK_REGION2_END() ((void)0)
#define ISOLAB_MARK_REGION3_BEGIN() ((void)0)
#define ISOLAB_MARK_REGION3_END() ((void)0)
#define ISOLAB_MARK_WAKE_ARM() ((void)0)
#define ISOLAB_MARK_WAKE() ((void)0)
#define ISOLAB_MARK_STEP_ARM() ((void)0)
#endif

#endif /* ISOLAB_INSN_MARKER_H */
