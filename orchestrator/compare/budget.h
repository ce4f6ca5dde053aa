// The one alpha budget of compare's exit status (docs/verdicts.md, "What the exit status rests
// on"): every channel that can set exit status 1 is a hypothesis of one family, tested one-sided
// (B worse than A) with an exact test, and the family is controlled by a step-down that knows the
// tests are discrete; the range rule's rows (stats/range_rule.h) take a fixed share declared
// up front.
//
// Channels and their tests (the rows below; compare/exit_status.h states the exit status
// they decide):
//  - primary metrics: the one-sided exact permutation test in the bad direction
//    (MetricTest::one_sided), p_min its smallest attainable p given the pooled values;
//  - kernel failure classes: one-sided Fisher exact test of B's rate against A's over every cell
//    of each side (warm-ups too), p_min the Fisher p of the most extreme table with the same
//    number of events (fisher_min_p);
//  - isolation-gate checks: the same over the boots that ran the check;
//  - retried boots: the one-sided exact permutation test of the per-boot number of
//    infrastructure failures (earlier_attempts, plus one for a boot that failed as
//    infrastructure), every cell of each side;
//  - new build warnings in touched files: not sampled (a build is deterministic), no share.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "compare/variant_data.h"

namespace isolab {

// The class a kernel failure is weighed under: its failure_class, except "boot_timeout" for a
// boot failure whose reason names a VM timeout (boot_timeout, silence_timeout, wall_timeout:
// the guest never reached init in time, which an overloaded host can cause); "" for a cell that
// is not a kernel failure.
std::string failure_weight_class(const CellRecord& cell);

// The kernel-failure classes of one comparison: how many cells of each side had it, its rate
// test, and whether it counts against B (the budget's step-down).
struct FailureRow {
  std::string failure_class;             // failure_weight_class
  std::size_t a_cells = 0, a_total = 0;  // cells with the class / all cells of the variant
  std::size_t b_cells = 0, b_total = 0;
  double p = 1;      // one-sided Fisher exact p (B's rate above A's)
  double p_min = 1;  // the smallest p the margins allow (stats/step_down.h fisher_min_p)
  bool against_b = false;
  // "B 1 of 5 boots, A 0 of 5 boots; one-sided Fisher p = 0.5 (smallest possible 0.5)", and
  // after the budget ": counted against B (step-down p = ...)" or ": not counted against B".
  std::string reason;
};

// The kernel failures of both sides as rates (rules at the top of this file), against_b left
// to apply_exit_budget. Rows in the order build, boot, boot_timeout, panic, oops, warning,
// rcu_stall, lockup; only classes some cell had.
std::vector<FailureRow> weigh_failures(const std::vector<CellRecord>& a,
                                       const std::vector<CellRecord>& b);

// Infrastructure failures per boot (the retry channel): per cell of each side, the number of
// its boots that failed as infrastructure and were booted again (cells[].earlier_attempts whose
// failure_class is "infrastructure", and 1 for a cell that ended failed as infrastructure).
struct RetryRow {
  std::size_t a_cells = 0, b_cells = 0;      // cells of each side
  std::size_t a_retries = 0, b_retries = 0;  // infrastructure failures of each side
  double p = 1, p_min = 1;                   // one-sided exact permutation test, B more
  bool against_b = false;                    // rejected in the budget's step-down
  std::string reason;  // "B 3 in 5 boots, A 0 in 5 boots; one-sided exact p = 0.083"
};

// The retry channel of both sides' cells (RetryRow above); against_b left to the budget.
RetryRow weigh_retries(const std::vector<CellRecord>& a, const std::vector<CellRecord>& b);

// The isolation gate per check: in how many (non-warm-up) cells of each variant it passed,
// out of the cells that ran it. From cells[].gate.rows of result.json.
struct GateSummaryRow {
  std::string check;
  std::size_t a_pass = 0, a_total = 0;
  std::size_t b_pass = 0, b_total = 0;
  double p = 1;            // one-sided Fisher exact p that B fails it more often than A
  double p_min = 1;        // the smallest p the margins allow
  bool against_b = false;  // rejected by the budget's step-down
  std::string reason;      // "" when B never failed it
};

// Sets p, p_min and reason of each row (against_b false: the budget sets it).
void weigh_gate(std::vector<GateSummaryRow>& rows);

// One hypothesis of the exit family.
struct BudgetEntry {
  std::string channel;  // "primary", "kernel failure", "gate", "retried boots"
  std::string name;     // the row, the failure class, the gate check, "" for the retries
  double p = 1, p_min = 1;
  double adjusted = 1;  // step-down p (DiscreteStepDown::adjusted)
  std::size_t k = 0;
  bool rejected = false;
  bool reachable = false;
};

// A primary row decided by the range rule: its declared share of alpha.
struct RangeShare {
  std::string row;
  double bound = 0;      // range_rule_bound at the row's boots
  bool applied = false;  // every boot of each side lay within the jitter
};

// The budget of one comparison.
struct ExitBudget {
  double alpha = 0.05;               // CompareSettings::alpha
  double range_share = 0;            // sum of ranges[].bound
  double level = 0.05;               // alpha - range_share: the step-down's level (>= 0)
  std::size_t first_k = 1;           // K_1 of the regression family
  std::size_t improve_first_k = 1;   // K_1 of the primaries' good-direction family
  std::vector<BudgetEntry> entries;  // the regression family, in channel order
  std::vector<RangeShare> ranges;
  // Declared primaries none of which could reach the level (no range rule either): exit 3.
  std::vector<std::string> unreachable_primaries;
  bool no_primary_reachable = false;
};

}  // namespace isolab
