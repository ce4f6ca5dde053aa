#include "spec/budgets.h"

#include <cmath>
#include <cstdlib>

#include "base/error.h"
#include "base/files.h"
#include "base/number_text.h"
#include "cmdline/cpulist.h"
#include "spec/json_object.h"

namespace isolab {

namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxBudgets = 64;

}  // namespace

const std::vector<BudgetMetric>& budget_metrics() {
  using K = BudgetKind;
  static const std::vector<BudgetMetric> table = {
      {"oslat_max_us", "oslat_max_us", K::timing, "us", "oslat's longest gap"},
      {"oslat_avg_us", "oslat_avg_us", K::timing, "us", "oslat's mean gap"},
      {"latency_max_us", "latency_max_us", K::timing, "us", "cyclictest's largest wakeup latency"},
      {"latency_avg_us", "latency_avg_us", K::timing, "us", "cyclictest's mean wakeup latency"},
      {"longest_us", "noise.longest_us", K::timing, "us", "the longest interruption traced"},
      {"vmstat_update_per_s", "noise.vmstat_update_per_s", K::count, "1/s", "vmstat_update runs"},
      {"workqueue_other_per_s", "noise.workqueue_other_per_s", K::count, "1/s",
       "other workqueue items"},
      {"local_timer_per_s", "noise.local_timer_per_s", K::count, "1/s",
       "local timer interrupts (the tick)"},
      {"ipi_reschedule_per_s", "noise.ipi_reschedule_per_s", K::count, "1/s", "reschedule IPIs"},
      {"ipi_call_function_per_s", "noise.ipi_call_function_per_s", K::count, "1/s",
       "function-call IPIs"},
      {"irq_per_s", "noise.irq_per_s", K::count, "1/s", "device interrupts"},
      {"softirq_per_s", "noise.softirq_per_s", K::count, "1/s", "softirqs"},
      {"timer_callbacks_per_s", "noise.timer_callbacks_per_s", K::count, "1/s", "timer callbacks"},
      {"interruptions_per_s", "noise.interruptions_per_s", K::count, "1/s",
       "every interruption (parse/trace.h)"},
  };
  return table;
}

std::string budget_metric_names() {
  std::string out;
  for (const auto& m : budget_metrics()) out += std::string(m.name) + ", ";
  return out + "p<P> (a tail percentile of the workload's histogram, e.g. p99.999)";
}

namespace {

// P of "p<P>" when the name is a percentile; nullopt for any other name.
std::optional<double> percentile_of(const std::string& name, const std::string& pointer) {
  if (name.size() < 2 || name[0] != 'p' ||
      name.find_first_not_of("0123456789.", 1) != std::string::npos)
    return std::nullopt;
  char* end = nullptr;
  const double p = std::strtod(name.c_str() + 1, &end);
  if (*end != '\0' || !(p > 0 && p < 100))
    throw SpecError(pointer, "percentile \"" + name + "\": expected p<P> with 0 < P < 100");
  return p;
}

// The metric field: a table name or a percentile, into b.
void read_metric(SpecObject& o, BudgetSpec& b) {
  if (!o.has("metric"))
    throw SpecError(o.ptr("metric"), "missing; one of " + budget_metric_names());
  b.metric = o.str("metric");
  if ((b.percentile = percentile_of(b.metric, o.ptr("metric")))) {
    b.kind = BudgetKind::timing;
    b.unit = "us";
    return;
  }
  for (const auto& m : budget_metrics())
    if (b.metric == m.name) {
      b.cell_metric = m.cell_metric;
      b.kind = m.kind;
      b.unit = m.unit;
      return;
    }
  throw SpecError(o.ptr("metric"), "unknown metric \"" + sanitize_excerpt(b.metric, 60) +
                                       "\"; one of " + budget_metric_names());
}

double read_number(SpecObject& o, const std::string& key, bool positive) {
  const json* v = o.get(key);
  if (!v->is_number() || !std::isfinite(v->get<double>()) ||
      (positive ? v->get<double>() <= 0 : v->get<double>() < 0))
    throw SpecError(o.ptr(key), std::string("expected a finite number ") +
                                    (positive ? "> 0" : ">= 0") + ", got " + v->dump());
  return v->get<double>();
}

void read_cpus(SpecObject& o, BudgetSpec& b) {
  b.cpus = o.str("cpus");
  if (!o.has("cpus")) return;
  const CpuListParse r = try_parse_cpulist(b.cpus, kMaxCpus);
  if (b.cpus.empty() || !r.ok() || r.set.empty())
    throw SpecError(o.ptr("cpus"), r.ok() ? "expected a non-empty cpulist" : r.message);
}

BudgetSpec read_budget(const json& j, const std::string& pointer) {
  SpecObject o(j, pointer);
  BudgetSpec b;
  b.pointer = pointer;
  b.workload = o.str("workload");
  if (o.has("workload") && b.workload.empty()) throw SpecError(o.ptr("workload"), "empty name");
  read_metric(o, b);
  if (!o.has("below")) throw SpecError(o.ptr("below"), "missing: the limit, in " + b.unit);
  b.below = read_number(o, "below", true);
  read_cpus(o, b);
  if (o.has("min_runtime_s")) b.min_runtime_s = read_number(o, "min_runtime_s", false);
  o.finish();
  return b;
}

}  // namespace

std::vector<BudgetSpec> parse_budgets(const json& budgets, const std::string& pointer) {
  if (!budgets.is_array() || budgets.size() > kMaxBudgets)
    throw SpecError(pointer,
                    "expected an array of at most 64 budgets {\"metric\", \"below\", "
                    "\"workload\"?, \"cpus\"?, \"min_runtime_s\"?}");
  std::vector<BudgetSpec> out;
  for (std::size_t i = 0; i < budgets.size(); ++i)
    out.push_back(read_budget(budgets[i], json_child(pointer, i)));
  return out;
}

std::string budget_text(const BudgetSpec& b) {
  std::string s =
      b.metric + " < " + format_number("%g", b.below) + " " + (b.unit == "us" ? "us" : "/s");
  s += b.cpus.empty() ? " on the isolated CPUs" : " on CPUs " + b.cpus;
  s += b.workload.empty() ? " of every workload that gives it" : " of " + b.workload;
  if (b.min_runtime_s)
    s += ", when the step ran at least " + format_number("%g", *b.min_runtime_s) + " s";
  return s + (b.kind == BudgetKind::timing
                  ? " (timing: enforced on KVM and real machines, reported under TCG)"
                  : " (count: enforced everywhere)");
}

}  // namespace isolab
