// The search of `isolab bisect` with a fake measurer: which prefixes it measures, in which
// order and with how many boots, what it names, and that an inconclusive prefix is measured
// again and never guessed.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "base/error.h"
#include "compare/bisect_search.h"

namespace isolab {
namespace {

// A fake series: the verdict of a prefix from a rule of (prefix, boots); records every call.
struct FakeSeries {
  std::function<Verdict(std::size_t prefix, int boots)> verdict;
  std::vector<std::pair<std::size_t, int>> calls;

  StepMeasurer measurer() {
    return [this](std::size_t prefix, int boots) {
      calls.emplace_back(prefix, boots);
      StepMeasurement m;
      m.verdict = verdict(prefix, boots);
      m.reason = verdict_name(m.verdict);
      m.cells = 2 * boots;
      return m;
    };
  }
};

// Regressed from patch `culprit` on, no significant change before it.
FakeSeries regressing_from(std::size_t culprit) {
  return {[culprit](std::size_t p, int) {
            return p >= culprit ? Verdict::regressed : Verdict::no_change;
          },
          {}};
}

std::vector<std::size_t> prefixes(const BisectOutcome& o) {
  std::vector<std::size_t> v;
  for (const auto& s : o.steps) v.push_back(s.prefix);
  return v;
}

TEST(BisectSearch, NamesTheSecondOfFourInThreeSteps) {
  FakeSeries f = regressing_from(2);
  const BisectOutcome o = bisect_series(4, {}, f.measurer());
  ASSERT_TRUE(o.culprit.has_value()) << o.conclusion;
  EXPECT_EQ(*o.culprit, 2u);
  EXPECT_EQ(o.direction, Verdict::regressed);
  EXPECT_EQ(prefixes(o), (std::vector<std::size_t>{4, 2, 1}));
  EXPECT_EQ(o.steps[0].state, StepState::moved);
  EXPECT_EQ(o.steps[1].state, StepState::moved);
  EXPECT_EQ(o.steps[2].state, StepState::not_moved);
  EXPECT_EQ(o.cells(), 3 * 2 * 4);  // three steps, A and the prefix, 4 boots each
  EXPECT_EQ(o.conclusion, "patch 2 of 4 is the first that moves the metric (regressed)");
}

TEST(BisectSearch, FindsEveryCulpritOfSeriesUpToNine) {
  for (std::size_t n = 1; n <= 9; ++n)
    for (std::size_t culprit = 1; culprit <= n; ++culprit) {
      FakeSeries f = regressing_from(culprit);
      const BisectOutcome o = bisect_series(n, {}, f.measurer());
      ASSERT_TRUE(o.culprit.has_value()) << n << " " << culprit;
      EXPECT_EQ(*o.culprit, culprit) << "series of " << n;
      // The whole series, then a binary search: 1 + ceil(log2 n) steps at most.
      const auto most = 1 + static_cast<std::size_t>(std::ceil(std::log2(double(n))));
      EXPECT_LE(o.steps.size(), most) << n << " " << culprit;
      for (const auto& s : o.steps) EXPECT_EQ(s.boots, 4);
    }
}

TEST(BisectSearch, FollowsAnImprovementToo) {
  FakeSeries f{[](std::size_t p, int) { return p >= 3 ? Verdict::improved : Verdict::no_change; },
               {}};
  const BisectOutcome o = bisect_series(5, {}, f.measurer());
  ASSERT_TRUE(o.culprit.has_value());
  EXPECT_EQ(*o.culprit, 3u);
  EXPECT_EQ(o.direction, Verdict::improved);
}

TEST(BisectSearch, InconclusivePrefixIsMeasuredAgainWithTwiceTheBoots) {
  // Patches 1-2 are inconclusive at 4 boots and decided (moved) at 8.
  FakeSeries f{[](std::size_t p, int boots) {
                 if (p == 2 && boots < 8) return Verdict::inconclusive;
                 return p >= 2 ? Verdict::regressed : Verdict::no_change;
               },
               {}};
  const BisectOutcome o = bisect_series(4, {}, f.measurer());
  EXPECT_EQ(f.calls, (std::vector<std::pair<std::size_t, int>>{{4, 4}, {2, 4}, {2, 8}, {1, 4}}));
  ASSERT_TRUE(o.culprit.has_value());
  EXPECT_EQ(*o.culprit, 2u);
  EXPECT_EQ(o.steps[1].state, StepState::undecided);
  EXPECT_EQ(o.steps[1].attempt, 1);
  EXPECT_EQ(o.steps[2].attempt, 2);
  EXPECT_EQ(o.steps[2].state, StepState::moved);
  EXPECT_EQ(o.cells(), 2 * (4 + 4 + 8 + 4));
}

TEST(BisectSearch, StaysUndecidedRatherThanGuess) {
  FakeSeries f{[](std::size_t p, int) {
                 if (p == 2) return Verdict::inconclusive;
                 return p >= 3 ? Verdict::regressed : Verdict::no_change;
               },
               {}};
  const BisectOutcome o = bisect_series(4, {4, 16}, f.measurer());
  EXPECT_FALSE(o.culprit.has_value());
  EXPECT_EQ(f.calls, (std::vector<std::pair<std::size_t, int>>{{4, 4}, {2, 4}, {2, 8}, {2, 16}}));
  EXPECT_EQ(o.undecided_first, 1u);
  EXPECT_EQ(o.undecided_last, 4u);
  EXPECT_EQ(o.conclusion,
            "undecided: patches 1-2 stay inconclusive at 16 boots per variant; the first patch "
            "that moves the metric is one of 1-4");
}

TEST(BisectSearch, MaxBootsBoundsTheLastAttempt) {
  FakeSeries f{[](std::size_t, int) { return Verdict::inconclusive; }, {}};
  const BisectOutcome o = bisect_series(4, {3, 10}, f.measurer());
  // 3, then 6; 12 would exceed 10.
  EXPECT_EQ(f.calls, (std::vector<std::pair<std::size_t, int>>{{4, 3}, {4, 6}}));
  EXPECT_FALSE(o.culprit.has_value());
  EXPECT_EQ(o.undecided_first, 0u);
  EXPECT_NE(o.conclusion.find("the whole series stays inconclusive at 6 boots per variant"),
            std::string::npos)
      << o.conclusion;
}

TEST(BisectSearch, SeriesThatDoesNotMoveTheMetricEndsAfterOneStep) {
  FakeSeries f{[](std::size_t, int) { return Verdict::no_change; }, {}};
  const BisectOutcome o = bisect_series(4, {}, f.measurer());
  EXPECT_FALSE(o.culprit.has_value());
  EXPECT_EQ(o.steps.size(), 1u);
  EXPECT_EQ(o.direction, Verdict::inconclusive);
  EXPECT_NE(o.conclusion.find("no significant change"), std::string::npos) << o.conclusion;
  EXPECT_NE(o.conclusion.find("nothing to bisect"), std::string::npos) << o.conclusion;
}

TEST(BisectSearch, OppositeVerdictCountsAsNotMovedAndIsSaid) {
  // Patches 1-2 improve what the whole series regresses.
  FakeSeries f{[](std::size_t p, int) {
                 if (p == 2) return Verdict::improved;
                 return p >= 3 ? Verdict::regressed : Verdict::no_change;
               },
               {}};
  const BisectOutcome o = bisect_series(4, {}, f.measurer());
  ASSERT_TRUE(o.culprit.has_value());
  EXPECT_EQ(*o.culprit, 3u);
  EXPECT_EQ(o.steps[1].state, StepState::moved_other_way);
  EXPECT_NE(o.conclusion.find("patches 1-2 moved it the other way"), std::string::npos)
      << o.conclusion;
}

TEST(BisectSearch, ReportsEveryAttemptAsItEnds) {
  FakeSeries f = regressing_from(2);
  std::vector<std::size_t> seen;
  bisect_series(4, {}, f.measurer(),
                [&](const BisectOutcome& o) { seen.push_back(o.steps.size()); });
  EXPECT_EQ(seen, (std::vector<std::size_t>{1, 2, 3}));
}

TEST(BisectSearch, MeasurerErrorReachesTheCaller) {
  StepMeasurer failing = [](std::size_t prefix, int) -> StepMeasurement {
    if (prefix == 2) throw Error("patches 1-2 do not build");
    return {Verdict::regressed, "", 5, {}, 8};
  };
  EXPECT_THROW(bisect_series(4, {}, failing), Error);
}

TEST(BisectSearch, RefusesSettingsOutOfRange) {
  FakeSeries f = regressing_from(1);
  EXPECT_THROW(bisect_series(0, {}, f.measurer()), Error);
  EXPECT_THROW(bisect_series(3, {0, 16}, f.measurer()), Error);
  EXPECT_THROW(bisect_series(3, {8, 4}, f.measurer()), Error);
  EXPECT_TRUE(f.calls.empty());
}

}  // namespace
}  // namespace isolab
