#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "base/error.h"
#include "stats/permutation.h"
#include "stats/sample.h"

namespace isolab {
namespace {

TEST(Describe, SampleStatistics) {
  const std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
  const SampleStats s = describe(v);
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  // Sum of squared deviations 32, n-1 = 7.
  EXPECT_NEAR(s.stddev, std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_NEAR(s.cv, std::sqrt(32.0 / 7.0) / 5.0, 1e-12);
}

TEST(Describe, OneAndNoValues) {
  const std::vector<double> one = {14671.45};
  const SampleStats s = describe(one);
  EXPECT_EQ(s.n, 1u);
  EXPECT_DOUBLE_EQ(s.median, 14671.45);
  EXPECT_TRUE(std::isnan(s.stddev));
  EXPECT_TRUE(std::isnan(s.cv));
  const SampleStats e = describe(std::vector<double>{});
  EXPECT_EQ(e.n, 0u);
  EXPECT_TRUE(std::isnan(e.median));
}

TEST(Describe, RejectsNonFinite) {
  const std::vector<double> v = {1, NAN, 3};
  EXPECT_THROW(describe(v), Error);
}

TEST(Describe, LargeValuesSmallSpreadStayAccurate) {
  // Cycle counts around 1e9 that differ by 1: a naive sum-of-squares formula loses this.
  const std::vector<double> v = {1e9 + 1, 1e9 + 2, 1e9 + 3};
  EXPECT_NEAR(describe(v).stddev, 1.0, 1e-6);
}

TEST(RelativeChange, S2RowsFromLkml) {
  // docs/sources.md [s2]: stress-ng --ramfs 9 before/after "mm: vmscan: make global
  // slab shrink lockless".
  EXPECT_NEAR(100 * relative_change(14671.45, 14120.66), -3.75, 0.005);
  EXPECT_NEAR(100 * relative_change(3753.09, 3566.23), -4.98, 0.005);
  EXPECT_TRUE(std::isnan(relative_change(0, 5)));
}

TEST(Percentile, NearestRank) {
  // Nearest rank of 1..10: p50 -> rank 5, p90 -> rank 9, p91 -> rank ceil(9.1) = 10.
  std::vector<double> v;
  for (int i = 10; i >= 1; --i) v.push_back(i);
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(v, 50), 5);
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(v, 90), 9);
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(v, 91), 10);
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(v, 100), 10);
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(v, 0.1), 1);
}

TEST(MannWhitney, ExactSmallSamples) {
  // 3 vs 3 completely separated: 2 of the C(6,3)=20 arrangements are as extreme.
  const std::vector<double> a = {1, 2, 3}, b = {4, 5, 6};
  const auto r = mann_whitney_u(a, b);
  EXPECT_TRUE(r.exact);
  EXPECT_FALSE(r.ties);
  EXPECT_DOUBLE_EQ(r.u_a, 0);
  EXPECT_NEAR(r.p_two_sided, 0.1, 1e-12);
  // a={1,2,4}, b={3,5,6}: U_a = 1; P(U<=1) = 2/20, so p = 0.2 (enumerated by hand).
  const std::vector<double> a2 = {1, 2, 4}, b2 = {3, 5, 6};
  EXPECT_NEAR(mann_whitney_u(a2, b2).p_two_sided, 0.2, 1e-12);
  // 5 vs 5 separated: 2/252.
  const std::vector<double> a5 = {10, 11, 12, 13, 14}, b5 = {1, 2, 3, 4, 5};
  const auto r5 = mann_whitney_u(a5, b5);
  EXPECT_DOUBLE_EQ(r5.u_a, 25);
  EXPECT_NEAR(r5.p_two_sided, 2.0 / 252.0, 1e-12);
  // Identical samples without ties inside can still give p = 1 (U at the centre).
  const std::vector<double> x = {1, 4}, y = {2, 3};
  EXPECT_DOUBLE_EQ(mann_whitney_u(x, y).p_two_sided, 1.0);
}

TEST(MannWhitney, NormalApproximationWithTies) {
  // a={1,2,3,3,5}, b={3,6,7,8,9}: midranks, U_a = 2, tie-corrected variance 22.3611,
  // z = (|2 - 12.5| - 0.5) / sqrt(22.3611) = 2.11472, p = erfc(z / sqrt 2) = 0.034454
  // (computed independently with Python's math.erfc).
  const std::vector<double> a = {1, 2, 3, 3, 5}, b = {3, 6, 7, 8, 9};
  const auto r = mann_whitney_u(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_TRUE(r.ties);
  EXPECT_DOUBLE_EQ(r.u_a, 2);
  EXPECT_NEAR(r.p_two_sided, 0.0344536, 1e-6);
  // All values tied: no evidence at all.
  const std::vector<double> t = {7, 7, 7};
  EXPECT_DOUBLE_EQ(mann_whitney_u(t, t).p_two_sided, 1.0);
}

TEST(MannWhitney, LargeSamplesUseNormalApproximation) {
  std::vector<double> a, b;
  for (int i = 0; i < 30; ++i) {
    a.push_back(i);
    b.push_back(i + 0.5);
  }
  const auto r = mann_whitney_u(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_GT(r.p_two_sided, 0.5);
}

TEST(MannWhitney, MinimumAttainableP) {
  EXPECT_NEAR(mann_whitney_min_p(3, 3), 0.1, 1e-12);
  EXPECT_NEAR(mann_whitney_min_p(4, 4), 2.0 / 70.0, 1e-12);
  EXPECT_NEAR(mann_whitney_min_p(5, 5), 2.0 / 252.0, 1e-12);
  EXPECT_DOUBLE_EQ(mann_whitney_min_p(1, 1), 1.0);
}

TEST(Permutation, ExactAndSeeded) {
  const std::vector<double> a = {1, 2, 3}, b = {4, 5, 6};
  // 20 assignments; |median difference| >= 3 for {1,2,3}|{4,5,6}, {1,2,4}|{3,5,6} and their
  // mirrors (enumerated by hand): p = 4/20. The median statistic is coarser than U (p 0.1).
  EXPECT_NEAR(permutation_test_median(a, b, 2000, 7), 0.2, 1e-12);
  std::vector<double> a8, b8;
  for (int i = 0; i < 8; ++i) {
    a8.push_back(100 + i);
    b8.push_back(100 + i + 0.25);
  }
  // C(16,8) = 12870 > 2000: random permutations, repeatable by seed.
  const double p1 = permutation_test_median(a8, b8, 2000, 42);
  const double p2 = permutation_test_median(a8, b8, 2000, 42);
  EXPECT_DOUBLE_EQ(p1, p2);
  EXPECT_GT(p1, 0.5);
}

TEST(Bootstrap, RepeatableAndCoversTheShift) {
  const std::vector<double> a = {100, 101, 99, 100.5, 99.5, 100.2, 99.8, 100.1};
  std::vector<double> b;
  for (double x : a) b.push_back(x * 0.9);
  const auto ci1 = bootstrap_relative_change_ci(a, b, 0.95, 2000, 5);
  const auto ci2 = bootstrap_relative_change_ci(a, b, 0.95, 2000, 5);
  ASSERT_TRUE(ci1 && ci2);
  EXPECT_DOUBLE_EQ(ci1->low, ci2->low);
  EXPECT_DOUBLE_EQ(ci1->high, ci2->high);
  EXPECT_LT(ci1->low, -0.10 + 1e-9);
  EXPECT_GT(ci1->high, -0.10 - 1e-9);
  EXPECT_GT(ci1->low, -0.13);
  EXPECT_LT(ci1->high, -0.07);
  EXPECT_EQ(ci1->resamples_used, 2000u);
  // One value each: the interval collapses onto the point change.
  const std::vector<double> one_a = {14671.45}, one_b = {14120.66};
  const auto ci = bootstrap_relative_change_ci(one_a, one_b);
  ASSERT_TRUE(ci);
  EXPECT_NEAR(ci->low, ci->high, 1e-15);
  // Baseline 0 everywhere: undefined.
  const std::vector<double> zeros = {0, 0, 0};
  EXPECT_FALSE(bootstrap_relative_change_ci(zeros, b));
}

// ---- permutation test of the difference of means (count metrics) ----

// Independent brute force over bitmasks: p and min_p of |mean_B - mean_A|.
std::pair<double, double> brute_force_permutation(const std::vector<double>& a,
                                                  const std::vector<double>& b) {
  std::vector<double> pooled = a;
  pooled.insert(pooled.end(), b.begin(), b.end());
  const std::size_t n = pooled.size(), na = a.size();
  auto stat_of = [&](unsigned mask) {
    double sa = 0, sb = 0;
    for (std::size_t i = 0; i < n; ++i) ((mask >> i) & 1 ? sa : sb) += pooled[i];
    return std::fabs(sb / static_cast<double>(n - na) - sa / static_cast<double>(na));
  };
  const double observed = stat_of((1u << na) - 1);
  std::vector<double> stats;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (static_cast<std::size_t>(__builtin_popcount(mask)) == na) stats.push_back(stat_of(mask));
  }
  const double top = *std::max_element(stats.begin(), stats.end());
  double ge = 0, at_top = 0;
  for (double s : stats) {
    ge += s >= observed - 1e-9;
    at_top += s >= top - 1e-9;
  }
  return {ge / static_cast<double>(stats.size()), at_top / static_cast<double>(stats.size())};
}

TEST(PermutationMean, TiesOnlyIsExactlyTwoOf252) {
  // {1,1,1,1,1} vs {0,0,0,0,0}: of the C(10,5) = 252 reassignments only the observed one and its
  // mirror reach |mean difference| = 1.
  const std::vector<double> a = {1, 1, 1, 1, 1}, b = {0, 0, 0, 0, 0};
  const auto r = permutation_test_mean(a, b);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.reassignments, 252u);
  EXPECT_DOUBLE_EQ(r.p, 2.0 / 252.0);
  EXPECT_DOUBLE_EQ(r.min_p, 2.0 / 252.0);
  // A rate that drops to zero with a noisy A: same answer.
  const std::vector<double> noisy = {0.8, 1.2, 1.0, 0.6, 1.4};
  EXPECT_DOUBLE_EQ(permutation_test_mean(noisy, b).p, 2.0 / 252.0);
  EXPECT_NEAR(permutation_test_mean(noisy, b).p, 0.0079, 0.00005);
}

TEST(PermutationMean, HandCountedSmallCase) {
  // a={0,0,1}, b={1,2,2}: pooled sum 6, statistic |6 - 2 sum(A)| / 3, observed sum(A) = 1 gives
  // 4/3. Reassignments (20) with sum(A) <= 1: {0,0,1} twice (two 1s); >= 5: {1,2,2} twice.
  // p = 4/20, and those are also the extremes: min_p = 0.2 (no assignment could be
  // significant at 0.05).
  const std::vector<double> a = {0, 0, 1}, b = {1, 2, 2};
  const auto r = permutation_test_mean(a, b);
  EXPECT_DOUBLE_EQ(r.p, 0.2);
  EXPECT_DOUBLE_EQ(r.min_p, 0.2);
}

TEST(PermutationMean, HeavyTiesCannotBeSignificant) {
  // One event in one boot against zeros: wherever the 1 goes the statistic is 0.2, so p = 1 and
  // so is the smallest attainable p.
  const std::vector<double> a = {0, 0, 0, 0, 1}, b = {0, 0, 0, 0, 0};
  const auto r = permutation_test_mean(a, b);
  EXPECT_DOUBLE_EQ(r.p, 1.0);
  EXPECT_DOUBLE_EQ(r.min_p, 1.0);
  // All zero: nothing to test.
  const auto z = permutation_test_mean(b, b);
  EXPECT_DOUBLE_EQ(z.p, 1.0);
  EXPECT_DOUBLE_EQ(z.min_p, 1.0);
  EXPECT_DOUBLE_EQ(permutation_test_mean(std::vector<double>{}, b).p, 1.0);
}

TEST(PermutationMean, AgreesWithBruteForceOnTiedCounts) {
  // Seeded Poisson-like counts with many ties, unequal sizes: p and min_p (from combinatorics)
  // equal an independent enumeration.
  std::mt19937_64 rng(17);
  std::poisson_distribution<int> pois(1.2);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t na = 3 + trial % 4, nb = 4 + trial % 3;
    std::vector<double> a(na), b(nb);
    for (auto& x : a) x = pois(rng);
    for (auto& x : b) x = pois(rng) + (trial % 5 == 0 ? 2 : 0);
    const auto [p, min_p] = brute_force_permutation(a, b);
    const auto r = permutation_test_mean(a, b);
    EXPECT_NEAR(r.p, p, 1e-12) << "trial " << trial;
    EXPECT_NEAR(r.min_p, min_p, 1e-12) << "trial " << trial;
  }
}

TEST(PermutationMean, MonteCarloBeyondTheExactLimit) {
  // Forced Monte Carlo on the 5 vs 5 case: Phipson-Smyth p close to the exact 2/252, repeatable.
  const std::vector<double> a = {0.8, 1.2, 1.0, 0.6, 1.4}, b = {0, 0, 0, 0, 0};
  const auto mc = permutation_test_mean(a, b, 100, 20000, 3);
  EXPECT_FALSE(mc.exact);
  EXPECT_EQ(mc.reassignments, 20000u);
  EXPECT_NEAR(mc.p, 2.0 / 252.0, 0.002);
  EXPECT_GE(mc.p, 1.0 / 20001.0);
  EXPECT_DOUBLE_EQ(mc.p, permutation_test_mean(a, b, 100, 20000, 3).p);
  EXPECT_DOUBLE_EQ(mc.min_p, 2.0 / 252.0);  // min_p is exact either way
  // 12 vs 12 (C(24,12) = 2704156 > 1e6) samples by default.
  std::vector<double> a12(12, 3.0), b12(12, 0.0);
  const auto big = permutation_test_mean(a12, b12);
  EXPECT_FALSE(big.exact);
  EXPECT_DOUBLE_EQ(big.p, 1.0 / 20001.0);  // no random reassignment is as extreme
  EXPECT_NEAR(big.min_p, 2.0 / 2704156.0, 1e-15);
}

TEST(CountChange, RelativeChangeOfMeansAndBootstrapCi) {
  EXPECT_DOUBLE_EQ(count_relative_change(0.98, 0), -1.0);
  EXPECT_DOUBLE_EQ(count_relative_change(0, 0), 0.0);
  EXPECT_TRUE(std::isinf(count_relative_change(0, 0.4)));
  EXPECT_GT(count_relative_change(0, 0.4), 0);
  EXPECT_TRUE(std::isnan(count_relative_change(-1, 0)));
  const std::vector<double> a = {0.8, 1.2, 1.0, 0.6, 1.4}, b = {0, 0, 0, 0, 0};
  const auto ci = bootstrap_mean_difference_ci(a, b, 0.95, 2000, 5);
  ASSERT_TRUE(ci);
  // Resampled means of A lie in [0.6, 1.4]; the difference is minus that.
  EXPECT_GE(ci->low, -1.4);
  EXPECT_LT(ci->low, -1.0);
  EXPECT_GT(ci->high, -1.0);
  EXPECT_LE(ci->high, -0.6);
  EXPECT_DOUBLE_EQ(ci->low, bootstrap_mean_difference_ci(a, b, 0.95, 2000, 5)->low);
  const auto zero = bootstrap_mean_difference_ci(b, b);
  ASSERT_TRUE(zero);
  EXPECT_DOUBLE_EQ(zero->low, 0);
  EXPECT_DOUBLE_EQ(zero->high, 0);
  EXPECT_FALSE(bootstrap_mean_difference_ci(std::vector<double>{}, b));
}

}  // namespace
}  // namespace isolab
