// The statistical test of one metric row, by its kind (the verdict rules that read it:
// compare/verdict_rules.h).
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
//    calibrated jitter (CompareSettings::calibrated) the range rule (stats/range_rule.h)
//    decides while every boot of each side lies within it.
// Every test is exact (enumerated) up to count_exact_limit reassignments and Monte Carlo
// (seeded, Phipson-Smyth) beyond; no normal approximation decides a verdict. Intervals are the
// inverted permutation test (stats.h permutation_interval) at confidence_level: exact coverage
// at 5 boots a side, where the percentile bootstrap covers about 90% at a nominal 95%. A timing
// or instruction metric with a value <= 0 gets the shift interval divided by A's median (timing)
// or mean (instructions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "compare/verdict.h"
#include "spec/compare_settings.h"
#include "stats/permutation.h"
#include "stats/range_rule.h"
#include "stats/sample.h"

namespace isolab {

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

// The primary rule's test, written here once (its power before a run: compare/power.h; its
// minimum detectable effect after an A/A run: calibrate/calibrate_stats.h primary_rule_p): the
// one-sided exact permutation test of the per-boot values over the strata (one per host),
// B above A when `greater`, else below; scored by midranks for a timing metric or a "ranks"
// primary, by the values otherwise (stats/permutation.h stratified_permutation_test: exact up to
// exact_limit reassignments, else `resamples` seeded ones).
StratumScore primary_score(MetricKind kind, bool ranks);
StratifiedResult primary_one_sided_test(const std::vector<Stratum>& strata, StratumScore score,
                                        bool greater, std::uint64_t exact_limit,
                                        std::size_t resamples, std::uint64_t seed);

// Sets t.one_sided: primary_one_sided_test in the bad direction (greater when higher_is_bad),
// with the settings' count_exact_limit, count_resamples and seed; and t.good_sided, the same in
// the other direction. `ranks` (a primary's "test": "ranks") also
// makes an instruction metric's t.change the relative change of the medians, as for timings.
void add_one_sided_test(MetricTest& t, const std::vector<Stratum>& strata, bool higher_is_bad,
                        const CompareSettings& settings, bool ranks = false);

// Sets t.interval (and t.ci, count diff_ci) as test_metric does, at `confidence` instead of the
// settings' confidence_level (a primary's one-sided bounds at 1 - level / K each:
// confidence 1 - 2 level / K). Clears them first; leaves them unset for confidence outside
// (0, 1).
void set_interval(MetricTest& t, const std::vector<Stratum>& strata,
                  const CompareSettings& settings, double confidence);

}  // namespace isolab
