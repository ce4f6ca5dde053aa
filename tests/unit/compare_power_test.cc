// Power of compare's own primary rule for count primaries (compare/power.h): the exact test it
// simulates, a power that matches the one worked out by hand, and what the plan reports.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "base/error.h"
#include "compare/power.h"
#include "stats/permutation.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

TEST(CountPower, TheExactTestIsComparesOwn) {
  std::mt19937_64 rng(5);
  std::poisson_distribution<long> pois(3);
  for (int k = 0; k < 20; ++k) {
    std::vector<long> a(5), b(5);
    for (auto& x : a) x = pois(rng);
    for (auto& x : b) x = pois(rng);
    const Stratum s{{a.begin(), a.end()}, {b.begin(), b.end()}};
    for (bool greater : {true, false}) {
      const double mine = exact_count_p(a, b, greater);
      const double compares =
          stratified_permutation_test({s}, StratumScore::values, 1000000, 20000, 1,
                                      greater ? Alternative::greater : Alternative::less)
              .p;
      EXPECT_NEAR(mine, compares, 1e-12) << k;
    }
  }
  EXPECT_THROW(exact_count_p(std::vector<long>{-1}, std::vector<long>{1}, true), Error);
}

// vmstat_update at 0.4/s in a 5 s window (2 events a boot on average) removed by the series:
// at 5 boots a side and level 0.05/6 only a full separation (1/252) is significant, which
// needs every A boot to have an event: (1 - e^-2)^5 = 0.48.
TEST(CountPower, MatchesTheHandWorkedPower) {
  CountPowerPlan p;
  p.window_s = 5;
  p.per_side = 5;
  p.level = 0.05 / 6;
  p.replicates = 2000;
  const double by_hand = std::pow(1 - std::exp(-2.0), 5);
  EXPECT_NEAR(count_power(0.4, 0.4, false, p), by_hand, 0.035);
  // Longer windows see it: 20 s (8 events a boot) almost always.
  p.window_s = 20;
  EXPECT_GT(count_power(0.4, 0.4, false, p), 0.99);
  // No change: the rule never fires more often than the level.
  p.window_s = 5;
  EXPECT_LE(count_power(0.4, 0, true, p), p.level + 0.005);
}

TEST(CountPower, TheReportSaysWhatTheWindowAndBootsNeed) {
  CountPowerPlan p;
  p.window_s = 5;
  p.per_side = 5;
  p.level = 0.05 / 6;
  p.replicates = 300;
  const DetectTarget d{0.4, 0.4};
  const CountPowerReport r = count_power_report(d, true, true, p);
  EXPECT_TRUE(r.reachable);
  EXPECT_NEAR(r.best_p, 1.0 / 252, 1e-12);
  ASSERT_TRUE(r.window_needed_good_s);
  EXPECT_GT(*r.window_needed_good_s, 5.0);  // 0.48 at 5 s is short of 0.8
  ASSERT_TRUE(r.smallest_increase);
  const std::string line = count_power_line("x.noise.vmstat_update_per_s[cpu6]", "1/s", d, p, r);
  EXPECT_THAT(line, HasSubstr("x.noise.vmstat_update_per_s[cpu6]: detect 0.4/s from 0.4/s in 5 s "
                              "x 5 boots a side"));
  EXPECT_THAT(line, HasSubstr("a benefit of 0.4/s needs"));
  // 4 boots a side over six primaries: 1/70 is above 0.05/6, reported before the run.
  p.per_side = 4;
  const CountPowerReport four = count_power_report(d, true, true, p);
  EXPECT_FALSE(four.reachable);
  EXPECT_THAT(count_power_line("x", "1/s", d, p, four),
              HasSubstr("CANNOT REACH ALPHA: 4 boots a side give at best p = 0.0143"));
}

}  // namespace
}  // namespace isolab
