// Instruction-count metrics of one cell, from the file isolab's QEMU TCG plugin wrote during
// the boot (parse/insn_count.h) and the records the guest sent (guest/channel.h).
//
// The guest's /init brackets every workload step with step markers (guest/init_script.h), so the
// plugin's step k is the k-th step of the plan; vmstat-overhead brackets each timed operation
// with region markers (guest-tools/insn-marker.h), page-fault-bench each timed batch's page
// faults and its MADV_DONTNEED (classes 0 and 1 in its single phase, 2 and 3 in its per_cpu
// phase, which the same step runs after the single phase). Metrics, all "kind": "instructions",
// "source": "tcg-plugin", unit "instructions" or "instructions/s", lower is better:
//   <wl>.insns_per_syscall, <wl>.kernel_insns_per_syscall      vmstat-overhead syscall mode:
//       the median over the marked mlock()+munlock() pairs on the pinned CPU of one pair's
//       guest instructions (all, kernel-mode only), per system call (half a pair, as
//       cycles_per_syscall): the path length of the system calls themselves
//   <wl>.insns_per_syscall_mean                                 the mean pair, per system call:
//       with the ticks, softirqs and kernel threads that entered the pairs (how many do
//       depends on the emulation speed, since they follow guest time)
//   <wl>.insns_per_idle_loop, <wl>.kernel_insns_per_idle_loop,
//   <wl>.insns_per_idle_loop_mean                               vmstat-overhead idle mode: the
//       same per usleep() iteration (the CPU leaves and re-enters the idle loop)
//   <wl>.insns_per_page_fault, <wl>.kernel_insns_per_page_fault  page-fault-bench single phase:
//       the median over the marked batches on the worker's CPU of one batch's fault loop
//       (all, kernel-mode only) divided by the pages of a batch ("pages_per_batch"): one page
//       fault that allocates, zeroes and maps a page, with the loop's few user instructions
//   <wl>.insns_per_page_free, <wl>.kernel_insns_per_page_free   the same for the batch's
//       madvise(MADV_DONTNEED), per page given back
//   <wl>.insns_per_page_fault_per_cpu, <wl>.kernel_insns_per_page_fault_per_cpu,
//   <wl>.insns_per_page_free_per_cpu, <wl>.kernel_insns_per_page_free_per_cpu
//                                                               per_cpu phase: the same on
//       each worker's CPU, all workers at once; per-CPU metrics with "cpus" (the workers'
//       CPUs, ascending) and "values" (instructions per page), aggregate mean, no "counts"
//   <wl>.norep_insns_per_..., <wl>.rep_iters_per_...           beside each per-operation metric
//       above (add_rep_metrics): without rep-string executions, and those executions
//   <wl>.wakeup_insns_max, <wl>.wakeup_insns_p99                 a step whose task marks its
//       wakeups (guest-tools/wake-marker.c, which cyclictest is run with): per CPU, the longest
//       and the 99th percentile (nearest rank) of its wakeup path lengths, the instructions
//       from the entry of the interrupt that woke the task to its first user instruction
//       (tcg-plugin/wakeup.c); per-CPU metrics with "cpus", aggregate max
//   <wl>.noise.kernel_insns_per_s                               every step: per isolated CPU,
//       the kernel-mode instructions the CPU executed between the step's markers divided by
//       the step window (uptime seconds, "<wl>.window"); "cpus", "counts" (instructions),
//       "window_s" as the trace-derived noise.* counts carry them
// An instruction count is a path length, not a time: a cache miss or a slow instruction costs
// no extra count, and a halted (idle) vCPU executes none.
//
// A per-operation metric whose regions do not check out (a marker on a CPU other than the
// pinned one, unbalanced markers, a region count other than the tool's own, a step without its
// end marker) is left out, with the reason under "invalid" in the cell's record; never a number
// from a partial count. The kernel-only and per-CPU variants go with their "insns_per_..."
// metric: one reason, keyed by that name. page-fault-bench's counts to match are each worker's
// "marked_batches" (regions of each of its phase's two classes on the worker's CPU); its
// per_cpu metrics are left out whole when any worker's CPU does not check out, when a CPU has
// regions of the phase's classes but no worker, or when two workers report one CPU. A tool
// output without the marker counts ("marked_regions", "marked_batches") gives no such metric
// and no reason.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "cmdline/cpulist.h"
#include "guest/channel.h"
#include "parse/system_map.h"
#include "spec/spec.h"
#include "workload/insn_metrics.h"

namespace isolab {

struct InsnCellInput {
  const std::vector<WorkloadSpec>* workloads = nullptr;  // the plan's steps, in order
  CpuSet isolated;                                       // CPUs whose kernel work is reported
  const ChannelContents* records = nullptr;
  std::string_view plugin_text;           // the plugin's file ("" = none was written)
  const SystemMap* system_map = nullptr;  // the kernel's symbols; nullptr = no profile names
  std::size_t profile_functions = 25;     // kept per step and CPU, largest first
  // Set by insn_cell_metrics (the caller's value is ignored): whether System.map describes the
  // kernel that ran (kernel_relocation_problem with the guest's record "kallsyms_stext").
  bool symbols_valid = true;
};

// Never throws for what the guest or the plugin wrote: a file that cannot be parsed gives no
// metrics and a problem line naming the parser's error.
InsnCellOutcome insn_cell_metrics(const InsnCellInput& in);

}  // namespace isolab
