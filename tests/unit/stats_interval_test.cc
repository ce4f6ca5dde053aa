// One-sided stratified permutation tests and confidence intervals by test inversion: exact
// p-values counted by hand, and the coverage of the intervals at 5 boots a side (where the
// percentile bootstrap undercovers).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "stats/permutation.h"
#include "stats/sample.h"

namespace isolab {
namespace {

TEST(OneSided, SeparatedFiveAgainstFiveIsOneOf252) {
  const std::vector<Stratum> up = {{{1, 2, 3, 4, 5}, {11, 12, 13, 14, 15}}};
  for (StratumScore sc : {StratumScore::values, StratumScore::midranks}) {
    const StratifiedResult g =
        stratified_permutation_test(up, sc, 1000000, 20000, 1, Alternative::greater);
    EXPECT_DOUBLE_EQ(g.p, 1.0 / 252);
    EXPECT_DOUBLE_EQ(g.min_p, 1.0 / 252);
    // The other direction: every reassignment has D <= the observed one.
    const StratifiedResult l =
        stratified_permutation_test(up, sc, 1000000, 20000, 1, Alternative::less);
    EXPECT_DOUBLE_EQ(l.p, 1.0);
    EXPECT_DOUBLE_EQ(l.min_p, 1.0 / 252);
    EXPECT_DOUBLE_EQ(stratified_permutation_test(up, sc).p, 2.0 / 252);
  }
}

TEST(OneSided, TiedLatenciesHaveTheExactConditionalP) {
  // A = {12,13,13,14,15}, B = {14,15,15,16,16} (integer us). Pooled midranks: 12 -> 1,
  // 13 -> 2.5, 14 -> 4.5, 15 -> 7, 16 -> 9.5; A's rank sum 17.5. Of the C(10,5) = 252 subsets,
  // 7 have a rank sum <= 17.5 (B above A at least as strongly): p = 7/252 one-sided, and 14/252
  // two-sided (the mirror images, rank sum >= 37.5).
  const std::vector<Stratum> s = {{{12, 13, 13, 14, 15}, {14, 15, 15, 16, 16}}};
  const StratifiedResult g = stratified_permutation_test(s, StratumScore::midranks, 1000000, 20000,
                                                         1, Alternative::greater);
  EXPECT_DOUBLE_EQ(g.p, 7.0 / 252);
  // Extreme: A = {12,13,13,14,14}; the two 14s (t = 2, both in A) and the rest fixed: one
  // subset.
  EXPECT_DOUBLE_EQ(g.min_p, 1.0 / 252);
  EXPECT_DOUBLE_EQ(stratified_permutation_test(s, StratumScore::midranks).p, 14.0 / 252);
}

// The exact null distribution is counted by size and sum of the doubled midranks (or of values
// that are multiples of 1/2) rather than enumerated: the same p as brute force over bitmasks.
TEST(OneSided, CountedDistributionAgreesWithBruteForce) {
  std::mt19937_64 rng(8);
  std::uniform_int_distribution<int> latency(10, 16);  // whole us: many ties
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t na = 4 + trial % 5, nb = 5 + trial % 4;
    Stratum s;
    for (std::size_t i = 0; i < na; ++i) s.a.push_back(latency(rng));
    for (std::size_t i = 0; i < nb; ++i) s.b.push_back(latency(rng) + (trial % 3));
    std::vector<double> pooled = s.a;
    pooled.insert(pooled.end(), s.b.begin(), s.b.end());
    const std::vector<double> r = midranks(pooled);
    const std::size_t n = pooled.size();
    double observed = 0;
    for (std::size_t i = 0; i < na; ++i) observed += r[i];
    std::size_t le = 0, total = 0;
    for (unsigned mask = 0; mask < (1u << n); ++mask) {
      if (static_cast<std::size_t>(__builtin_popcount(mask)) != na) continue;
      double sum = 0;
      for (std::size_t i = 0; i < n; ++i)
        if ((mask >> i) & 1) sum += r[i];
      ++total;
      le += sum <= observed + 1e-9;
    }
    const StratifiedResult g = stratified_permutation_test({s}, StratumScore::midranks, 1000000,
                                                           20000, 1, Alternative::greater);
    EXPECT_NEAR(g.p, static_cast<double>(le) / static_cast<double>(total), 1e-12) << trial;
    EXPECT_EQ(g.reassignments, total);
  }
}

TEST(Interval, ContainsTheShiftAndIsRepeatable) {
  const std::vector<Stratum> s = {{{1.0, 1.4, 0.8, 1.1, 0.9}, {2.1, 1.9, 2.4, 2.0, 1.7}}};
  const auto ci = permutation_interval(s, StratumScore::values, ChangeScale::shift);
  ASSERT_TRUE(ci);
  EXPECT_LT(ci->low, 1.0);
  EXPECT_GT(ci->high, 1.0);
  EXPECT_GT(ci->low, 0);  // p = 2/252 at delta = 0: excluded
  EXPECT_EQ(ci->resamples_used, 252u);
  const auto again = permutation_interval(s, StratumScore::values, ChangeScale::shift);
  EXPECT_DOUBLE_EQ(ci->low, again->low);
  EXPECT_DOUBLE_EQ(ci->high, again->high);
  // The ends are where the test starts to reject: just inside accepted, just outside not.
  auto p_at = [&](double d) {
    std::vector<Stratum> m = s;
    for (auto& x : m[0].a) x += d;
    return stratified_permutation_test(m, StratumScore::values).p;
  };
  EXPECT_GT(p_at(ci->low + 1e-6), 0.05);
  EXPECT_LE(p_at(ci->low - 1e-6), 0.05);
  EXPECT_GT(p_at(ci->high - 1e-6), 0.05);
  EXPECT_LE(p_at(ci->high + 1e-6), 0.05);
}

TEST(Interval, ThreeAgainstThreeIsUnbounded) {
  // The smallest two-sided p of 3 against 3 is 0.1: no change can be rejected at 0.05.
  const std::vector<Stratum> s = {{{1, 2, 3}, {10, 11, 12}}};
  const auto ci = permutation_interval(s, StratumScore::midranks, ChangeScale::shift);
  ASSERT_TRUE(ci);
  EXPECT_TRUE(std::isinf(ci->low) && ci->low < 0);
  EXPECT_TRUE(std::isinf(ci->high) && ci->high > 0);
}

TEST(Interval, ScaleNeedsPositiveValuesAndGivesARelativeChange) {
  const std::vector<Stratum> s = {{{100, 102, 98, 101, 99}, {110, 112, 108, 111, 109}}};
  const auto ci = permutation_interval(s, StratumScore::midranks, ChangeScale::scale);
  ASSERT_TRUE(ci);
  EXPECT_LT(ci->low, 0.10);
  EXPECT_GT(ci->high, 0.10);
  EXPECT_GT(ci->low, 0.0);
  EXPECT_LT(ci->high, 0.20);
  const std::vector<Stratum> zero = {{{0, 1, 2, 1, 1}, {1, 2, 3, 2, 2}}};
  EXPECT_FALSE(permutation_interval(zero, StratumScore::values, ChangeScale::scale));
  EXPECT_FALSE(permutation_interval({}, StratumScore::values, ChangeScale::shift));
}

TEST(Interval, AllZeroOnBothSidesIsAPoint) {
  const std::vector<Stratum> s = {{{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}}};
  const auto ci = permutation_interval(s, StratumScore::values, ChangeScale::shift);
  ASSERT_TRUE(ci);
  EXPECT_NEAR(ci->low, 0, 1e-5);
  EXPECT_NEAR(ci->high, 0, 1e-5);
}

// Coverage at 5 boots a side: 400 seeded samples of B = A + 1 with normal noise. The inverted
// exact test covers the true shift in at least 95% of samples (386 of 400 with this seed; the
// sampling error of 400 is about 1.1%); the 95% percentile bootstrap of the mean difference
// covers it in 366 (91.5%).
TEST(Interval, CoverageAtFiveBootsASide) {
  std::mt19937_64 rng(2024);
  std::normal_distribution<double> noise(0, 1);
  int inverted = 0, bootstrap = 0;
  const int trials = 400;
  for (int t = 0; t < trials; ++t) {
    Stratum s;
    for (int i = 0; i < 5; ++i) s.a.push_back(noise(rng));
    for (int i = 0; i < 5; ++i) s.b.push_back(1 + noise(rng));
    const auto ci = permutation_interval({s}, StratumScore::values, ChangeScale::shift);
    inverted += ci && ci->low <= 1 && ci->high >= 1;
    const auto bs = bootstrap_mean_difference_ci(s.a, s.b, 0.95, 2000, static_cast<unsigned>(t));
    bootstrap += bs && bs->low <= 1 && bs->high >= 1;
  }
  EXPECT_GE(inverted, trials * 0.94);
  EXPECT_LT(bootstrap, trials * 0.93);
  EXPECT_GT(inverted, bootstrap) << inverted << " " << bootstrap;
}

TEST(Interval, MonteCarloBeyondTheExactLimitIsDeterministic) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0, 1);
  Stratum s;
  for (int i = 0; i < 10; ++i) s.a.push_back(noise(rng));
  for (int i = 0; i < 10; ++i) s.b.push_back(2 + noise(rng));
  const auto mc =
      permutation_interval({s}, StratumScore::values, ChangeScale::shift, 0.95, 1000, 2000, 9);
  const auto again =
      permutation_interval({s}, StratumScore::values, ChangeScale::shift, 0.95, 1000, 2000, 9);
  ASSERT_TRUE(mc && again);
  EXPECT_EQ(mc->resamples_used, 2000u);
  EXPECT_DOUBLE_EQ(mc->low, again->low);
  EXPECT_LT(mc->low, 2.0);
  EXPECT_GT(mc->high, 2.0);
}

}  // namespace
}  // namespace isolab
