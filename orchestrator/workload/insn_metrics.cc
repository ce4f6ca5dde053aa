#include "workload/insn_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "base/error.h"
#include "parse/insn_count.h"
#include "parse/metrics.h"

namespace isolab {

Metric instruction_metric(const std::string& unit, double value, const std::string& source) {
  Metric m;
  m.unit = unit;
  m.lower_is_better = true;
  m.aggregate = "mean";
  m.values = {value};
  m.kind = "instructions";
  m.source = source;
  return m;
}

std::optional<VmstatOperationNames> vmstat_operation_names(const std::string& mode) {
  if (mode == "syscall")
    return VmstatOperationNames{"insns_per_syscall", "kernel_insns_per_syscall",
                                "insns_per_syscall_mean", 2};
  if (mode == "idle")
    return VmstatOperationNames{"insns_per_idle_loop", "kernel_insns_per_idle_loop",
                                "insns_per_idle_loop_mean", 1};
  return std::nullopt;
}

RepMetricNames rep_metric_names(const std::string& all) {
  const std::string rest = all.rfind("insns_", 0) == 0 ? all.substr(6) : all;
  return {"norep_insns_" + rest, "rep_iters_" + rest};
}

void add_rep_metrics(const std::string& wl, const std::string& all, const InsnPerOperation& op,
                     double per, InsnCellOutcome& o) {
  if (!op.median_norep || !op.rep) return;
  const RepMetricNames n = rep_metric_names(all);
  o.metrics[wl + "." + n.norep] =
      instruction_metric("instructions", *op.median_norep / per, kPluginSource);
  o.metrics[wl + "." + n.rep] = instruction_metric("instructions", *op.rep / per, kPluginSource);
}

}  // namespace isolab
