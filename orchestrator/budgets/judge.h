// Judging a run's cells against the spec's budgets (spec/budgets.h): each budget on each CPU of
// each measured cell passes or is over, and the run gets one verdict, "within budget" or "over
// budget on CPU n by x us (or /s), cause: <interruption cause>" (docs/verdicts.md "Budgets").
//
// What is read from result.json (docs/RESULT_SCHEMA.md; through results/budget_facts.h), all
// of it untrusted guest output, so a value of the wrong shape makes its check "not judged" with
// the JSON pointer, never an abort:
//  - cells[] that are ok and not warm-ups; the others are not judged;
//  - a named metric: cells[].metrics["<workload>.<cell_metric>"] {"unit", "values", "cpus"?,
//    "window_s"? | "windows_s"?}, one check per value; unit "ns" is read as us / 1000; a value
//    of another unit than the budget's, or null, is not judged;
//  - a percentile "p<P>": cells[].histograms "<workload>[cpu<N>]" (oslat, CPU N) and
//    "<workload>" (cyclictest, its threads merged: no CPU). Nearest rank: with
//    n = sum(counts) + overflows and k = max(1, ceil(P/100 n)), the bucket holding the k-th
//    smallest sample; the value is that bucket's upper end (lower bound + bucket_ns / 1000 us),
//    a bound every sample of the bucket is strictly below, so "pass" is exact when the limit is
//    a bucket boundary. A k-th sample among the overflows (oslat's last bucket holds every
//    longer gap) is over, with the histogram's end as the value;
//  - the CPUs: the budget's cpus, else the cell's isolated CPUs (cells[].guest.isolated, a
//    cpulist), else every CPU the cell measured;
//  - the step's runtime for min_runtime_s: the metric's window_s (windows_s per CPU), else the
//    workload's trace window (cells[].noise.<workload>.window_s), else the import's window
//    (spec.imported.window_s), else the workload's duration_s in the spec; unknown: not judged;
//  - the cause of an over: the interruption cause (parse/trace.h noise_causes(), without the
//    total "interruptions") with the most events on that CPU in that cell's trace
//    (cells[].noise.<workload>.cpus[].causes.<cause>.count), among the causes that make up
//    "interruptions" (local_timer, ipi_reschedule, ipi_call_function, irq, vmstat_update,
//    workqueue_other; softirqs and timer callbacks run inside those); for a count budget of one
//    cause, that cause; "not traced" without a trace.
// Enforcement: a count budget always; a timing budget only on a cell whose accelerator is "kvm"
// or "bare-metal"; under "tcg" (or an unknown accelerator) it is reported, never enforced.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "spec/budgets.h"

namespace isolab {

enum class BudgetOutcome { pass, over, not_judged };

// One budget on one CPU (or one merged histogram) of one cell.
struct BudgetCheck {
  std::size_t budget = 0;  // index into the budgets judged
  std::string cell;        // cells[].id
  std::string variant;     // cells[].variant
  std::string workload;
  std::optional<int> cpu;       // nullopt: cyclictest's histogram of every thread
  std::optional<double> value;  // in the budget's unit; nullopt when not judged
  BudgetOutcome outcome = BudgetOutcome::not_judged;
  bool enforced = false;  // over sets the exit status only when enforced
  std::string cause;      // over: the cause with the most events, e.g. "local_timer (12)"
  std::string note;       // why not judged, why not enforced, "beyond the histogram"
};

struct BudgetVerdict {
  std::vector<BudgetSpec> budgets;
  std::vector<BudgetCheck> checks;
  std::size_t enforced_judged = 0;  // enforced checks that passed or were over
  bool over = false;                // some enforced check was over
  // One line when timing budgets were reported but not enforced (the cells ran under TCG);
  // "" otherwise.
  std::string not_enforced;
  // "within budget"; "over budget on CPU 3 by 40121 us (oslat_max_us of oslat in cell g-r0),
  // cause: local_timer (1001 events)" naming the largest excess of the worst budget; "no
  // enforced budget was judged" when nothing enforced could be judged.
  std::string verdict;
  // The same verdict over each variant's cells alone, in the order the cells name them.
  std::vector<std::pair<std::string, std::string>> variant_verdicts;
};

// Judges every budget on the run `result` (a result.json document). Throws isolab::Error only
// when `result` has no cells array.
BudgetVerdict judge_budgets(const std::vector<BudgetSpec>& budgets, const nlohmann::json& result);

// The budgets of a run's own spec (result["spec"]["budgets"], spec/budgets.h parse_budgets);
// empty when it has none. Throws SpecError with the pointer under /spec/budgets.
std::vector<BudgetSpec> budgets_of_run(const nlohmann::json& result);

// Exit status of a budget judgement (docs/verdicts.md "Budgets"): 4 when over, else 3 when no
// enforced check was judged (a nightly never reads 0 from budgets that could not fail), else 0.
int budget_exit_status(const BudgetVerdict& v);

// result.json "budgets": {"verdict", "over", "exit_status", "not_enforced", "variants": {variant:
// verdict}, "budgets": [{"metric", "workload", "below", "unit", "kind", "cpus", "min_runtime_s"}],
// "checks": [{"budget", "cell", "variant", "workload", "cpu", "value", "outcome":
// "pass"|"over"|"not judged", "enforced", "cause", "note"}]} (docs/RESULT_SCHEMA.md).
nlohmann::json to_json(const BudgetVerdict& v);

// Text: one line per budget with its checks summed up (passed, over with the worst CPU, not
// judged), the not_enforced line, then "budgets: <verdict>".
std::string budget_verdict_text(const BudgetVerdict& v);

}  // namespace isolab
