// The per-metric verdict rules: what decides a secondary row, and a primary row once the exit
// budget (compare/exit_status.h) has spent alpha. The tests they read: compare/metric_test.h.
//
// Margin of "no significant change" (equivalence by interval inclusion: Schuirmann 1987, "A
// comparison of the two one-sided tests procedure and the power approach for assessing the
// equivalence of average bioavailability", J. Pharmacokinet. Biopharm. 15(6):657-680, shows a
// 1 - 2 alpha interval inside the margin is the two one-sided tests at alpha; the
// confidence_level interval used here is stricter than that at alpha = 1 - confidence_level):
// timing and instructions: +-threshold (relative change); counts: +-max(floor,
// threshold x A's mean) in the metric's unit, the smallest change the regressed rule could act
// on (a change within the floor or within the relative threshold is never called). A metric is
// "no significant change" only when its interval lies inside the margin: with no power to see a
// change of the margin's size it is "inconclusive", and the reason names the largest change its
// interval does not exclude.
//
// Secondary metrics (every metric not declared primary). p is MetricTest::family_p when set
// (the Westfall-Young adjusted p over the comparison's secondary metrics, compare.h), else the
// metric's own two-sided p. In this order:
//  1. n_A < min_samples or n_B < min_samples                           -> inconclusive
//  2. range rule (MetricTest::range set and applying): its interval excludes 0 -> regressed /
//     improved beyond the threshold, else changed, below threshold; inside +-margin -> no
//     significant change; else inconclusive
//  3. the same value in every boot of both: not 0 -> no significant change; 0 (a count or
//     instruction count that never happened): inconclusive, since an effect present in fewer
//     than 1 - alpha^(1/n_B) of B's boots (45% at 5) would leave them all at 0 with
//     probability >= alpha
//  4. relative change undefined (timing: A median 0; instructions:
//     A mean 0)                                                        -> inconclusive
//  (instructions only: rule 8 is tried here, before rule 5: a deterministic count that jitters
//   by half an instruction between boots ties so that p cannot reach alpha at a few boots a
//   side, while its interval excludes every change of the margin's size)
//  5. the smallest p the test can reach with these values is >= alpha
//     (3 against 3 gives at best 0.1; one boot with one event among
//     zeros can never be significant)                                  -> inconclusive
//  6. p < alpha and the change beyond the threshold (counts: |B - A| >
//     floor and (A 0 in every boot or |relative change| > threshold))  -> improved / regressed
//     by "better"; a metric without a "better" direction               -> inconclusive
//  7. p < alpha, the change within the threshold                       -> changed, below threshold
//  8. the interval lies inside +-margin                                 -> no significant change
//  9. otherwise                                                         -> inconclusive
// Primary metrics (PrimaryMetric, declared in the spec or with --primary) are decided by the
// exit budget (compare/budget.h, MetricTest::family): the bad-direction one-sided test in the
// regression family, the good-direction one in the improvement family, each a discrete
// step-down at the budget's level. Rules 1-5 as above (2 with the range rule's bound as its
// share; 5: neither direction's smallest p can get below the step-down's level / K), then:
//  6. the bad-direction hypothesis rejected and the change beyond the threshold -> regressed
//  7. the good-direction hypothesis rejected and the change beyond the threshold -> improved
//  8. either rejected, the change within the threshold               -> changed, below threshold
//  9. the interval (one-sided bounds at 1 - level / K each) inside +-margin -> no significant
//  change
// 10. otherwise                                                        -> inconclusive
// The threshold of a primary metric is its threshold_pct when given, else the metric's.
#pragma once

#include <string>

#include "compare/metric_test.h"
#include "compare/verdict.h"
#include "spec/compare_settings.h"
#include "spec/primary.h"

namespace isolab {

// Every boot of both sides had one and the same value (rule 3 above); false when a side is empty.
bool same_value_in_every_boot(const MetricTest& t);

// Applies the secondary rules at the top of this file for t.kind with the given threshold
// (percent) and, for counts, the absolute floor count_floor (metric's unit).
VerdictResult decide_verdict(const MetricTest& t, Better better, double threshold_pct,
                             const CompareSettings& settings, double count_floor = 0);

// An amount of a count metric for reports and reasons, 3 significant digits: "0.98/s" for unit
// "1/s", "9" for unit "count" (or none), "3 events" for another unit.
std::string format_count_amount(double value, const std::string& unit);

// What the verdict needs to know about a metric besides its samples.
struct MetricInfo {
  std::string name;
  std::string unit;
  MetricKind kind = MetricKind::timing;
  Better better = Better::none;
  bool tcg = false;  // a contributing cell of either side ran under TCG
};

// The threshold of a metric without its samples, percent: threshold_pct_for(name), raised to
// tcg_timing_threshold_pct for a timing metric with info.tcg; for an instruction metric
// max(own_threshold_pct(name) or 0, instructions_threshold_pct). *tcg_applied (when given)
// says whether the TCG threshold is the one in force.
double effective_threshold_pct(const MetricInfo& info, const CompareSettings& settings,
                               bool* tcg_applied = nullptr);

// The threshold of the verdict rules, percent: effective_threshold_pct, fixed before the run (no
// part of it comes from t). *why (when given) is "" for the configured threshold, else a clause
// naming what set it, for reasons.
double metric_threshold_pct(const MetricTest& t, const MetricInfo& info,
                            const CompareSettings& settings, std::string* why = nullptr);

// The secondary verdict compare and calibrate both use: decide_verdict with
// metric_threshold_pct and count_floor_for(info.unit); the reason says when the TCG or the
// instruction threshold is in force.
VerdictResult decide_metric_verdict(const MetricTest& t, const MetricInfo& info,
                                    const CompareSettings& settings);

// The primary verdict (rules at the top of this file) of a metric declared by `primary`;
// t.one_sided must be set (else the verdict is inconclusive). The threshold is
// primary.threshold_pct when given, else metric_threshold_pct.
VerdictResult decide_primary_verdict(const MetricTest& t, const MetricInfo& info,
                                     const PrimaryMetric& primary, const CompareSettings& settings);

}  // namespace isolab
