// Instruction-count metrics of one cell from the guest's own performance counters (source
// "pmu"): what insn_cell.h derives from the TCG plugin, for a boot without the plugin (KVM).
//
// vmstat-overhead counts each timed operation with per-task user and kernel instruction
// counters (guest-tools/insn-pmu.h) and reports a "pmu" object (parse/vmstat_overhead.h
// VmstatPmu). Metrics, all "kind": "instructions", "source": "pmu", unit "instructions",
// lower is better, aggregate "mean", one value per cell, with the same names as the plugin's:
//   <wl>.insns_per_syscall, <wl>.kernel_insns_per_syscall       syscall mode: the lower median
//       over the operations of one mlock()+munlock() pair's instructions (all, kernel-mode),
//       minus the median of the empty regions (the counter reads alone), per system call (half
//       a pair)
//   <wl>.insns_per_syscall_mean                                  the mean pair minus the empty
//       median, per system call
//   <wl>.insns_per_idle_loop, <wl>.kernel_insns_per_idle_loop,
//   <wl>.insns_per_idle_loop_mean                                idle mode: the same per
//       usleep() iteration
// They are not the plugin's quantities: the counters count the task only (the plugin counts
// the whole vCPU), so an idle loop's PMU count leaves out the idle task, and a kernel thread
// that runs during an operation is left out of the mean; a hardware counter also counts a
// "rep" string instruction once. compare refuses to test a metric across sources.
// <wl>.noise.kernel_insns_per_s (per isolated CPU) has no PMU counterpart: per-CPU kernel counts
// from the PMU are not implemented.
//
// A metric whose counts do not check out (tool not pinned, counted + unscheduled regions other
// than the marked operations, an operation median below the empty median) is left out with the
// reason under "invalid" in the record; never a number from a partial count.
#pragma once

#include <vector>

#include "guest/channel.h"
#include "spec/spec.h"
#include "workload/insn_metrics.h"

namespace isolab {

struct PmuCellInput {
  const std::vector<WorkloadSpec>* workloads = nullptr;  // the plan's steps
  const ChannelContents* records = nullptr;              // the guest's records
};

// Metrics (names prefixed "<workload>.") and the record for result.json cells[].insn_counts:
//   {"source": "pmu", "steps": {"<wl>": {"pmu": {<the tool's pmu object as parsed>}}},
//    "invalid": {"<metric>": "<reason>"}, "per_cpu": "<why there is no per-CPU metric>"}
// When no metric came out: "source": null and "reason": the first step's reason
// ("guest PMU unavailable in <wl>: perf_event_open: No such file or directory"), or
// "the PMU counts did not check out (invalid)" when every step's were invalid, or
// "no guest tool reported PMU counts" when no step reported a pmu object.
// Never throws for what the guest wrote: unparsable output gives no metric (the workload's own
// parser reports it), a malformed pmu object is an unavailable one.
InsnCellOutcome pmu_cell_metrics(const PmuCellInput& in);

}  // namespace isolab
