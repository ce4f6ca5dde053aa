// Parser for the output of guest-tools/page-fault-bench.c: one JSON object on stdout,
//   {"tool":"page-fault-bench","version":1,"counter":"tsc"|"ns","page_size":N,
//    "pages_per_batch":N,"duration_s":N,"warmup_batches":N,
//    "phases":[{"name":"single"|"per_cpu","elapsed_ns":N,
//               "vmstat_before":{"numa_hit":N,...},"vmstat_after":{...},
//               "workers":[{"cpu":N,"node":N,"batches":N,"pages":N,"fault_total":N,
//                           "free_total":N,"min_batch_fault":N,"max_batch_fault":N,
//                           "marked_batches":N (optional)}]}]}
// Counter units: "tsc" -> cycles (TSC ticks), "ns" -> nanoseconds of CLOCK_MONOTONIC.
// The vmstat objects hold the numa_* lines of the guest's /proc/vmstat (page allocator NUMA
// statistics, Documentation/admin-guide/numastat.rst) read just before and after the phase.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parse/metrics.h"

namespace isolab {

struct PageFaultWorker {
  int cpu = -1;
  int node = -1;  // NUMA node of the CPU (getcpu()); -1 unknown
  double batches = 0, pages = 0;
  double fault_total = 0;  // counter units over all timed faults
  double free_total = 0;   // counter units over all MADV_DONTNEED releases
  double min_batch_fault = 0, max_batch_fault = 0;
  // Timed batches the worker bracketed with instruction-count region markers
  // (guest-tools/insn-marker.h: classes 0 faults / 1 free in the single phase, 2 / 3 in the
  // per_cpu phase); nullopt for a tool that does not mark them.
  std::optional<std::uint64_t> marked_batches;
  double per_page_fault() const { return fault_total / pages; }
  double per_page_free() const { return free_total / pages; }
};

struct PageFaultPhase {
  std::string name;  // "single" | "per_cpu"
  double elapsed_ns = 0;
  std::map<std::string, double> vmstat_before, vmstat_after;  // numa_* counters
  std::vector<PageFaultWorker> workers;                       // at least one
};

struct PageFaultBenchResult {
  std::string counter;  // "tsc" | "ns"
  long page_size = 0;
  long pages_per_batch = 0;
  std::vector<PageFaultPhase> phases;
  std::string unit() const { return counter == "tsc" ? "cycles" : "ns"; }
};

// The six per-node page allocator counters reported as deltas, in /proc/vmstat order.
const std::vector<std::string>& numa_vmstat_counters();

// Parses the last line of text that starts with '{'. Throws isolab::Error quoting the text when
// there is none, it is not JSON, "tool"/"version" differ, a field is missing or mistyped (naming
// it, e.g. "phases/1/workers/0/pages"), a worker has no page, min > max batch, a non-empty
// vmstat object lacks one of numa_vmstat_counters(), only one of a phase's two is empty, a
// counter went down during a phase, or a worker's marked_batches is not an integer in
// [0, 1e15]. Empty vmstat objects (a kernel without CONFIG_NUMA) are
// kept empty.
PageFaultBenchResult parse_page_fault_bench(std::string_view text);

// Metrics (names bare; the workload layer prefixes "<workload>."):
//   cycles_per_page_fault          single phase: fault_total / pages (unit cycles or ns, lower
//                                  is better, mean)
//   cycles_per_page_free           single phase: free_total / pages
//   cycles_per_page_fault_per_cpu  per_cpu phase: one value per worker (mean)
//   numa_hit, numa_miss, numa_foreign, numa_interleave, numa_local, numa_other
//                                  sum over the phases of after - before (unit "count",
//                                  aggregate "sum"): 0 when vm.numa_stat is 0; absent when
//                                  the kernel has no numa_* counters.
// The names say "cycles" also with counter "ns"; the unit tells.
Metrics page_fault_bench_metrics(const PageFaultBenchResult& result);

}  // namespace isolab
