#include "workload/insn_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "base/error.h"
#include "parse/insn_count.h"
#include "workload/noise.h"
#include "workload/registry.h"

namespace isolab {

namespace {

using nlohmann::json;

// Kernel-mode instructions per second of the step window on each isolated CPU.
void kernel_rate_metric(const WorkloadSpec& w, const std::vector<InsnCounts>& delta,
                        const CpuSet& isolated, double window_s, InsnCellOutcome& o) {
  MetricPerCpu pc;
  pc.kind = "instructions";
  pc.window_s = window_s;
  for (unsigned cpu : isolated.cpus()) {
    if (cpu >= delta.size()) continue;
    pc.cpus.push_back(static_cast<int>(cpu));
    pc.counts.push_back(static_cast<long long>(delta[cpu].kernel));
    pc.slots.emplace_back(static_cast<double>(delta[cpu].kernel) / window_s);
  }
  if (auto m = make_per_cpu_metric("instructions/s", true, "mean", std::move(pc))) {
    m->source = kPluginSource;
    o.metrics[w.name + ".noise.kernel_insns_per_s"] = std::move(*m);
  }
}

// The step's kernel instructions on each isolated CPU, by function, largest first.
void profile(const WorkloadSpec& w, const InsnStep& step, const InsnCellInput& in,
             InsnCellOutcome& o) {
  for (unsigned cpu : in.isolated.cpus()) {
    const auto entries = insn_step_profile(step, cpu);
    if (entries.empty()) continue;
    std::map<std::string, std::uint64_t> by_function;
    std::uint64_t unattributed = 0;
    for (const auto& e : entries) {
      const auto fn = in.system_map ? kernel_function_at(*in.system_map, e.pc) : std::nullopt;
      if (fn)
        by_function[*fn] += e.insns;
      else
        unattributed += e.insns;
    }
    std::vector<std::pair<std::string, std::uint64_t>> top(by_function.begin(), by_function.end());
    std::stable_sort(top.begin(), top.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    if (top.size() > in.profile_functions) top.resize(in.profile_functions);
    json rows = json::array();
    for (const auto& [fn, n] : top) rows.push_back({{"function", fn}, {"insns", n}});
    o.record["profile"][w.name][std::to_string(cpu)] = rows;
    o.record["profile_unattributed"][w.name][std::to_string(cpu)] = unattributed;
  }
}

// Everything one ended step gives.
void step_metrics(const WorkloadSpec& w, const InsnStep& step, const InsnCellInput& in,
                  InsnCellOutcome& o) {
  json& s = o.record["steps"][w.name];
  s["seq"] = step.seq;
  if (!step.ended) {
    s["problem"] = "the step's end marker was not seen";
    return;
  }
  const std::vector<InsnCounts> delta = insn_step_deltas(step);
  for (unsigned cpu : in.isolated.cpus())
    if (cpu < delta.size()) {
      s["kernel"][std::to_string(cpu)] = delta[cpu].kernel;
      s["user"][std::to_string(cpu)] = delta[cpu].user;
    }
  std::string problem;
  const ChannelRecord* win = in.records->find(w.name + ".window");
  const auto window_s = win ? parse_step_window(win->data, problem) : std::nullopt;
  if (window_s && *window_s > 0) {
    s["window_s"] = *window_s;
    kernel_rate_metric(w, delta, in.isolated, *window_s, o);
  } else {
    s["problem"] = "no step window: " + (win ? problem : std::string("record missing"));
  }
  const WorkloadTool& tool = tool_of(w);
  if (const ChannelRecord* out = in.records->find(w.name + ".stdout"); out && tool.plugin_metrics)
    tool.plugin_metrics(w, step, *out, o);
  profile(w, step, in, o);
}

}  // namespace

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

InsnCellOutcome insn_cell_metrics(const InsnCellInput& in) {
  InsnCellOutcome o;
  o.record = {{"source", kPluginSource}};
  std::vector<const WorkloadSpec*> ran;
  for (const auto& w : *in.workloads)
    if (in.records->find(w.name + ".stdout")) ran.push_back(&w);
  try {
    const InsnCountFile file = parse_insn_count(in.plugin_text);
    if (!file.complete) o.record["problems"].push_back("plugin file: " + file.truncation);
    if (file.steps.size() != ran.size()) {
      o.record["problems"].push_back("the plugin saw " + std::to_string(file.steps.size()) +
                                     " steps, the guest ran " + std::to_string(ran.size()));
      return o;
    }
    for (std::size_t i = 0; i < ran.size(); ++i) step_metrics(*ran[i], file.steps[i], in, o);
  } catch (const Error& e) {
    o.metrics.clear();
    o.record["problems"].push_back(e.what());
  }
  return o;
}

}  // namespace isolab
