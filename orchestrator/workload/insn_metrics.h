// The instruction-count metrics as the tools and the cell's counting share them: the metric one
// count makes, the names of vmstat-overhead's per-operation metrics and of the rep-string
// variants beside them, and what a cell's counting gives (InsnCellOutcome). Which metrics a
// cell gives, and how, is workload/insn_cell.h's contract.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmdline/cpulist.h"
#include "guest/channel.h"
#include "parse/metrics.h"
#include "parse/system_map.h"
#include "spec/spec.h"

namespace isolab {

struct InsnCellOutcome {
  Metrics metrics;  // names prefixed "<workload>."
  // For result.json cells[].insn_counts:
  //   {"source": "tcg-plugin", "steps": {"<wl>": {"seq": k, "kernel": {"<cpu>": n},
  //    "user": {"<cpu>": n}, "kernel_rep": {"<cpu>": n}, "user_rep": {"<cpu>": n},
  //    "faults": {"<cpu>": {"user_fixed", "user_unmatched", "kernel"}}, "window_s": s}},
  //    "invalid": {"<metric>": "<reason>"},
  //    "profile": {"<wl>": {"<cpu>": [{"function": f, "insns": n}, ...]}},
  //    "profile_rest": {"<wl>": {"<cpu>": n}}, "profile_unattributed": {"<wl>": {"<cpu>": n}},
  //    "profile_invalid": "<reason>" | {"<wl>": {"<cpu>": "<reason>"}},
  //    "wakeups": {"<wl>": {"<cpu>": {"n", "nowake", "from_timer", "from_other_irq",
  //      "no_entry", "median", "p90", "p99", "max", "histogram": [{"below": 2^k, "paths": n}],
  //      "longest_path": [{"function": f, "insns": n}, ...]}}},
  //    "problems": ["..."]}
  // The profile rows, profile_rest and profile_unattributed of a step and CPU sum to its
  // "kernel" count. "profile_invalid" is a string when the guest's kernel is not the one its
  // System.map describes (KASLR: no profile and no wakeup paths at all), per step and CPU when
  // that profile does not sum to the CPU's kernel count. "problems" holds what made the whole
  // file unusable (unparsable, step count differs, the floor-cost inline build).
  nlohmann::json record;
};

// The "source" of the metrics counted by isolab's QEMU TCG plugin.
inline constexpr const char* kPluginSource = "tcg-plugin";

// One instruction-count value as a metric: "kind": "instructions", lower is better, aggregate
// mean, `unit` ("instructions" or "instructions/s") and `source` ("tcg-plugin" or "pmu").
Metric instruction_metric(const std::string& unit, double value, const std::string& source);

// The names of vmstat-overhead's per-operation instruction metrics in a mode ("syscall",
// "idle"), whatever counted them (the TCG plugin here, the guest PMU in workload/pmu_metrics.h),
// and the operations one marked region holds (a mlock+munlock pair is 2 system calls); nullopt
// for another mode.
struct VmstatOperationNames {
  const char* all;     // the median region: the operation's own path length
  const char* kernel;  // its kernel-mode part
  const char* mean;    // the mean region, with whatever entered the regions
  double operations_per_region;
};
std::optional<VmstatOperationNames> vmstat_operation_names(const std::string& mode);

// The rep-string metrics beside a per-operation metric "insns_per_<op>": "norep_insns_per_<op>"
// (the median region less its rep-string executions, per operation: the path length with
// every rep movs/stos counted as nothing, so page clearing and copying drop out) and
// "rep_iters_per_<op>" (the regions' rep-string executions per operation, their mean: one per
// iteration plus the final check of each, e.g. 4097 per page clear_page_erms clears).
struct RepMetricNames {
  std::string norep, rep;
};
RepMetricNames rep_metric_names(const std::string& all);

// Adds both to o.metrics as "<wl>.<name>" when op has them (plugin format 3), dividing by
// `per` operations per region.
struct InsnPerOperation;
void add_rep_metrics(const std::string& wl, const std::string& all, const InsnPerOperation& op,
                     double per, InsnCellOutcome& o);

}  // namespace isolab
