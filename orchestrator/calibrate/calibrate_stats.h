// The statistics of an A/A calibration (calibrate/calibrate.h): tests of a metric's values against
// boot order, the multiple-testing correction that names drifting metrics, the spread within
// and between runs, the minimum detectable effect and the binomial interval of a false-alarm
// rate. Every function is pure; randomness comes from a seeded std::mt19937_64 with the unbiased
// draws of stats/rng.h, so results repeat on every platform.
//
// Boot order: the order in which the boots (cells) of a run ran. A stratum is the boots of one
// variant in boot order; permutations are taken within strata only, so a level difference
// between variants never reads as a trend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "compare/metric_test.h"
#include "compare/verdict.h"
#include "stats/multiplicity.h"  // holm_adjust
#include "stats/permutation.h"
#include "stats/sample.h"

namespace isolab {

// Mann-Kendall S of values in boot order: sum over pairs i < j of sign(x_j - x_i) (ties give
// 0). Mann (1945), "Nonparametric tests against trend", Econometrica 13, 245-259; Kendall,
// "Rank Correlation Methods" (Kendall & Gibbons, 5th ed. 1990, ch. 1). {1,2,3,4} gives 6,
// {1,3,2,4} gives 4.
double mann_kendall_s(std::span<const double> values);

// One variant's boots of a metric, in boot order. first_half[i]: boot i ran in the first half
// of the run (its position among all the run's cells < cells / 2), parallel to values.
struct DriftStratum {
  std::vector<double> values;
  std::vector<bool> first_half;
};

// One test's result: the observed statistic and its two-sided permutation p.
struct PermutationTestResult {
  double statistic = 0;
  double p = 1;
};

// The tests a drifting or stepping host fails, on the same permutations:
//  - trend: the seasonal Mann-Kendall test, S = sum over strata of mann_kendall_s (Hirsch,
//    Slack & Smith 1982, "Techniques of trend analysis for monthly water quality data", Water
//    Resources Research 18(1), 107-121: the strata are the seasons there, the variants here);
//    statistic |S|; tau = S / sum_h n_h (n_h - 1) / 2 (Kendall's tau-a against boot order).
//  - odd_even: boots 1, 3, 5, ... of each stratum against boots 2, 4, 6, ...;
//  - halves: a stratum's boots in the run's first half against those in its second half.
//  The splits use the statistic of stratified_permutation_test (stats.h): |sum_h c_h (S_h -
//  n_a,h total_h / N_h)| over scores = values (counts) or within-stratum midranks with
//  c_h = 1 / (N_h + 1) (timings); a stratum with one side empty adds nothing.
//  - combined: the exact min-p combination of the three (Westfall & Young 1993, "Resampling-
//    Based Multiple Testing", ch. 2): p = share of permutations whose smallest p over the three
//    tests is <= the observed smallest; the one p per metric that enters the Holm correction.
// Null: every within-stratum reordering of the values is equally likely. All prod_h n_h!
// reorderings are enumerated when there are at most exact_limit (exact: true); otherwise the
// observed order plus `resamples` random ones (within-stratum Fisher-Yates, seeded) form the
// reference set and p = (1 + hits) / (1 + resamples) (Phipson & Smyth 2010). A statistic
// counts as >= the observed within a relative tolerance of 1e-9. 5 + 4 boots fully ordered:
// trend p = 2 / (5! 4!) = 0.000694. testable is false when every stratum is constant (then
// every p is 1). Values must be finite.
struct DriftTests {
  PermutationTestResult trend;
  double kendall_tau = 0;  // NaN when no stratum has two boots
  PermutationTestResult odd_even;
  PermutationTestResult halves;
  double combined_p = 1;
  bool exact = true;
  std::uint64_t permutations = 0;  // the reference set's size
  bool testable = false;
};
DriftTests drift_tests(const std::vector<DriftStratum>& strata, MetricKind kind,
                       std::uint64_t exact_limit = 500000, std::size_t resamples = 20000,
                       std::uint64_t seed = 1);

// Two-sided Clopper-Pearson interval of a binomial proportion k / n (Clopper & Pearson 1934,
// "The use of confidence or fiducial limits illustrated in the case of the binomial",
// Biometrika 26, 404-413): low = Beta quantile (1 - level) / 2 with (k, n - k + 1), 0 when
// k = 0; high = Beta quantile (1 + level) / 2 with (k + 1, n - k), 1 when k = n (Boost.Math).
// 0 of 10 at 95%: [0, 0.3085]; 5 of 10: [0.1871, 0.8129]. Throws isolab::Error when n == 0,
// k > n or level is not in (0, 1).
struct BinomialInterval {
  double low = 0;
  double high = 1;
  double level = 0.95;
};
BinomialInterval clopper_pearson(std::size_t k, std::size_t n, double level = 0.95);

// The spread of a metric's boots within one run, pooled over its strata (variants) so that a
// level difference between variants does not count: N boots in H non-empty strata, x_hi the
// i-th boot of stratum h, mean_h its mean. NaN where undefined (N - H < 1, grand mean 0).
struct WithinRunSpread {
  std::size_t n = 0;      // N
  double mean = 0;        // grand mean over the N boots
  double within_sd = 0;   // sqrt(sum_h sum_i (x_hi - mean_h)^2 / (N - H))
  double cv = 0;          // within_sd / |mean|
  double dispersion = 0;  // within_sd^2 / mean, the index of dispersion: 1 for Poisson counts
                          // per boot; for a rate in 1/s it scales with 1 / the measured window
};
WithinRunSpread within_run_spread(const std::vector<std::vector<double>>& strata);

// The one-way random-effects variance split of a metric over K runs (groups = runs, each the
// run's boots after removing its strata's level differences; N boots, n_k in run k of mean m_k,
// grand mean m): ANOVA (method of moments) estimators for unbalanced groups (Searle, Casella &
// McCulloch 1992, "Variance Components", sec. 3.5) with MSB = sum_k n_k (m_k - m)^2 / (K - 1),
// MSW = sum_k sum_i (x_ki - m_k)^2 / (N - K), n0 = (N - sum_k n_k^2 / N) / (K - 1) and
// between_var = max(0, (MSB - MSW) / n0). NaN where undefined (K < 2, N - K < 1, mean 0).
struct BetweenRunSpread {
  std::vector<double> run_means;  // m_k, one per non-empty run, in order
  double means_cv = 0;            // sd(m_k) / |mean of m_k|, the spread of the run means
  double within_sd = 0;           // sqrt(MSW)
  double between_sd = 0;          // sqrt(between_var)
  double icc = 0;                 // between_var / (between_var + MSW)
};
BetweenRunSpread between_run_spread(const std::vector<std::vector<double>>& runs);

// Compare's primary rule, as the MDE simulation applies it: compare/metric_test.h
// primary_one_sided_test of B above A on one stratum (enumerated up to 20000 splits, else 1000
// seeded ones), rejected below `level` (the budget's step-down level alpha / m, m the declared
// primaries), and a change beyond `threshold_pct` (relative change of medians for timings, of
// means otherwise) and, for counts, the floor.
struct DetectionRule {
  double level = 0.05;
  double threshold_pct = 0;
  double floor = 0;  // counts: |mean_B - mean_A| must exceed it
};

// The one-sided exact p of that rule's test. A = {1,1,1,2,2}, B = {2,2,2,3,3}: 10/252 =
// 0.0397 (the exact two-sided p is 0.079, where the normal approximation with ties gave 0.041).
double primary_rule_p(std::span<const double> a, std::span<const double> b, MetricKind kind);

// The smallest effect compare's primary rule detects with power `power` with per_side boots on
// each side, estimated by simulation: each replicate draws A and B from the A/A values (without
// replacement when 2 * per_side <= values.size(), else with replacement), adds delta *
// mean(values) to B, and counts a detection when `rule` calls it (above). The draws are fixed
// for every delta (common random numbers, seeded). delta runs over 1, 2, 3, 5, 7, 10, 15, 20,
// 30, 50, 70, 100, 150, 200, 300, 500 percent until power is reached, then is bisected 6 times
// between the last two grid points. reached is false (delta NaN) when 500% is not enough (3 boots
// per side: the smallest one-sided p is 0.05), when the mean is 0, or when per_side < 2.
struct MinimumDetectableEffect {
  double delta_pct = 0;  // of the mean
  double delta = 0;      // in the metric's unit
  double power = 0;      // simulated power at delta_pct
  std::size_t per_side = 0;
  std::size_t replicates = 0;
  bool reached = false;
};
MinimumDetectableEffect minimum_detectable_effect(std::span<const double> values,
                                                  std::size_t per_side, MetricKind kind,
                                                  const DetectionRule& rule, double power = 0.8,
                                                  std::size_t replicates = 200,
                                                  std::uint64_t seed = 1);

}  // namespace isolab
