// A/A calibration of count metrics and of timings under TCG: calibrate must apply the very test
// and verdict rule compare applies, so the false-positive rate it reports is compare's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "compare/calibrate.h"
#include "compare/compare.h"

namespace isolab {
namespace {

// An A/A run: values[i] is the per-boot value of cell i; cells alternate between the two
// variants (same kernel build). One metric with the given unit and kind ("" = absent).
nlohmann::json aa_run(const std::vector<double>& values, const std::string& unit,
                      const std::string& kind, const std::string& accelerator) {
  nlohmann::json cells = nlohmann::json::array();
  for (std::size_t i = 0; i < values.size(); ++i) {
    nlohmann::json metric = {
        {"unit", unit}, {"better", "lower"}, {"aggregate", "mean"}, {"values", {values[i]}}};
    if (!kind.empty()) metric["kind"] = kind;
    if (kind == "count") metric["cpus"] = {5};
    cells.push_back({{"id", "c" + std::to_string(i)},
                     {"variant", i % 2 ? "b" : "a"},
                     {"warmup", false},
                     {"status", "ok"},
                     {"accelerator", accelerator},
                     {"metrics", {{"m", metric}}}});
  }
  return {{"schema_version", 1},
          {"run_id", "aa"},
          {"variants", {{"a", {{"build_key", "k"}}}, {"b", {{"build_key", "k"}}}}},
          {"variant_order", {"a", "b"}},
          {"cells", cells}};
}

TEST(CalibrateCounts, PoissonNoiseHasAFalsePositiveRateBelowAlpha) {
  // 10 boots of a count drawn from Poisson(1) (a few stray events per boot), 5 A/A runs.
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    std::poisson_distribution<int> pois(1.0);
    std::vector<double> v(10);
    for (auto& x : v) x = pois(rng);
    CalibrationOptions opt;
    opt.splits = 1000;
    opt.seed = seed;
    const Calibration cal = calibrate_from_run(aa_run(v, "count", "count", "tcg"), {}, opt);
    ASSERT_EQ(cal.metrics.size(), 1u);
    const auto& m = cal.metrics[0];
    EXPECT_EQ(m.kind, MetricKind::count);
    EXPECT_EQ(m.n, 10u);
    EXPECT_LE(m.false_positive_rate, 0.05) << "seed " << seed;
    // The permutation test itself is exact: p < alpha in at most alpha of the splits (plus
    // sampling error of 1000 splits).
    EXPECT_LE(m.p_significant_rate, 0.065) << "seed " << seed;
  }
}

TEST(CalibrateCounts, SameTestAndRuleAsCompare) {
  // Pooled {1,1,1,1,1,0,0,0,0,0} events/s: of the 252 equal splits exactly 2 (all ones in one
  // half) are called improved/regressed by compare's count rule (p = 2/252, |B-A| = 1/s > 0.1/s,
  // from or to 0 in every boot). The timing rule would call at most 1 of them (an A median of 0
  // is inconclusive there), so the rate tells the rules apart: 2/252 = 0.0079 vs 0.0040.
  const std::vector<double> v = {1, 0, 1, 0, 1, 0, 1, 0, 1, 0};
  CalibrationOptions opt;
  opt.splits = 20000;
  const Calibration cal = calibrate_from_run(aa_run(v, "1/s", "count", "tcg"), {}, opt);
  ASSERT_EQ(cal.metrics.size(), 1u);
  EXPECT_NEAR(cal.metrics[0].false_positive_rate, 2.0 / 252.0, 0.002);
  EXPECT_NEAR(cal.metrics[0].p_significant_rate, 2.0 / 252.0, 0.002);
  // And compare on the separated split says improved, with that p.
  const Comparison c = compare_run_variants(
      aa_run({1, 0, 1, 0, 1, 0, 1, 0, 1, 0}, "1/s", "count", "tcg"), CompareSettings{});
  ASSERT_EQ(c.metrics.size(), 1u);
  EXPECT_EQ(c.metrics[0].verdict.verdict, Verdict::improved);
  EXPECT_DOUBLE_EQ(c.metrics[0].test.p_value(), 2.0 / 252.0);
}

TEST(CalibrateCounts, AllZeroCountHasNoNoise) {
  const std::vector<double> z(10, 0.0);
  CalibrationOptions opt;
  opt.splits = 200;
  const Calibration cal = calibrate_from_run(aa_run(z, "1/s", "", "kvm"), {}, opt);
  ASSERT_EQ(cal.metrics.size(), 1u);
  EXPECT_EQ(cal.metrics[0].kind, MetricKind::count);  // unit 1/s without "kind"
  EXPECT_DOUBLE_EQ(cal.metrics[0].noise_floor_pct, 0.0);
  EXPECT_DOUBLE_EQ(cal.metrics[0].false_positive_rate, 0.0);
  EXPECT_EQ(calibration_to_json(cal)["metrics"]["m"]["kind"], "count");
}

TEST(CalibrateTiming, TcgThresholdAppliesAsInCompare) {
  // A/A timings with CV 5%, 10 boots: on KVM the 2% threshold is crossed by chance in some
  // splits; under TCG the 25% threshold never is.
  std::mt19937_64 rng(9);
  std::normal_distribution<double> d(7400, 7400 * 0.05);
  std::vector<double> v(10);
  for (auto& x : v) x = d(rng);
  CalibrationOptions opt;
  opt.splits = 1000;
  const Calibration kvm = calibrate_from_run(aa_run(v, "cycles", "", "kvm"), {}, opt);
  const Calibration tcg = calibrate_from_run(aa_run(v, "cycles", "", "tcg"), {}, opt);
  EXPECT_EQ(kvm.metrics[0].kind, MetricKind::timing);
  EXPECT_GT(kvm.metrics[0].false_positive_rate, 0.01);
  EXPECT_DOUBLE_EQ(tcg.metrics[0].false_positive_rate, 0.0);
  EXPECT_DOUBLE_EQ(tcg.metrics[0].p_significant_rate, kvm.metrics[0].p_significant_rate);
}

}  // namespace
}  // namespace isolab
