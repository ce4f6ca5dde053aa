#include "workload/insn_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "base/error.h"
#include "parse/insn_count.h"
#include "parse/page_fault_bench.h"
#include "parse/vmstat_overhead.h"
#include "workload/noise.h"

namespace isolab {

namespace {

using nlohmann::json;

constexpr const char* kSource = "tcg-plugin";

Metric insn_metric(const std::string& unit, double value) {
  return instruction_metric(unit, value, kSource);
}

// vmstat-overhead: the instructions of its marked operations on the CPU it was pinned to.
void per_operation_metrics(const WorkloadSpec& w, const InsnStep& step, const ChannelRecord& out,
                           InsnCellOutcome& o) {
  VmstatOverheadResult r;
  try {
    r = parse_vmstat_overhead(out.data);
  } catch (const Error&) {
    return;  // the workload's own parser reports it
  }
  const auto names = vmstat_operation_names(r.mode);
  if (!names || !r.marked_regions) return;  // a tool without markers
  const std::string all = w.name + "." + names->all;
  if (!r.cpu || !r.pinned) {
    o.record["invalid"][all] = "the tool was not pinned to a CPU";
    return;
  }
  const InsnPerOperation op = insn_per_operation(step, static_cast<unsigned>(*r.cpu),
                                                 static_cast<std::uint64_t>(*r.marked_regions));
  if (!op.valid) {
    o.record["invalid"][all] = op.reason;
    return;
  }
  const double per = names->operations_per_region;
  o.metrics[w.name + "." + names->mean] = insn_metric("instructions", op.total / per);
  if (!op.median_total) {
    o.record["invalid"][all] = "the plugin wrote no region median";
    return;
  }
  o.metrics[all] = insn_metric("instructions", *op.median_total / per);
  o.metrics[w.name + "." + names->kernel] = insn_metric("instructions", *op.median_kernel / per);
}

// page-fault-bench's region classes (guest-tools/page-fault-bench.c): per phase, one for a
// batch's page faults and one for its MADV_DONTNEED.
struct PageRegions {
  const char* what;  // "page_fault" | "page_free"
  unsigned single_class, per_cpu_class;
};
constexpr PageRegions kPageRegions[] = {{"page_fault", 0, 2}, {"page_free", 1, 3}};

// The single phase: the median batch on the worker's CPU, per page.
void single_phase_metrics(const std::string& wl, const PageRegions& k, const InsnStep& step,
                          const PageFaultPhase& ph, double pages, InsnCellOutcome& o) {
  const std::string all = wl + ".insns_per_" + k.what;
  if (ph.workers.size() != 1) {
    o.record["invalid"][all] =
        "the single phase has " + std::to_string(ph.workers.size()) + " workers, not 1";
    return;
  }
  const PageFaultWorker& pw = ph.workers[0];
  const InsnPerOperation op =
      insn_per_operation(step, static_cast<unsigned>(pw.cpu), *pw.marked_batches, k.single_class);
  if (!op.valid || !op.median_total) {
    o.record["invalid"][all] = op.valid ? "the plugin wrote no region median" : op.reason;
    return;
  }
  o.metrics[all] = insn_metric("instructions", *op.median_total / pages);
  o.metrics[wl + ".kernel_insns_per_" + k.what] =
      insn_metric("instructions", *op.median_kernel / pages);
}

// Stores a per-CPU metric of instructions: cpus and the value of each.
void add_per_cpu_insn_metric(const std::string& name, const std::vector<int>& cpus,
                             std::vector<std::optional<double>> values, InsnCellOutcome& o) {
  MetricPerCpu pc;
  pc.kind = "instructions";
  pc.cpus = cpus;
  pc.slots = std::move(values);
  if (auto m = make_per_cpu_metric("instructions", true, "mean", std::move(pc))) {
    m->source = kSource;
    o.metrics[name] = std::move(*m);
  }
}

// The per_cpu phase: on each worker's CPU its median batch, per page.
void per_cpu_phase_metrics(const std::string& wl, const PageRegions& k, const InsnStep& step,
                           const PageFaultPhase& ph, double pages, InsnCellOutcome& o) {
  const std::string all = wl + ".insns_per_" + k.what + "_per_cpu";
  std::map<unsigned, std::uint64_t> expected;
  for (const PageFaultWorker& pw : ph.workers)
    if (!expected.emplace(static_cast<unsigned>(pw.cpu), *pw.marked_batches).second) {
      o.record["invalid"][all] = "two workers on CPU " + std::to_string(pw.cpu);
      return;
    }
  const InsnPerOperationByVcpu by = insn_per_operation_by_vcpu(step, expected, k.per_cpu_class);
  if (!by.valid) {
    o.record["invalid"][all] = by.reason;
    return;
  }
  std::vector<int> cpus;
  std::vector<std::optional<double>> total, kernel;
  for (const auto& [cpu, op] : by.per_vcpu) {
    if (!op.median_total) {
      o.record["invalid"][all] = "the plugin wrote no region median on vCPU " + std::to_string(cpu);
      return;
    }
    cpus.push_back(static_cast<int>(cpu));
    total.emplace_back(*op.median_total / pages);
    kernel.emplace_back(*op.median_kernel / pages);
  }
  add_per_cpu_insn_metric(all, cpus, std::move(total), o);
  add_per_cpu_insn_metric(wl + ".kernel_insns_per_" + k.what + "_per_cpu", cpus, std::move(kernel),
                          o);
}

// page-fault-bench: the instructions of its marked batches, per page.
void page_fault_metrics(const WorkloadSpec& w, const InsnStep& step, const ChannelRecord& out,
                        InsnCellOutcome& o) {
  PageFaultBenchResult r;
  try {
    r = parse_page_fault_bench(out.data);
  } catch (const Error&) {
    return;  // the workload's own parser reports it
  }
  const double pages = static_cast<double>(r.pages_per_batch);
  for (const PageFaultPhase& ph : r.phases)
    for (const PageFaultWorker& pw : ph.workers)
      if (!pw.marked_batches) return;  // a tool without markers
  std::map<std::string, int> times;
  for (const PageFaultPhase& ph : r.phases) times[ph.name]++;
  for (const PageFaultPhase& ph : r.phases) {
    const bool single = ph.name == "single";
    for (const PageRegions& k : kPageRegions) {
      if (times[ph.name] > 1)
        o.record["invalid"][w.name + ".insns_per_" + k.what + (single ? "" : "_per_cpu")] =
            "the tool reported " + std::to_string(times[ph.name]) + " " + ph.name + " phases";
      else if (single)
        single_phase_metrics(w.name, k, step, ph, pages, o);
      else
        per_cpu_phase_metrics(w.name, k, step, ph, pages, o);
    }
  }
}

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
    m->source = kSource;
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
  if (const ChannelRecord* out = in.records->find(w.name + ".stdout")) {
    if (w.tool == "page-fault-bench")
      page_fault_metrics(w, step, *out, o);
    else
      per_operation_metrics(w, step, *out, o);
  }
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
  o.record = {{"source", kSource}};
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
