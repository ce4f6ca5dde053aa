// The spec's `budgets`: absolute limits a kernel must stay strictly below on the isolated CPUs,
// such as "oslat max < 20 µs" or "vmstat_update runs < 0.1 per second", judged per cell and
// per CPU by budgets/judge.h (docs/spec.md "budgets", docs/verdicts.md "Budgets").
//
// A budget is {"workload"?, "metric", "below", "cpus"?, "min_runtime_s"?}. Its metric is one of
// the table budget_metrics() lists, or a tail percentile "p<P>" (0 < P < 100, e.g. "p99.999")
// of the workload's latency histogram (cyclictest's `<workload>`, oslat's `<workload>[cpu<N>]`).
// Two kinds: a timing budget (µs) is enforced only where the guest ran on KVM or a real
// machine (a TCG guest's timings follow the host's load: reported, never enforced); a count
// budget (events per second on one CPU, from the step's trace) is enforced everywhere.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace isolab {

enum class BudgetKind { timing, count };

// One row of the metric table: the name a budget gives, the name under the workload in a
// cell's metrics (`<workload>.<cell_metric>`), its kind and unit ("us" or "1/s"), and what it
// measures.
struct BudgetMetric {
  const char* name;
  const char* cell_metric;
  BudgetKind kind;
  const char* unit;
  const char* meaning;
};

// Every named budget metric: oslat_max_us, oslat_avg_us (oslat, per CPU); latency_max_us,
// latency_avg_us (cyclictest, per thread's CPU); longest_us (the longest interruption in the
// step's trace, per CPU); and <cause>_per_s for every interruption cause of the trace
// (parse/trace.h noise_causes(): vmstat_update, workqueue_other, local_timer (the tick),
// ipi_reschedule, ipi_call_function, irq, softirq, timer_callbacks) and interruptions_per_s.
const std::vector<BudgetMetric>& budget_metrics();

// "oslat_max_us, oslat_avg_us, ..., p<P>": the names an error lists.
std::string budget_metric_names();

struct BudgetSpec {
  std::string pointer;               // "/budgets/<i>", for the messages that judge it
  std::string workload;              // "" = every workload that gives the metric
  std::string metric;                // as given: "oslat_max_us", "p99.999", "vmstat_update_per_s"
  std::string cell_metric;           // "oslat_max_us", "noise.vmstat_update_per_s"; "" for "p<P>"
  std::optional<double> percentile;  // P of "p<P>"
  BudgetKind kind = BudgetKind::timing;
  std::string unit;                     // "us" (timing) or "1/s" (count)
  double below = 0;                     // the value must be strictly below this, in unit
  std::string cpus;                     // cpulist as given; "" = the CPUs the workload measured
  std::optional<double> min_runtime_s;  // judged only when the step's window is at least this
};

// Reads the array `budgets` at `pointer` ("/budgets"). Throws SpecError naming the field's
// pointer: not an array (or more than 64 budgets), an unknown field, a missing or unknown
// metric ("/budgets/1/metric: unknown metric \"x\"; one of ..."), a percentile outside (0, 100),
// a `below` that is not a finite number > 0, a `cpus` that is not a valid cpulist
// (cmdline/cpulist.h, the bad token named), a min_runtime_s that is not a finite number >= 0.
std::vector<BudgetSpec> parse_budgets(const nlohmann::json& budgets, const std::string& pointer);

// One line per budget for the dry run and the verdicts: "oslat max < 20 us on CPUs 2-3 of
// oslat (timing: enforced on KVM and real machines, reported under TCG)".
std::string budget_text(const BudgetSpec& b);

}  // namespace isolab
