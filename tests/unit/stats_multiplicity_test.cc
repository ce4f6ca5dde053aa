// Holm's step-down, the one-sided Fisher exact test and Westfall-Young min-P over joint
// relabellings of the boots: values counted by hand and the family-wise error rate of A/A data.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "base/error.h"
#include "stats/multiplicity.h"

namespace isolab {
namespace {

TEST(Holm, StepDownAdjustedPValues) {
  // Sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> max 0.06.
  const std::vector<double> p = {0.01, 0.04, 0.03, 0.005};
  const auto h = holm_adjust(p);
  ASSERT_EQ(h.size(), 4u);
  EXPECT_DOUBLE_EQ(h[0], 0.03);
  EXPECT_DOUBLE_EQ(h[1], 0.06);
  EXPECT_DOUBLE_EQ(h[2], 0.06);
  EXPECT_DOUBLE_EQ(h[3], 0.02);
  EXPECT_TRUE(holm_adjust(std::vector<double>{}).empty());
  EXPECT_DOUBLE_EQ(holm_adjust(std::vector<double>{0.5, 0.9})[0], 1.0);  // 2 x 0.5, capped at 1
  EXPECT_DOUBLE_EQ(holm_adjust(std::vector<double>{0.5, 0.9})[1], 1.0);  // never below the previous
  // One primary metric: Holm is the test itself. Six at 1/252 each (one-sided, 5 vs 5):
  // 6/252 = 0.024 < 0.05.
  EXPECT_DOUBLE_EQ(holm_adjust(std::vector<double>{1.0 / 252})[0], 1.0 / 252);
  EXPECT_NEAR(holm_adjust(std::vector<double>(6, 1.0 / 252))[0], 6.0 / 252, 1e-15);
}

TEST(Fisher, OneSidedExactRates) {
  EXPECT_NEAR(fisher_exact_greater(0, 5, 1, 5), 0.5, 1e-12);          // one host-induced stall
  EXPECT_NEAR(fisher_exact_greater(0, 5, 4, 5), 5.0 / 210.0, 1e-12);  // C(5,4)/C(10,4) + ...
  EXPECT_NEAR(fisher_exact_greater(0, 5, 5, 5), 1.0 / 252.0, 1e-12);
  EXPECT_NEAR(fisher_exact_greater(2, 5, 5, 5), 21.0 / 252.0, 1e-12);  // C(7,5) / C(10,5)
  EXPECT_DOUBLE_EQ(fisher_exact_greater(3, 5, 0, 5), 1.0);
  EXPECT_DOUBLE_EQ(fisher_exact_greater(0, 0, 1, 1), 1.0);
  EXPECT_THROW(fisher_exact_greater(6, 5, 0, 5), Error);
}

RelabelDesign design(std::size_t na, std::size_t nb, std::size_t blocks = 1) {
  RelabelDesign d;
  for (std::size_t i = 0; i < na + nb; ++i) {
    d.in_a.push_back(i < na);
    d.block.push_back(i % blocks);
  }
  return d;
}

TEST(Relabellings, EveryEqualSplitObservedFirst) {
  const RelabelDesign d = design(5, 5);
  const Relabellings r = relabellings(d, 100000, 1000, 1);
  EXPECT_TRUE(r.exact);
  ASSERT_EQ(r.size(), 252u);
  std::set<std::vector<std::uint8_t>> seen;
  for (std::size_t k = 0; k < r.size(); ++k) {
    const auto l = r[k];
    EXPECT_EQ(std::count(l.begin(), l.end(), 1), 5);
    seen.insert({l.begin(), l.end()});
  }
  EXPECT_EQ(seen.size(), 252u);
  EXPECT_EQ(std::vector<std::uint8_t>(r[0].begin(), r[0].end()),
            (std::vector<std::uint8_t>{1, 1, 1, 1, 1, 0, 0, 0, 0, 0}));
  // Two blocks of 3 + 3: C(6,3)^2 = 400, each block keeps its 3 A cells.
  const RelabelDesign two = design(6, 6, 2);
  const Relabellings r2 = relabellings(two, 100000, 1000, 1);
  ASSERT_EQ(r2.size(), 400u);
  for (std::size_t k = 0; k < r2.size(); ++k) {
    int block0 = 0;
    for (std::size_t i = 0; i < 12; i += 2) block0 += r2[k][i];
    EXPECT_EQ(block0, 3);
  }
}

TEST(Relabellings, SeededSampleBeyondTheLimit) {
  const RelabelDesign d = design(5, 5);
  const Relabellings r = relabellings(d, 100, 500, 7);
  EXPECT_FALSE(r.exact);
  ASSERT_EQ(r.size(), 501u);
  EXPECT_EQ(r.flat, relabellings(d, 100, 500, 7).flat);
  EXPECT_NE(r.flat, relabellings(d, 100, 500, 8).flat);
  for (std::size_t k = 0; k < r.size(); ++k) EXPECT_EQ(std::count(r[k].begin(), r[k].end(), 1), 5);
}

TEST(WestfallYoung, OneMetricIsItsOwnPermutationTest) {
  const RelabelDesign d = design(5, 5);
  const Relabellings r = relabellings(d, 100000, 1000, 1);
  const std::vector<double> v = {0.8, 1.2, 1.0, 0.6, 1.4, 0, 0, 0.2, 0, 0};
  const std::vector<double> t = {12, 13, 13, 14, 15, 14, 15, 15, 16, 16};
  const FamilyResult f = westfall_young_min_p(
      d, {{v, StratumScore::values}, {t, StratumScore::midranks}, {v, StratumScore::values}}, r);
  const double pv = permutation_test_mean(std::vector<double>(v.begin(), v.begin() + 5),
                                          std::vector<double>(v.begin() + 5, v.end()))
                        .p;
  EXPECT_NEAR(f.raw_p[0], pv, 1e-12);
  EXPECT_NEAR(f.raw_p[1], 14.0 / 252, 1e-12);  // the exact midrank test of the tied latencies
  // A metric that repeats another costs nothing: the min-P distribution is the same.
  const FamilyResult alone = westfall_young_min_p(d, {{v, StratumScore::values}}, r);
  EXPECT_NEAR(alone.adjusted_p[0], pv, 1e-12);
  EXPECT_GE(f.adjusted_p[0], f.raw_p[0]);
  EXPECT_LE(f.adjusted_p[0], 2 * f.raw_p[0] + 1e-12);  // at most Bonferroni over 2 distinct
  EXPECT_EQ(f.relabellings, 252u);
}

TEST(WestfallYoung, CellsLackingAMetricAreAbsentFromItsStatistic) {
  const RelabelDesign d = design(5, 5);
  const Relabellings r = relabellings(d, 100000, 1000, 1);
  const double nan = std::nan("");
  // Present in 4 + 4 cells only, separated: every labelling's statistic is over the cells that
  // have it; the observed one is the most extreme, with its mirror and the labellings that
  // swap only the two lacking cells.
  const std::vector<double> v = {1, 1, 1, 1, nan, 0, 0, 0, 0, nan};
  const FamilyResult f = westfall_young_min_p(d, {{v, StratumScore::values}}, r);
  // Extreme |T| needs the four 1s on one side and the four 0s on the other: the two lacking
  // cells then take the remaining slot of each side, 2 ways, and the mirror: 4 / 252.
  EXPECT_NEAR(f.raw_p[0], 4.0 / 252, 1e-12);
  EXPECT_THROW(westfall_young_min_p(d, {{{1, 2}, StratumScore::values}}, r), Error);
}

// A/A: 200 seeded data sets of 10 boots, 30 independent metrics with no difference. Unadjusted,
// most data sets have some metric at p < 0.05; adjusted, about 5% of them at most.
TEST(WestfallYoung, FamilyWiseErrorRateOfAaData) {
  const RelabelDesign d = design(5, 5);
  const Relabellings r = relabellings(d, 100000, 1000, 1);
  std::mt19937_64 rng(31);
  std::normal_distribution<double> noise(0, 1);
  int any_raw = 0, any_adjusted = 0;
  const int sets = 200;
  for (int s = 0; s < sets; ++s) {
    std::vector<FamilyMetric> metrics(30);
    for (auto& m : metrics) {
      for (int i = 0; i < 10; ++i) m.values.push_back(noise(rng));
      m.score = s % 2 ? StratumScore::midranks : StratumScore::values;
    }
    const FamilyResult f = westfall_young_min_p(d, metrics, r);
    any_raw += std::any_of(f.raw_p.begin(), f.raw_p.end(), [](double p) { return p < 0.05; });
    any_adjusted +=
        std::any_of(f.adjusted_p.begin(), f.adjusted_p.end(), [](double p) { return p < 0.05; });
  }
  EXPECT_GT(any_raw, sets * 0.6);
  EXPECT_LE(any_adjusted, sets * 0.05 + 2 * std::sqrt(sets * 0.05));
}

}  // namespace
}  // namespace isolab
