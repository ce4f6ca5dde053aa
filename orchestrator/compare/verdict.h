// Comparison settings and the per-metric verdict rules.
//
// Three kinds of metric (MetricKind), each with its test, interval and threshold:
//  - timing: latencies, cycles, bogo ops/s: continuous, integer-valued in places (cyclictest
//    latencies in whole us, so ties), and under TCG they vary 2-26% between boots of the same
//    kernel (docs/sources.md [o7], docs/measurements.md). Test: the exact conditional (midrank)
//    permutation test of Wilcoxon-Mann-Whitney (stats.h stratified_permutation_test with
//    StratumScore::midranks, one stratum per host): its null distribution is enumerated with the
//    observed ties, so A={12,13,13,14,15} against B={14,15,15,16,16} gets p = 14/252 = 0.056, not
//    the normal approximation's 0.043, and 5 against 5 never gets below 2/252. Interval: the
//    inverted test on the scale of ratios (relative change). Threshold: max(threshold_pct_for, and
//    when a contributing cell of either side ran under TCG, tcg_timing_threshold_pct).
//  - count: per-CPU events on the isolated CPUs (vmstat_update runs, ticks, IPIs, IRQs) as
//    events per second or per boot: many ties, often 0 in every boot. Test: the exact
//    permutation test of the difference of per-boot means (stats.h permutation_test_mean).
//    Interval: the inverted test as a shift (B - A, in the metric's unit). Threshold:
//    threshold_pct_for (relative change of means) and the absolute floor count_floor_for(unit)
//    (0.1 events/s per CPU, 1 event): a significant but negligible difference does not move the
//    verdict. No TCG threshold: an event count does not scale with emulation speed.
//  - instructions: guest instruction counts per operation or per second, counted by a QEMU
//    plugin; they do not follow the host's load, so a change of a few percent is real even
//    under TCG. Test: as counts (permutation test of means). Relative change of means as for
//    counts: from 0 in every A boot to more in B is +infinity, beyond any threshold (a CPU
//    that executed no kernel instruction now does), not undefined.
//    Interval: the inverted test on the scale of ratios. Threshold: the metric's own
//    configured threshold (a thresholds_pct entry, a noise floor, the calibration's noise
//    floor; threshold_pct, the default for every metric, is not consulted) and at least
//    instructions_threshold_pct (default 1%). Never from the boots judged: one A boot on
//    another path (the RCU-bypass boot, 13704 against 14163) does not widen the margin. With a
//    calibrated jitter (CompareSettings::calibrated) the range rule (compare/range_rule.h)
//    decides while every boot of each side lies within it.
// Every test is exact (enumerated) up to count_exact_limit reassignments and Monte Carlo
// (seeded, Phipson-Smyth) beyond; no normal approximation decides a verdict. Intervals are the
// inverted permutation test (stats.h permutation_interval) at confidence_level: exact coverage
// at 5 boots a side, where the percentile bootstrap covers about 90% at a nominal 95%. A timing
// or instruction metric with a value <= 0 gets the shift interval divided by A's median (timing)
// or mean (instructions).
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

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compare/permutation.h"
#include "compare/range_rule.h"
#include "compare/stats.h"
#include "spec/compare_settings.h"
#include "spec/primary.h"

namespace isolab {

enum class Better { lower, higher, none };

// "lower" / "higher"; anything else (absent, "none") is Better::none.
Better better_from_string(const std::string& s);
const char* better_name(Better b);  // "lower", "higher", "none"

enum class Verdict { improved, regressed, changed_below, no_change, inconclusive };

enum class MetricKind { timing, count, instructions };

// "timing" / "count" / "instructions".
const char* metric_kind_name(MetricKind k);

// The kind of a metric from its result.json fields: count when kind is "count", instructions
// when it is "instructions", count when kind is empty (absent) and unit is "count" or "1/s";
// timing otherwise.
MetricKind metric_kind_of(const std::string& kind, const std::string& unit);

// "improved", "regressed", "changed, below threshold", "no significant change",
// "inconclusive".
const char* verdict_name(Verdict v);

nlohmann::json settings_to_json(const CompareSettings& s);

// The statistics of a count or instruction metric (means are per-boot means, in its unit).
struct CountTest {
  double mean_a = 0;
  double mean_b = 0;
  double diff = 0;                            // mean_b - mean_a
  std::optional<ConfidenceInterval> diff_ci;  // count: of diff, finite ends only; else nullopt
  double relative_change = 0;                 // count_relative_change(mean_a, mean_b)
  bool all_zero = false;                      // every value of both sides is 0
  PermutationMeanResult permutation;
};

// What the exit budget (compare/budget.h) decided for a primary metric.
struct PrimaryFamily {
  double level = 0.05;      // the step-down's level (alpha minus the range rule's share)
  std::size_t k = 1;        // K of the regression family's first step
  double adjusted_bad = 1;  // step-down p of the bad-direction hypothesis
  bool rejected_bad = false;
  double adjusted_good = 1;  // of the good-direction hypothesis (improvement family)
  bool rejected_good = false;
  bool reachable = false;  // either direction's smallest p can get below level / K
  double p_min = 1;        // the smallest one-sided p of the bad direction
};

// The statistics of one metric for samples a (variant A cells) and b (variant B cells).
struct MetricTest {
  MetricKind kind = MetricKind::timing;
  SampleStats a;
  SampleStats b;
  // timing: relative change of medians; count and instructions: relative change of means
  // (+inf for a count going from 0 to > 0). Fraction; NaN when undefined.
  double change = 0;
  // The interval of the change from the inverted test (see the top of this file): fraction for
  // timing and instructions, the metric's unit (B - A) for counts. An end is -inf/+inf when
  // these boots cannot bound it. nullopt when not computed or undefined.
  std::optional<ConfidenceInterval> interval;
  std::optional<ConfidenceInterval> ci;  // timing, instructions: `interval` when both ends finite
  bool ci_requested = false;             // test_metric was asked for the interval
  // Timing: the exact conditional midrank permutation test of the pooled cells (two-sided), the
  // test of the verdict when the cells come from one host.
  std::optional<StratifiedResult> rank;
  MannWhitneyResult mann_whitney;       // timing, informational (its table ignores ties)
  std::optional<double> permutation_p;  // timing, informational; nullopt when resamples == 0
  std::optional<CountTest> count;       // count and instructions
  // Cells from several hosts: the stratified test (stats.h stratified_permutation_test; values
  // for counts and instructions, van Elteren midranks for timings). When set it replaces the
  // pooled test's p and smallest attainable p in the verdict rules; the sample statistics,
  // change and interval above are those of the pooled cells (the interval over the strata).
  std::optional<StratifiedResult> stratified;
  // Primary metrics: the one-sided tests in the bad and the good direction (add_one_sided_test).
  std::optional<StratifiedResult> one_sided;
  std::optional<StratifiedResult> good_sided;
  bool one_sided_ranks = false;  // those tests scored midranks (timings, or a "ranks" primary)
  // The range rule, when the metric has a calibrated jitter and compare lets it decide.
  std::optional<RangeRule> range;
  // Primary metrics: the exit budget's decisions (set by apply_exit_budget).
  std::optional<PrimaryFamily> family;
  // Set by compare_runs: the exit budget's step-down p of the bad direction (primary; the good
  // direction's is family->adjusted_good) or the Westfall-Young adjusted p (secondary). The
  // verdict rules use it in place of the metric's own p.
  std::optional<double> family_p;

  // The metric's own two-sided p: the stratified p when set, else the permutation test of means
  // (count, instructions), else the midrank test (timing).
  double p_value() const;
  bool p_exact() const;
  // The smallest p that test can reach with these values (two-sided).
  double min_p() const;
};

// Every boot of both sides had one and the same value (rule 3 above); false when a side is empty.
bool same_value_in_every_boot(const MetricTest& t);

// test_metric on the pooled cells of all strata, plus `stratified` (always set, also for one
// stratum) from stratified_permutation_test with the settings' count_exact_limit,
// count_resamples and seed, and the interval over the strata.
MetricTest test_metric_stratified(const std::vector<Stratum>& strata,
                                  const CompareSettings& settings, bool with_ci, MetricKind kind);

// Computes MetricTest with the settings' permutation parameters and seed, by kind. When with_ci
// is false the interval is not computed (calibration, and exit_status_only comparisons).
MetricTest test_metric(std::span<const double> a, std::span<const double> b,
                       const CompareSettings& settings, bool with_ci = true,
                       MetricKind kind = MetricKind::timing);

// Sets t.one_sided: the stratified permutation test (midranks for timings or when `ranks`,
// values otherwise) with Alternative::greater when higher_is_bad, else less, over the strata (one
// for a single host), with the settings' count_exact_limit, count_resamples and seed; and
// t.good_sided, the same in the other direction. `ranks` (a primary's "test": "ranks") also
// makes an instruction metric's t.change the relative change of the medians, as for timings.
void add_one_sided_test(MetricTest& t, const std::vector<Stratum>& strata, bool higher_is_bad,
                        const CompareSettings& settings, bool ranks = false);

// Sets t.interval (and t.ci, count diff_ci) as test_metric does, at `confidence` instead of the
// settings' confidence_level (a primary's one-sided bounds at 1 - level / K each:
// confidence 1 - 2 level / K). Clears them first; leaves them unset for confidence outside
// (0, 1).
void set_interval(MetricTest& t, const std::vector<Stratum>& strata,
                  const CompareSettings& settings, double confidence);

struct VerdictResult {
  Verdict verdict = Verdict::inconclusive;
  std::string reason;  // one line saying which rule decided, with the numbers
  double threshold_pct = 0;
  // The margin of "no significant change" and the largest change the interval does not exclude
  // (+inf when unbounded, NaN without an interval): percent of A for timing and instructions,
  // the metric's unit for counts (margin_relative says which).
  double margin = 0;
  bool margin_relative = true;
  double cannot_exclude = std::numeric_limits<double>::quiet_NaN();
};

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
