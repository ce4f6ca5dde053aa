// page-fault-bench (guest-tools/page-fault-bench.c): cycles per page fault and per page given
// back on each worker's CPU, alone (single phase) and all at once (per_cpu phase), and the
// numa_* vmstat deltas; its batches marked for the instruction-counting plugin.
#include "parse/page_fault_bench.h"

#include <map>

#include "base/files.h"
#include "workload/tool.h"

namespace isolab {

namespace tool_page_fault_bench {
namespace {

// warmup_iterations: untimed batches per worker (default 20).
void read_fields(SpecObject& o, WorkloadSpec& w) {
  w.mode = o.str("mode", "");
  w.iterations = o.integer("iterations", 0, 0, 1000000000);
  w.warmup_iterations = o.integer("warmup_iterations", 20, 0, 1000000);
}

// taskset first: with isolcpus=domain the init's affinity leaves out the isolated CPUs, and
// page-fault-bench refuses CPUs outside the affinity it starts with.
void step(const WorkloadSpec& w, const StepInput& in, GuestStep& s) {
  std::vector<std::string> argv = {"taskset",         "-c",
                                   in.cpus.to_list(), "page-fault-bench",
                                   "--cpus",          in.cpus.to_list(),
                                   "--duration-s",    std::to_string(w.duration_s),
                                   "--warmup",        std::to_string(w.warmup_iterations)};
  argv.insert(argv.end(), w.extra_args.begin(), w.extra_args.end());
  s.script = sh_words(argv) + "\n";
  // Two phases of duration_s each; the warm-up batches run at about 1 ms each under TCG.
  s.timeout_s = w.timeout_s
                    ? w.timeout_s
                    : 2 * w.duration_s + static_cast<int>(w.warmup_iterations / 500) + in.margin_s;
}

void parse(const WorkloadSpec& w, const StepRecords& r, WorkloadOutcome& o) {
  if (r.out->rc != 0)
    fail_once(o, "page-fault-bench exited " + std::to_string(r.out->rc) + ": " +
                     sanitize_excerpt(r.err ? r.err->data : "", 400));
  else
    add_prefixed(o, w.name + ".", page_fault_bench_metrics(parse_page_fault_bench(r.out->data)));
}

std::vector<std::string> metric_names(const WorkloadSpec&) {
  std::vector<std::string> names = {"cycles_per_page_fault", "cycles_per_page_free",
                                    "cycles_per_page_fault_per_cpu"};
  for (const auto& n : numa_vmstat_counters()) names.push_back(n);
  for (const char* what : {"page_fault", "page_free"})
    for (const char* phase : {"", "_per_cpu"})
      for (const char* mode :
           {"insns_per_", "kernel_insns_per_", "norep_insns_per_", "rep_iters_per_"})
        names.push_back(std::string(mode) + what + phase);
  return names;
}

// The region classes (guest-tools/page-fault-bench.c): per phase, one for a batch's page
// faults and one for its MADV_DONTNEED.
struct PageRegions {
  const char* what;  // "page_fault" | "page_free"
  unsigned single_class, per_cpu_class;
};
constexpr PageRegions kPageRegions[] = {{"page_fault", 0, 2}, {"page_free", 1, 3}};

Metric insn_metric(double value) {
  return instruction_metric("instructions", value, kPluginSource);
}

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
  o.metrics[all] = insn_metric(*op.median_total / pages);
  o.metrics[wl + ".kernel_insns_per_" + k.what] = insn_metric(*op.median_kernel / pages);
  add_rep_metrics(wl, std::string("insns_per_") + k.what, op, pages, o);
}

// Stores a per-CPU metric of instructions: cpus and the value of each.
void add_per_cpu_insn_metric(const std::string& name, const std::vector<int>& cpus,
                             std::vector<std::optional<double>> values, InsnCellOutcome& o) {
  MetricPerCpu pc;
  pc.kind = "instructions";
  pc.cpus = cpus;
  pc.slots = std::move(values);
  if (auto m = make_per_cpu_metric("instructions", true, "mean", std::move(pc))) {
    m->source = kPluginSource;
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
  std::vector<std::optional<double>> total, kernel, norep, rep;
  for (const auto& [cpu, op] : by.per_vcpu) {
    if (!op.median_total) {
      o.record["invalid"][all] = "the plugin wrote no region median on vCPU " + std::to_string(cpu);
      return;
    }
    cpus.push_back(static_cast<int>(cpu));
    total.emplace_back(*op.median_total / pages);
    kernel.emplace_back(*op.median_kernel / pages);
    if (op.median_norep && op.rep) {
      norep.emplace_back(*op.median_norep / pages);
      rep.emplace_back(*op.rep / pages);
    }
  }
  add_per_cpu_insn_metric(all, cpus, std::move(total), o);
  add_per_cpu_insn_metric(wl + ".kernel_insns_per_" + k.what + "_per_cpu", cpus, std::move(kernel),
                          o);
  if (norep.size() == cpus.size()) {  // format 3
    const RepMetricNames n = rep_metric_names(std::string("insns_per_") + k.what + "_per_cpu");
    add_per_cpu_insn_metric(wl + "." + n.norep, cpus, std::move(norep), o);
    add_per_cpu_insn_metric(wl + "." + n.rep, cpus, std::move(rep), o);
  }
}

// The instructions of its marked batches, per page.
void plugin_metrics(const WorkloadSpec& w, const InsnStep& step, const ChannelRecord& out,
                    InsnCellOutcome& o) {
  const auto r = parsed_or_none(parse_page_fault_bench, out.data);
  if (!r) return;
  const double pages = static_cast<double>(r->pages_per_batch);
  for (const PageFaultPhase& ph : r->phases)
    for (const PageFaultWorker& pw : ph.workers)
      if (!pw.marked_batches) return;  // a tool without markers
  std::map<std::string, int> times;
  for (const PageFaultPhase& ph : r->phases) times[ph.name]++;
  for (const PageFaultPhase& ph : r->phases) {
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

}  // namespace
}  // namespace tool_page_fault_bench

const WorkloadTool& page_fault_bench_tool() {
  static const WorkloadTool t{.name = "page-fault-bench",
                              .default_cpus = "all",
                              .default_duration_s = 2,
                              .min_duration_s = 1,
                              .read_fields = tool_page_fault_bench::read_fields,
                              .step = tool_page_fault_bench::step,
                              .parse = tool_page_fault_bench::parse,
                              .metric_names = tool_page_fault_bench::metric_names,
                              .plugin_metrics = tool_page_fault_bench::plugin_metrics,
                              .guest_binary = "page-fault-bench"};
  return t;
}

}  // namespace isolab
