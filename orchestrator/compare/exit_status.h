// What compare's exit status rests on, and its contract: the one place both are written
// (docs/verdicts.md and the command's --help point here).
//
// What decides the exit status (compare_exit_status), and nothing else: one alpha budget over
// every channel that can set it (compare/budget.h; docs/verdicts.md "What the exit status rests
// on"):
//  - the declared primary metrics (CompareSettings::primary, verdict.h): each tested one-sided
//    in its bad direction with an exact test; "regressed" only when rejected by the budget's
//    step-down and beyond its threshold; with a calibrated jitter, the range rule
//    (stats/range_rule.h) decides while the boots agree within it, on its declared share;
//  - kernel-correctness failure classes (build, boot, boot_timeout, panic, oops, warning,
//    rcu_stall, lockup), each as B's rate against A's over every cell of each side (warm-ups
//    included), one-sided Fisher exact test;
//  - isolation-gate checks, each as B's failure rate against A's, one-sided Fisher exact test;
//  - retried boots (infrastructure failures booted again, cells[].earlier_attempts) per boot,
//    one-sided exact permutation test;
//  - new build warnings of B in files B's series touches (not sampled: no share).
//
//
// Exit status contract of the compare command (compare_exit_status):
//   1 something counted against B (a primary regressed, a failure class, gate check or the retry
//     rate rejected by the step-down, a new build warning in a touched file);
//   3 primary metrics are declared, nothing is counted against B, and none of them could have
//     reached alpha with these boots (ExitBudget::unreachable_primaries names them);
// (4 is not compare's: it is the budgets' "over budget", budgets/judge.h budget_exit_status,
// which `isolab run` combines with this status as docs/verdicts.md "Budgets" says.)
#pragma once

#include "compare/comparison.h"

namespace isolab {

// Fills c.budget from the comparison's rows (primary tests, failures, gate, retries): runs the
// step-down (stats/step_down.h) of both families, sets the primary rows' MetricTest::family,
// family_p and interval level, and FailureRow / GateSummaryRow / RetryRow against_b. Called by
// compare_runs after every row is tested and before the verdicts.
void apply_exit_budget(Comparison& c);

// 1 when comparison.regressions() > 0; else 3 when budget.no_primary_reachable; else 0.
int compare_exit_status(const Comparison& c);

}  // namespace isolab
