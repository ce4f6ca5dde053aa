#include "pipeline/plan_text.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "base/error.h"
#include "base/progress.h"
#include "compare/verdict_rules.h"
#include "guest/init_script.h"
#include "pipeline/fidelity.h"
#include "pipeline/plan_budget.h"
#include "workload/step.h"
#include "workload/workload.h"

namespace isolab {

namespace {

// How long a workload's step runs, in multiples of its duration_s (page-fault-bench: two phases
// of duration_s, workload/workload.cc; oslat: plus its 1 s pre-heat); a tool not listed here (or
// vmstat-overhead counting iterations) has no duration known before the run.
const std::map<std::string, double> kDurationFactor = {
    {"cyclictest", 1},      {"rtla-osnoise", 1},     {"rtla-timerlat", 1}, {"stress-ng", 1},
    {"vmstat-overhead", 1}, {"page-fault-bench", 2}, {"oslat", 1},
};

// The step's own run time in seconds, when known before the run.
std::optional<double> step_seconds(const WorkloadSpec& w) {
  const auto f = kDurationFactor.find(w.tool);
  if (f == kDurationFactor.end()) return std::nullopt;
  if (w.tool == "vmstat-overhead" && w.duration_s <= 0) return std::nullopt;
  return f->second * w.duration_s;
}

std::string plural(long n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// A number as %g prints it: "0.05", "10", "2.5".
std::string number(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

std::string percent(double p) { return number(p) + "%"; }

// "CPU 5", "CPUs 5-7".
std::string cpus_phrase(const CpuSet& cpus) {
  return (cpus.count() == 1 ? "CPU " : "CPUs ") + cpus.to_list();
}

std::string kernel_line(const VariantSpec& v, const KernelLookup& k) {
  std::string s = "  " + v.name + ": ";
  switch (k.state) {
    case KernelLookup::State::cached:
      return s + "from the kernel cache, " + k.kernel_release + " (build key " +
             k.build_key.substr(0, 12) + ")\n";
    case KernelLookup::State::prebuilt:
      return s + "a prebuilt image" +
             (k.kernel_release.empty() ? "" : " (" + k.kernel_release + ")") + ", not built\n";
    case KernelLookup::State::to_build:
      break;
  }
  s += "to build (" + k.why +
       "; configured first, then built unless a cached kernel has the "
       "same final .config)";
  if (k.last_build_seconds)
    s += "; the last build of this source and base config took " +
         format_duration(*k.last_build_seconds) + " (variant " + k.last_build_variant + ")";
  else
    s += "; no previous build time recorded";
  return s + "\n";
}

std::string kernels_section(const Spec& spec, const PlanTextFacts& f) {
  std::string s = "Kernels (kernel cache " + f.cache_dir + "):\n";
  for (std::size_t i = 0; i < spec.variants.size(); ++i) {
    const VariantSpec& v = spec.variants[i];
    s += kernel_line(v, f.kernels[i]);
    s += "    " + plural(static_cast<long>(v.patches.size()), "patch", "patches") + ", base " +
         spec.base_config + ", " +
         plural(static_cast<long>(spec.config_fragments.size() + v.config_fragments.size()),
                "config fragment", "config fragments") +
         "\n";
  }
  return s;
}

std::string accelerator_line(const PlanTextFacts& f) {
  if (f.accelerator.empty())
    return "  accelerator: decided by the libvirt hosts at run start (KVM when every host "
           "offers it)\n";
  std::string a = f.accelerator == "kvm" ? "KVM" : "TCG";
  return "  accelerator: " + a + " (" + f.accelerator_reason + ")\n";
}

std::string cmdline_lines(const Spec& spec, const GuestDerivation& g, const PlanTextFacts& f) {
  std::string s = "  kernel command line: " + g.cmdline + "\n";
  for (const auto& v : spec.variants)
    if (!v.extra_cmdline.empty()) s += "    variant " + v.name + " adds: " + v.extra_cmdline + "\n";
  if (f.trace)
    s += "    isolab adds " + std::to_string(trace_event_boot_param().size()) +
         " bytes of trace_event=... trace_clock=global (tracing the isolated CPUs; --no-trace "
         "drops it)\n";
  s += "    the backends add: console=ttyS0 panic=-1 (and no_timer_check under TCG)\n";
  s += "    boots the instruction-counting plugin counts (TCG without --no-insn-count) add:\n";
  for (const AddedParam& p : insn_count_params())
    s += std::string("      ") + p.param + ": " + p.reason + "\n";
  return s;
}

std::string guest_section(const Spec& spec, const GuestDerivation& g, const PlanTextFacts& f) {
  const GuestTopology& t = g.topology;
  std::string s = "Guest:\n";
  s += "  " + plural(g.vcpus, "vCPU", "vCPUs") + " (" + plural(t.sockets, "socket", "sockets") +
       " x " + plural(t.cores, "core", "cores") + " x " + plural(t.threads, "thread", "threads") +
       "), " + std::to_string(spec.memory_mib) + " MiB memory";
  s += spec.numa_nodes.empty()
           ? "\n"
           : ", " + plural(static_cast<long>(spec.numa_nodes.size()), "NUMA node", "NUMA nodes") +
                 "\n";
  s += accelerator_line(f);
  const std::string iso = g.partition.isolated.to_list();
  s += "  isolated CPUs: " + (iso.empty() ? std::string("none") : iso) +
       "; housekeeping CPUs: " + g.partition.housekeeping.to_list() + "\n";
  return s + cmdline_lines(spec, g, f);
}

// The customer's machine: where it was read and the fidelity table (pipeline/fidelity.h).
std::string fidelity_section(const Spec& spec, const GuestDerivation& g) {
  if (!spec.customer) return "";
  const CustomerSpec& c = *spec.customer;
  std::string s = "Customer's machine: " + c.facts.kind + " " + c.machine.filename().string() +
                  (c.facts.node.empty() ? "" : ", node " + c.facts.node) + "; line from " +
                  c.line_from + "; guest by the rule '" + c.shape.rule + "'\n";
  const RuntimeSettings& r = c.runtime;
  s += "  /init sets " + plural(static_cast<long>(r.sysctls.size()), "sysctl", "sysctls") +
       (r.housekeeping ? " and moves the workqueues, IRQs and kernel threads to the "
                         "housekeeping CPUs"
                       : "") +
       " before any step; the gate reads each back\n";
  return s + fidelity_text(fidelity_rows(spec, g)) + "\n";
}

std::string order_lines(const Spec& spec) {
  std::string s;
  const auto cells = plan_cells(spec, spec.boot_order_seed);
  const std::size_t per_block = spec.variants.size();
  for (std::size_t i = 0; i < cells.size(); i += per_block) {
    const CellPlan& c = cells[i];
    s += std::string("    ") + (c.warmup ? "warm-up " : "repetition ") +
         std::to_string(c.repetition) + ":";
    for (std::size_t j = i; j < i + per_block && j < cells.size(); ++j) s += " " + cells[j].variant;
    s += "\n";
  }
  return s;
}

std::string boots_section(const Spec& spec) {
  const long variants = static_cast<long>(spec.variants.size());
  const long boots = variants * (spec.repetitions + spec.warmup_repetitions);
  std::string s = "Boots: " + std::to_string(boots) + " = " +
                  plural(variants, "variant", "variants") + " x (" +
                  plural(spec.repetitions, "measured repetition", "measured repetitions") + " + " +
                  plural(spec.warmup_repetitions, "warm-up", "warm-ups") + ")\n";
  s += spec.boot_order_seed
           ? "  order: seed " + std::to_string(*spec.boot_order_seed) +
                 " shuffles the variants within each block:\n"
           : std::string(
                 "  order: no seed given, so the run draws one and shuffles the variants "
                 "within each block; shown in the spec's order:\n");
  return s + order_lines(spec);
}

std::string step_line(std::size_t i, const WorkloadSpec& w, const GuestDerivation& g,
                      const TimeoutSpec& t) {
  const GuestStep step = guest_step(w, g.partition, t, true);
  std::string s = "  " + std::to_string(i + 1) + ". " + w.name + ": " + w.tool +
                  (w.mode.empty() ? "" : " (" + w.mode + ")") + " on " +
                  cpus_phrase(resolve_cpus(w.cpus, g.partition, w.pointer)) + ", ";
  if (auto sec = step_seconds(w))
    s += format_duration(*sec);
  else
    s += plural(w.iterations, "iteration", "iterations") + " (time not known before the run)";
  if (w.load && !w.load->empty()) {
    const WorkloadSpec& l = w.load->front();
    s += ", with " + l.tool + " on " + cpus_phrase(resolve_cpus(l.cpus, g.partition, l.pointer));
  }
  return s + " (timeout " + std::to_string(step.timeout_s) + " s)\n";
}

std::string steps_section(const Spec& spec, const GuestDerivation& g) {
  std::string s = "Steps of every boot, in order (after the isolation gate checks the guest):\n";
  for (std::size_t i = 0; i < spec.workloads.size(); ++i)
    s += step_line(i, spec.workloads[i], g, spec.timeouts);
  return s;
}

std::string primary_line(const PrimaryMetric& p, const CompareSettings& c) {
  std::string s = "    " + p.row_name() + ": regressed if " +
                  (p.higher_is_bad ? "higher" : "lower") +
                  (p.ranks ? " (tested on the boots' ranks)" : "");
  if (p.threshold_pct) return s + ", threshold " + percent(*p.threshold_pct) + "\n";
  if (auto own = c.own_threshold_pct(p.metric))
    return s + ", threshold " + percent(*own) + " (configured for the metric)\n";
  return s + ", threshold by the metric's kind (below)\n";
}

std::string threshold_rules(const CompareSettings& c) {
  return "  margins, fixed before the run: timing " + percent(c.default_threshold_pct) +
         " (at least " + percent(c.tcg_timing_threshold_pct) +
         " when a boot ran under TCG); count " + percent(c.default_threshold_pct) +
         " of A's mean and at least the count floor; instructions " +
         percent(c.instructions_threshold_pct) +
         "; a metric's own thresholds_pct entry or the calibration's noise floor raises them\n";
}

std::string verdict_section(const Spec& spec) {
  const CompareSettings c = settings_from_json(spec.compare);
  std::string s =
      "Verdict (isolab compare; exit status 1 on a regression, 3 when no primary metric could "
      "reach alpha):\n";
  if (c.primary.empty()) {
    s += "  no primary metric is declared: only the failure, gate and retry rates and new "
         "build warnings can set the exit status\n";
  } else {
    s += "  " + plural(static_cast<long>(c.primary.size()), "primary metric", "primary metrics") +
         ", each tested one-sided in its bad direction; regressed when the step-down rejects it "
         "and the change is beyond its margin, 'changed, below threshold' when inside it:\n";
    for (const auto& p : c.primary) s += primary_line(p, c);
    s += threshold_rules(c);
    s += plan_budget_text(plan_budget(spec));
  }
  if (c.calibration)
    s += "  calibration " +
         (c.calibration->source.empty() ? std::string("(inline)") : c.calibration->source) + ": " +
         std::to_string(c.calibration->metrics.size()) +
         " metrics with margins or jitters fixed before the run\n";
  s += "  also counted against B, each as B's rate against A's in the same budget: kernel "
       "failure classes (build, boot, panic, oops, warning, RCU stall, lockup), isolation-gate "
       "checks, retried boots; and new build warnings in files B's patches touch\n";
  return s +
         "  every other metric is secondary: reported with a Westfall-Young family-wise p, "
         "never setting the exit status\n";
}

// The spec's budgets (spec/budgets.h), each with whether this accelerator enforces it; "" when
// the spec has none.
std::string budgets_section(const Spec& spec, const PlanTextFacts& f) {
  if (spec.budgets.empty()) return "";
  std::string s =
      "Budgets (isolab run and isolab budget; exit status 4 when an enforced budget is over):\n";
  for (const auto& b : spec.budgets) {
    const bool timing = b.kind == BudgetKind::timing;
    s += "  " + budget_text(b) + ": " +
         (!timing || f.accelerator == "kvm" ? "enforced"
          : f.accelerator.empty()           ? "enforced on KVM hosts, reported under TCG"
                                  : "reported, not enforced (this guest runs under TCG)") +
         "\n";
  }
  return s + "\n";
}

// The known seconds of one boot's steps, and the steps whose time is not known.
struct StepTime {
  double known = 0;
  std::vector<std::string> unknown;
};

StepTime steps_time(const Spec& spec) {
  StepTime t;
  for (const auto& w : spec.workloads) {
    if (auto sec = step_seconds(w))
      t.known += *sec;
    else
      t.unknown.push_back(w.name);
  }
  return t;
}

// The kernels' part of the estimate: the recorded time of each build, 0 for cached ones.
double builds_time(const PlanTextFacts& f, int* builds, int* unrecorded) {
  double total = 0;
  for (const auto& k : f.kernels) {
    if (k.state != KernelLookup::State::to_build) continue;
    ++*builds;
    if (k.last_build_seconds)
      total += *k.last_build_seconds;
    else
      ++*unrecorded;
  }
  return total;
}

std::string estimate_section(const Spec& spec, const PlanTextFacts& f) {
  int builds = 0, unrecorded = 0;
  const double build_s = builds_time(f, &builds, &unrecorded);
  const StepTime steps = steps_time(spec);
  const double boot_s = assumed_boot_overhead_seconds(f.accelerator);
  const long boots =
      static_cast<long>(spec.variants.size()) * (spec.repetitions + spec.warmup_repetitions);
  const double total = build_s + static_cast<double>(boots) * (boot_s + steps.known);
  std::string s = "Wall time estimate: about " + format_duration(total) + " (an estimate)\n";
  s += "  basis: kernel builds " + format_duration(build_s) + " (" +
       plural(builds, "kernel", "kernels") + " to build" +
       (unrecorded
            ? ", " + std::to_string(unrecorded) + " without a recorded build time, counted as 0"
            : "") +
       ") + " + plural(boots, "boot", "boots") + " x (" + format_duration(boot_s) +
       " assumed boot overhead under " + (f.accelerator == "kvm" ? "KVM" : "TCG") + " + " +
       format_duration(steps.known) + " of steps)\n";
  if (!steps.unknown.empty()) {
    s += "  not counted: the run time of";
    for (const auto& n : steps.unknown) s += " " + n;
    s += " (counted in iterations; each is bounded by its timeout)\n";
  }
  if (f.parallel != 1)
    s += "  guests boot " +
         (f.parallel > 1 ? std::to_string(f.parallel) : std::string("as many as fit")) +
         " at a time, which shortens the boots' part\n";
  return s;
}

}  // namespace

std::string plan_text(const Spec& spec, const GuestDerivation& guest, const PlanTextFacts& facts) {
  if (facts.kernels.size() != spec.variants.size())
    throw Error("plan text: " + std::to_string(facts.kernels.size()) + " kernel lookups for " +
                std::to_string(spec.variants.size()) + " variants");
  return "Plan of spec " + spec.name + "\n\n" + kernels_section(spec, facts) + "\n" +
         guest_section(spec, guest, facts) + "\n" + fidelity_section(spec, guest) +
         boots_section(spec) + "\n" + steps_section(spec, guest) + "\n" + verdict_section(spec) +
         "\n" + budgets_section(spec, facts) + estimate_section(spec, facts);
}

double assumed_boot_overhead_seconds(const std::string& accelerator) {
  return accelerator == "kvm" ? 5 : 20;
}

}  // namespace isolab
