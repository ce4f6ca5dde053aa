// The hwlat tracer's text (`echo hwlat > current_tracer; cat trace`; kernel
// Documentation/trace/ftrace.rst "Hardware Latency Detector", kernel/trace/trace_hwlat.c and
// trace_output.c; docs/sources.md [w1]). Pure functions over bytes, for `isolab import`.
//
// A sample line, after the usual "TASK-PID [CPU] FLAGS TIMESTAMP:" prefix:
//   "#1     inner/outer(us):   11/12    ts:1581527483.343962693 count:6 nmi-total:7 nmi-count:1"
// "#N" is the sample's sequence number, not an event name. inner and outer are the two
// latencies (µs) the window saw; the sample's latency is the larger. count: (from v5.7) is how
// many times the threshold was crossed in that window: a line without it counts once.
// nmi-total: (µs) and nmi-count: appear only when NMIs came (nmi-total only where sched_clock is
// NMI-safe). "[00N]" is the CPU that window ran on: the hwlat thread moves between CPUs. Other
// "key:value" words are ignored (formats grow); the header's entries-written count is not
// required to match the lines (entries can be lost).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "parse/metrics.h"

namespace isolab {

struct HwlatSample {
  long long seq = 0;  // "#N"
  int cpu = 0;        // "[00N]"
  double inner_us = 0;
  double outer_us = 0;
  long long count = 1;                 // "count:", 1 when absent
  std::optional<double> nmi_total_us;  // "nmi-total:"
  std::optional<long long> nmi_count;  // "nmi-count:"
  double latency_us() const { return inner_us > outer_us ? inner_us : outer_us; }
};

// True when text names the hwlat tracer ("# tracer: hwlat").
bool is_hwlat_trace(std::string_view text);

// The samples in file order. Throws isolab::Error naming the line (1-based, quoted) for a line
// that is neither a '#' comment, blank, nor a sample with "inner/outer(us):", and when there
// is no sample at all.
std::vector<HwlatSample> parse_hwlat_trace(std::string_view text);

// Per CPU the samples' windows ran on (bare names; the import prefixes them):
//   hwlat.max_us: the largest latency (max of inner and outer) of its samples (unit "us",
//     better lower, aggregate max);
//   hwlat.threshold_crossings: the sum of count: (kind "count", unit "count", aggregate sum);
//   hwlat.nmi_count: the sum of nmi-count: (the same).
Metrics hwlat_metrics(const std::vector<HwlatSample>& samples);

}  // namespace isolab
