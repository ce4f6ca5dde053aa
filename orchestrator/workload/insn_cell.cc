#include "workload/insn_cell.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "base/error.h"
#include "parse/insn_count.h"
#include "parse/metrics.h"
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

// The step's kernel instructions on each isolated CPU, by function, largest first: the top
// in.profile_functions functions, the sum of the others ("profile_rest") and of the kernel code
// outside every function ("profile_unattributed"), which together make the CPU's kernel count
// of the step. A version-3 profile whose sum differs from that count is left out, with the
// reason under "profile_invalid".
void profile(const WorkloadSpec& w, const InsnStep& step, const InsnCellInput& in,
             InsnCellOutcome& o) {
  for (unsigned cpu : in.isolated.cpus()) {
    const auto entries = insn_step_profile(step, cpu);
    if (entries.empty()) continue;
    const std::string c = std::to_string(cpu);
    if (std::string why = insn_profile_sum_problem(step, cpu); !why.empty()) {
      o.record["profile_invalid"][w.name][c] = why;
      continue;
    }
    std::map<std::string, std::uint64_t> by_function;
    std::uint64_t unattributed = 0, rest = 0;
    for (const auto& e : entries) {
      const auto fn =
          in.system_map && e.in_function ? kernel_function_at(*in.system_map, e.pc) : std::nullopt;
      if (fn)
        by_function[*fn] += e.insns;
      else
        unattributed += e.insns;
    }
    std::vector<std::pair<std::string, std::uint64_t>> top(by_function.begin(), by_function.end());
    std::stable_sort(top.begin(), top.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (std::size_t i = in.profile_functions; i < top.size(); ++i) rest += top[i].second;
    if (top.size() > in.profile_functions) top.resize(in.profile_functions);
    json rows = json::array();
    for (const auto& [fn, n] : top) rows.push_back({{"function", fn}, {"insns", n}});
    o.record["profile"][w.name][c] = rows;
    o.record["profile_rest"][w.name][c] = rest;
    o.record["profile_unattributed"][w.name][c] = unattributed;
  }
}

// The p-quantile of sorted values by the nearest rank: the ceil(p n)-th smallest (n > 0).
std::uint64_t nearest_rank(const std::vector<std::uint64_t>& sorted, double p) {
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::max<std::size_t>(rank, 1) - 1];
}

// One CPU's wakeup paths for the record: counts, quantiles, a histogram by powers of two and
// the longest path's functions.
json wakeup_record(const InsnWakeups& wk, std::vector<std::uint64_t> sorted, const SystemMap* map) {
  json r = {{"n", sorted.size()},
            {"nowake", wk.nowake},
            {"from_timer", wk.timer},
            {"from_other_irq", wk.irq},
            {"no_entry", wk.noentry},
            {"median", nearest_rank(sorted, 0.5)},
            {"p90", nearest_rank(sorted, 0.9)},
            {"p99", nearest_rank(sorted, 0.99)},
            {"max", sorted.back()}};
  std::map<std::uint64_t, std::uint64_t> hist;  // upper bound 2^k -> paths below it
  for (std::uint64_t v : sorted) {
    std::uint64_t b = 1;
    while (b <= v && b < (1ull << 62)) b <<= 1;
    hist[b]++;
  }
  json h = json::array();
  for (const auto& [below, n] : hist) h.push_back({{"below", below}, {"paths", n}});
  r["histogram"] = h;
  json longest = json::array();
  for (const InsnWakeFunction& f : wk.longest) {
    if (longest.size() == 20) break;
    std::string name = f.where == InsnWakeFunction::user ? "(user)" : "(outside every function)";
    if (f.where == InsnWakeFunction::function && map)
      name = kernel_function_at(*map, f.pc).value_or(name);
    longest.push_back({{"function", name}, {"insns", f.insns}});
  }
  r["longest_path"] = longest;
  return r;
}

// Wakeup path lengths (tcg-plugin/wakeup.c) per CPU with at least one path: max and p99 as
// per-CPU instruction metrics, the distribution in the record.
void wakeup_metrics(const WorkloadSpec& w, const InsnStep& step, const InsnCellInput& in,
                    InsnCellOutcome& o) {
  MetricPerCpu max, p99;
  max.kind = p99.kind = "instructions";
  for (const InsnWakeups& wk : step.wakeups) {
    const std::string c = std::to_string(wk.vcpu);
    std::vector<std::uint64_t> sorted = wk.lengths;
    if (sorted.empty()) {
      o.record["wakeups"][w.name][c] = {{"n", 0}, {"nowake", wk.nowake}};
      continue;
    }
    std::sort(sorted.begin(), sorted.end());
    max.cpus.push_back(static_cast<int>(wk.vcpu));
    p99.cpus.push_back(static_cast<int>(wk.vcpu));
    max.slots.emplace_back(static_cast<double>(sorted.back()));
    p99.slots.emplace_back(static_cast<double>(nearest_rank(sorted, 0.99)));
    o.record["wakeups"][w.name][c] = wakeup_record(wk, std::move(sorted), in.system_map);
  }
  for (auto& [name, pc] :
       {std::pair{"wakeup_insns_max", &max}, std::pair{"wakeup_insns_p99", &p99}})
    if (!pc->cpus.empty())
      if (auto m = make_per_cpu_metric("instructions", true, "max", std::move(*pc))) {
        m->source = kPluginSource;
        o.metrics[w.name + "." + name] = std::move(*m);
      }
}

// Per isolated CPU, the step's rep-string executions and fault counters (format 3).
void step_rep_and_faults(const InsnStep& step, const InsnCellInput& in, json& s) {
  const std::vector<InsnCounts> rep = insn_step_rep_deltas(step);
  for (unsigned cpu : in.isolated.cpus()) {
    if (cpu >= rep.size() || cpu >= step.end_faults.size()) continue;
    const std::string c = std::to_string(cpu);
    s["kernel_rep"][c] = rep[cpu].kernel;
    s["user_rep"][c] = rep[cpu].user;
    const InsnFaults &b = step.begin_faults[cpu], &e = step.end_faults[cpu];
    s["faults"][c] = {{"user_fixed", e.fixed - b.fixed},
                      {"user_unmatched", e.unmatched - b.unmatched},
                      {"kernel", e.kernel - b.kernel}};
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
  if (step.late) {
    s["problem"] = "the plugin began counting at the step's begin marker, not before it";
    return;
  }
  const std::vector<InsnCounts> delta = insn_step_deltas(step);
  for (unsigned cpu : in.isolated.cpus())
    if (cpu < delta.size()) {
      s["kernel"][std::to_string(cpu)] = delta[cpu].kernel;
      s["user"][std::to_string(cpu)] = delta[cpu].user;
    }
  step_rep_and_faults(step, in, s);
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
  if (!in.symbols_valid) return;
  profile(w, step, in, o);
  wakeup_metrics(w, step, in, o);
}

// Whether the kernel that ran is the one its System.map describes (KASLR): else the profile
// and the wakeup paths, which need the map's addresses, are left out with the reason.
void check_symbols(const InsnCellInput& in, InsnCellOutcome& o, bool& valid) {
  valid = true;
  if (!in.system_map) return;
  const ChannelRecord* r = in.records->find("kallsyms_stext");
  const std::string why = kernel_relocation_problem(*in.system_map, r ? r->data : "");
  if (why.empty()) return;
  valid = false;
  o.record["profile_invalid"] =
      "the kernel's System.map does not describe the kernel that ran: " + why +
      "; no profile and no wakeup paths";
}

}  // namespace

InsnCellOutcome insn_cell_metrics(const InsnCellInput& in) {
  InsnCellOutcome o;
  o.record = {{"source", kPluginSource}};
  std::vector<const WorkloadSpec*> ran;
  for (const auto& w : *in.workloads)
    if (in.records->find(w.name + ".stdout")) ran.push_back(&w);
  try {
    const InsnCountFile file = parse_insn_count(in.plugin_text);
    if (!file.complete) o.record["problems"].push_back("plugin file: " + file.truncation);
    if (file.mode != "exact") {
      o.record["problems"].push_back("the plugin counted in " + file.mode +
                                     " mode (its floor-cost build): counts shared by the vCPUs, "
                                     "no metrics");
      return o;
    }
    InsnCellInput checked = in;
    check_symbols(in, o, checked.symbols_valid);
    if (file.steps.size() != ran.size()) {
      o.record["problems"].push_back("the plugin saw " + std::to_string(file.steps.size()) +
                                     " steps, the guest ran " + std::to_string(ran.size()));
      return o;
    }
    for (std::size_t i = 0; i < ran.size(); ++i) step_metrics(*ran[i], file.steps[i], checked, o);
  } catch (const Error& e) {
    o.metrics.clear();
    o.record["problems"].push_back(e.what());
  }
  return o;
}

}  // namespace isolab
