#include "workload/pmu_metrics.h"

#include <optional>
#include <string>

#include "base/error.h"
#include "parse/vmstat_overhead.h"
#include "workload/insn_metrics.h"

namespace isolab {

namespace {

using nlohmann::json;

constexpr const char* kSource = "pmu";

Metric pmu_metric(double value) { return instruction_metric("instructions", value, kSource); }

json pmu_json(const VmstatPmu& p) {
  if (!p.available) return {{"available", false}, {"reason", p.reason}};
  return {{"available", true},
          {"regions", p.regions},
          {"unscheduled_regions", p.unscheduled_regions},
          {"insns_median", p.insns_median},
          {"kernel_insns_median", p.kernel_insns_median},
          {"insns_mean", p.insns_mean},
          {"kernel_insns_mean", p.kernel_insns_mean},
          {"empty_regions", p.empty_regions},
          {"empty_insns_median", p.empty_insns_median},
          {"empty_kernel_insns_median", p.empty_kernel_insns_median}};
}

// Why the counts of a pinned tool cannot stand for its operations ("" = they can).
std::string pmu_problem(const VmstatOverheadResult& r, const VmstatPmu& p) {
  if (!r.cpu || !r.pinned) return "the tool was not pinned to a CPU";
  const long marked = r.marked_regions.value_or(r.iterations);
  if (p.regions + p.unscheduled_regions != marked)
    return "the PMU counted " + std::to_string(p.regions) + " regions and missed " +
           std::to_string(p.unscheduled_regions) + ", the tool ran " + std::to_string(marked);
  if (p.insns_median < p.empty_insns_median ||
      p.kernel_insns_median < p.empty_kernel_insns_median || p.insns_mean < p.empty_insns_median)
    return "an operation's count is below the empty regions' median";
  return "";
}

// The per-operation metrics of one vmstat-overhead step.
void step_pmu_metrics(const WorkloadSpec& w, const VmstatOverheadResult& r, const VmstatPmu& p,
                      InsnCellOutcome& o) {
  const auto names = vmstat_operation_names(r.mode);
  if (!names) return;
  const std::string all = w.name + "." + names->all;
  if (const std::string why = pmu_problem(r, p); !why.empty()) {
    o.record["invalid"][all] = why;
    return;
  }
  const double per = names->operations_per_region;
  o.metrics[all] = pmu_metric((p.insns_median - p.empty_insns_median) / per);
  o.metrics[w.name + "." + names->kernel] =
      pmu_metric((p.kernel_insns_median - p.empty_kernel_insns_median) / per);
  o.metrics[w.name + "." + names->mean] = pmu_metric((p.insns_mean - p.empty_insns_median) / per);
}

// The step's pmu object, parsed (nullopt: no vmstat-overhead output with one).
std::optional<VmstatOverheadResult> tool_result(const WorkloadSpec& w, const ChannelContents& ch) {
  if (w.tool != "vmstat-overhead") return std::nullopt;
  const ChannelRecord* out = ch.find(w.name + ".stdout");
  if (!out) return std::nullopt;
  try {
    VmstatOverheadResult r = parse_vmstat_overhead(out->data);
    if (r.pmu) return r;
  } catch (const Error&) {  // the workload's own parser reports it
  }
  return std::nullopt;
}

}  // namespace

InsnCellOutcome pmu_cell_metrics(const PmuCellInput& in) {
  InsnCellOutcome o;
  o.record = {{"source", kSource}};
  std::string first_reason;
  for (const auto& w : *in.workloads) {
    const auto r = tool_result(w, *in.records);
    if (!r) continue;
    const VmstatPmu& p = *r->pmu;
    o.record["steps"][w.name]["pmu"] = pmu_json(p);
    if (p.available)
      step_pmu_metrics(w, *r, p, o);
    else if (first_reason.empty())
      first_reason = "guest PMU unavailable in " + w.name + ": " + p.reason;
  }
  o.record["per_cpu"] = "per-CPU kernel counts from the PMU are not implemented";
  if (o.metrics.empty()) {
    o.record["source"] = nullptr;
    if (first_reason.empty())
      first_reason = o.record.contains("invalid") ? "the PMU counts did not check out (invalid)"
                                                  : "no guest tool reported PMU counts";
    o.record["reason"] = first_reason;
  }
  return o;
}

}  // namespace isolab
