// The one alpha budget of compare's exit status (docs/verdicts.md, "What the exit status rests
// on"): every channel that can set exit status 1 is a hypothesis of one family, tested one-sided
// (B worse than A) with an exact test, and the family is controlled by a step-down that knows the
// tests are discrete; the range rule's rows (compare/range_rule.h) take a fixed share declared
// up front.
//
// Channels and their tests (compare/compare.h for the rows):
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
#include <span>
#include <string>
#include <vector>

namespace isolab {

struct Comparison;

// The discrete step-down of Tarone (1990, "A modified Bonferroni method for discrete data",
// Biometrics 46:703-707) in the step-down form of Hommel & Krummenauer (1998, "Improvements and
// modifications of Tarone's multiple test procedure for discrete data", Biometrics 54:673-681):
// the hypotheses sorted by p (ties by p_min, then input order); at step j, over the hypotheses
// not yet rejected R_j, K_j is the smallest K >= 1 with #{i in R_j : p_min_i * K < level} <= K;
// the j-th smallest p is rejected when p * K_j < level, else the procedure stops. A hypothesis
// whose p_min cannot get below level / K takes no share of the level. Strong family-wise control
// at `level` (closed testing with Tarone's local tests, whose K can only grow with the set),
// conditionally on the p_min, which the exact tests take from the pooled values.
//   adjusted: max over steps k <= j of min(1, K_k p_(k)) (NaN-free; 1 for hypotheses after the
//   stop that could not be adjusted further is still that running maximum), so that
//   rejected == (adjusted < level);
//   first_k: K_1, the step-down's first K; reachable: p_min * K_1 < level.
// p and p_min must have the same length (else isolab::Error), values in [0, 1], p >= p_min.
struct DiscreteStepDown {
  std::vector<bool> rejected;
  std::vector<double> adjusted;
  std::vector<std::size_t> k;  // K at the hypothesis's step; 0 after the stop
  std::vector<bool> reachable;
  std::size_t first_k = 1;
};
DiscreteStepDown discrete_step_down(std::span<const double> p, std::span<const double> p_min,
                                    double level);

// The smallest one-sided Fisher p (multiplicity.h fisher_exact_greater) the margins allow: with
// k = a_events + b_events events, the table with min(k, b_total) of them in B.
double fisher_min_p(std::size_t a_events, std::size_t a_total, std::size_t b_events,
                    std::size_t b_total);

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

// Fills c.budget from the comparison's rows (primary tests, failures, gate, retries): runs the
// step-down of both families, sets the primary rows' MetricTest::family, family_p and
// interval level, and FailureRow / GateSummaryRow / RetryRow against_b. Called by compare_runs
// after every row is tested and before the verdicts.
void apply_exit_budget(Comparison& c);

}  // namespace isolab
