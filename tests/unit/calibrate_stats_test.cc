// The statistics of an A/A calibration on examples small enough to compute by hand.
#include "calibrate/calibrate_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "base/error.h"

namespace isolab {
namespace {

DriftStratum stratum(std::vector<double> v, std::vector<bool> first_half = {}) {
  if (first_half.empty()) first_half.assign(v.size(), false);
  return {std::move(v), std::move(first_half)};
}

TEST(MannKendall, CountsConcordantMinusDiscordantPairs) {
  EXPECT_EQ(mann_kendall_s(std::vector<double>{1, 2, 3, 4}), 6);
  EXPECT_EQ(mann_kendall_s(std::vector<double>{1, 3, 2, 4}), 4);
  EXPECT_EQ(mann_kendall_s(std::vector<double>{4, 0, 4, 0}), -2);  // ties count 0
}

TEST(DriftTests, TrendExactPOfFourBoots) {
  // S of a random order of 4 distinct values: the Mahonian counts 1,3,5,6,5,3,1 of 0..6
  // inversions give S = 6,4,2,0,-2,-4,-6. P(|S| >= 6) = 2/24, P(|S| >= 4) = 8/24.
  const DriftTests up = drift_tests({stratum({1, 2, 3, 4})}, MetricKind::timing);
  EXPECT_TRUE(up.exact);
  EXPECT_EQ(up.permutations, 24u);
  EXPECT_DOUBLE_EQ(up.trend.statistic, 6);
  EXPECT_DOUBLE_EQ(up.kendall_tau, 1.0);
  EXPECT_DOUBLE_EQ(up.trend.p, 2.0 / 24);
  const DriftTests swapped = drift_tests({stratum({1, 3, 2, 4})}, MetricKind::timing);
  EXPECT_DOUBLE_EQ(swapped.trend.p, 8.0 / 24);
  EXPECT_NEAR(swapped.kendall_tau, 4.0 / 6, 1e-12);
}

TEST(DriftTests, TrendOverStrataPermutesWithinEach) {
  // {1,2,3} and {1,2}: S = 3 + 1 = 4, reached by 2 of the 3! * 2! = 12 reorderings.
  const DriftTests t = drift_tests({stratum({1, 2, 3}), stratum({10, 20})}, MetricKind::timing);
  EXPECT_EQ(t.permutations, 12u);
  EXPECT_DOUBLE_EQ(t.trend.statistic, 4);
  EXPECT_DOUBLE_EQ(t.trend.p, 2.0 / 12);
}

TEST(DriftTests, OddEvenSplitOfCounts) {
  // {4,0,4,0}: boots 1 and 3 hold 8 of the 8 events; of the 6 ways to give two boots the
  // values, 2 ({4,4} and {0,0}) are as far from the expected 4: p = 1/3.
  const DriftTests t = drift_tests({stratum({4, 0, 4, 0})}, MetricKind::count);
  EXPECT_DOUBLE_EQ(t.odd_even.statistic, 4);
  EXPECT_DOUBLE_EQ(t.odd_even.p, 1.0 / 3);
  EXPECT_DOUBLE_EQ(t.trend.statistic, -2);
}

TEST(DriftTests, HalvesSplitOfTimingsUsesMidranks) {
  // {5,6,1,2} with the first two boots in the run's first half: midranks {3,4,1,2}, first
  // half sum 7 against the expected 5, weight 1/(4+1): statistic 0.4; sums 3 and 7 are as
  // extreme, 8 of 24 orders: p = 1/3.
  const DriftTests t =
      drift_tests({stratum({5, 6, 1, 2}, {true, true, false, false})}, MetricKind::timing);
  EXPECT_NEAR(t.halves.statistic, 0.4, 1e-12);
  EXPECT_DOUBLE_EQ(t.halves.p, 1.0 / 3);
}

TEST(DriftTests, CombinedIsTheMinPOverTheThreeTests) {
  // {1,2,3,4}: trend p 1/12; odd/even p 2/3; no halves. Only the 2 fully ordered
  // arrangements reach a smallest p <= 1/12: combined p = 1/12.
  const DriftTests t = drift_tests({stratum({1, 2, 3, 4})}, MetricKind::timing);
  EXPECT_DOUBLE_EQ(t.odd_even.p, 2.0 / 3);
  EXPECT_DOUBLE_EQ(t.halves.p, 1.0);
  EXPECT_DOUBLE_EQ(t.combined_p, 1.0 / 12);
  EXPECT_TRUE(t.testable);
}

TEST(DriftTests, ConstantStrataAreNotTestable) {
  const DriftTests t = drift_tests({stratum({0, 0, 0}), stratum({2, 2})}, MetricKind::count);
  EXPECT_FALSE(t.testable);
  EXPECT_DOUBLE_EQ(t.trend.p, 1);
  EXPECT_DOUBLE_EQ(t.combined_p, 1);
}

TEST(DriftTests, SampledReferenceApproachesTheExactP) {
  const std::vector<DriftStratum> s = {stratum({3, 1, 4, 1, 5, 9, 2}, {1, 1, 1, 0, 0, 0, 0})};
  const DriftTests exact = drift_tests(s, MetricKind::timing);
  const DriftTests sampled = drift_tests(s, MetricKind::timing, 100, 20000, 7);
  EXPECT_TRUE(exact.exact);
  EXPECT_FALSE(sampled.exact);
  EXPECT_EQ(sampled.permutations, 20001u);
  EXPECT_NEAR(sampled.trend.p, exact.trend.p, 0.01);
  EXPECT_NEAR(sampled.halves.p, exact.halves.p, 0.01);
  EXPECT_NEAR(sampled.combined_p, exact.combined_p, 0.01);
  // Seeded: the same p again.
  EXPECT_DOUBLE_EQ(drift_tests(s, MetricKind::timing, 100, 20000, 7).combined_p,
                   sampled.combined_p);
}

TEST(Holm, AdjustsStepDownAndKeepsOrder) {
  const std::vector<double> adj = holm_adjust(std::vector<double>{0.01, 0.04, 0.03});
  EXPECT_NEAR(adj[0], 0.03, 1e-15);
  EXPECT_NEAR(adj[1], 0.06, 1e-15);
  EXPECT_NEAR(adj[2], 0.06, 1e-15);
  EXPECT_DOUBLE_EQ(holm_adjust(std::vector<double>{0.9, 0.8})[0], 1.0);
  EXPECT_TRUE(holm_adjust(std::vector<double>{}).empty());
}

TEST(ClopperPearson, KnownIntervals) {
  const BinomialInterval none = clopper_pearson(0, 10);
  EXPECT_DOUBLE_EQ(none.low, 0);
  EXPECT_NEAR(none.high, 1 - std::pow(0.025, 0.1), 1e-9);  // 0.3085
  const BinomialInterval half = clopper_pearson(5, 10);
  EXPECT_NEAR(half.low, 0.187086, 1e-6);
  EXPECT_NEAR(half.high, 0.812914, 1e-6);
  EXPECT_DOUBLE_EQ(clopper_pearson(3, 3).high, 1);
  EXPECT_THROW(clopper_pearson(4, 3), Error);
  EXPECT_THROW(clopper_pearson(0, 0), Error);
}

TEST(Spread, WithinRunIsPooledOverVariants) {
  // Means 2 and 12 (a level difference that must not count): sd sqrt((2 + 2) / 2).
  const WithinRunSpread w = within_run_spread({{1, 3}, {11, 13}});
  EXPECT_EQ(w.n, 4u);
  EXPECT_DOUBLE_EQ(w.mean, 7);
  EXPECT_NEAR(w.within_sd, std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(w.cv, std::sqrt(2.0) / 7, 1e-12);
  EXPECT_NEAR(w.dispersion, 2.0 / 7, 1e-12);
}

TEST(Spread, BetweenRunsVarianceSplit) {
  // Runs {1,3} and {5,7}: MSB = 16, MSW = 2, n0 = 2: between variance 7, ICC 7/9.
  const BetweenRunSpread b = between_run_spread({{1, 3}, {5, 7}});
  ASSERT_EQ(b.run_means.size(), 2u);
  EXPECT_NEAR(b.within_sd, std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(b.between_sd, std::sqrt(7.0), 1e-12);
  EXPECT_NEAR(b.icc, 7.0 / 9, 1e-12);
  EXPECT_NEAR(b.means_cv, std::sqrt(8.0) / 4, 1e-12);
  EXPECT_TRUE(std::isnan(between_run_spread({{1, 2}}).icc));
}

std::vector<double> normal_values(std::size_t n, double mean, double cv, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(mean, mean * cv);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

const DetectionRule kAlone{0.05, 0, 0};  // one primary at alpha 0.05, no threshold

TEST(MinimumDetectableEffect, GrowsWithTheSpreadAndRepeats) {
  const auto quiet = normal_values(10, 1000, 0.02, 3), noisy = normal_values(10, 1000, 0.2, 3);
  const auto q = minimum_detectable_effect(quiet, 5, MetricKind::timing, kAlone);
  const auto n = minimum_detectable_effect(noisy, 5, MetricKind::timing, kAlone);
  ASSERT_TRUE(q.reached);
  ASSERT_TRUE(n.reached);
  EXPECT_GE(q.power, 0.8);
  EXPECT_LT(q.delta_pct, n.delta_pct);
  EXPECT_NEAR(q.delta, q.delta_pct / 100 * 1000, 0.1 * q.delta);
  // A shift of about 2 sd (5 vs 5, one-sided midrank test) is where power reaches 0.8.
  EXPECT_GT(n.delta_pct, 20);
  EXPECT_LT(n.delta_pct, 100);
  EXPECT_DOUBLE_EQ(minimum_detectable_effect(noisy, 5, MetricKind::timing, kAlone).delta_pct,
                   n.delta_pct);
  // Compare's rule over six primaries (level 0.05/6) with a 25% margin needs more than alone.
  const auto six = minimum_detectable_effect(noisy, 5, MetricKind::timing, {0.05 / 6, 25, 0});
  ASSERT_TRUE(six.reached);
  EXPECT_GT(six.delta_pct, n.delta_pct);
  EXPECT_GT(six.delta_pct, 25);
}

// The review: calibrate's MDE used the normal approximation for tied data (A = {1,1,1,2,2},
// B = {2,2,2,3,3}: two-sided 0.041 against the exact 0.079), two-sided and without Holm or the
// threshold. Its test is now compare's own: one-sided exact, 10/252 = 0.0397 (half the exact
// two-sided 0.079), and a detection only below the step-down's level.
TEST(MinimumDetectableEffect, TheTiedExampleGetsTheExactTest) {
  const std::vector<double> a = {1, 1, 1, 2, 2}, b = {2, 2, 2, 3, 3};
  EXPECT_NEAR(primary_rule_p(a, b, MetricKind::timing), 10.0 / 252, 1e-12);
  EXPECT_NEAR(2 * primary_rule_p(a, b, MetricKind::timing), 0.0794, 1e-4);
  EXPECT_NEAR(mann_whitney_u(a, b).p_two_sided, 0.041, 0.001);  // what it used before
  EXPECT_NEAR(primary_rule_p(a, b, MetricKind::count), 10.0 / 252, 1e-12);
}

TEST(MinimumDetectableEffect, UnreachableWithThreeTimingsPerSide) {
  // The one-sided exact p of 3 vs 3 is at least 1/20 = 0.05, not below 0.05.
  const auto m =
      minimum_detectable_effect(normal_values(6, 100, 0.01, 1), 3, MetricKind::timing, kAlone);
  EXPECT_FALSE(m.reached);
  EXPECT_TRUE(std::isnan(m.delta_pct));
  EXPECT_FALSE(minimum_detectable_effect(std::vector<double>(10, 0.0), 5, MetricKind::count, kAlone)
                   .reached);  // mean 0: no relative shift
}

TEST(MinimumDetectableEffect, CountsUseThePermutationTest) {
  std::mt19937_64 rng(5);
  std::poisson_distribution<int> pois(20);
  std::vector<double> v(10);
  for (auto& x : v) x = pois(rng);
  const auto m = minimum_detectable_effect(v, 5, MetricKind::count, kAlone);
  ASSERT_TRUE(m.reached);
  EXPECT_GT(m.delta_pct, 10);
  EXPECT_LT(m.delta_pct, 100);
}

}  // namespace
}  // namespace isolab
