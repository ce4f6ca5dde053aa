// The search of `isolab bisect` with a fake measurer: which prefixes it measures, in which
// order and with how many boots, what it names, and that an inconclusive prefix is measured
// again and never guessed.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
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
    return [this](std::size_t prefix, int boots, double) {
      calls.emplace_back(prefix, boots);
      StepMeasurement m;
      m.verdict = verdict(prefix, boots);
      m.reason = verdict_name(m.verdict);
      m.cells = 2 * boots;
      return m;
    };
  }
};

// The settings the search tests were written with: 4 boots first, up to 16.
const BisectSettings kFourBoots{4, 16};

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
  const BisectOutcome o = bisect_series(4, kFourBoots, f.measurer());
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
      const BisectOutcome o = bisect_series(n, kFourBoots, f.measurer());
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
  const BisectOutcome o = bisect_series(5, kFourBoots, f.measurer());
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
  const BisectOutcome o = bisect_series(4, kFourBoots, f.measurer());
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
  const BisectOutcome o = bisect_series(4, kFourBoots, f.measurer());
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
  const BisectOutcome o = bisect_series(4, kFourBoots, f.measurer());
  ASSERT_TRUE(o.culprit.has_value());
  EXPECT_EQ(*o.culprit, 3u);
  EXPECT_EQ(o.steps[1].state, StepState::moved_other_way);
  EXPECT_NE(o.conclusion.find("patches 1-2 moved it the other way"), std::string::npos)
      << o.conclusion;
}

TEST(BisectSearch, ReportsEveryAttemptAsItEnds) {
  FakeSeries f = regressing_from(2);
  std::vector<std::size_t> seen;
  bisect_series(4, kFourBoots, f.measurer(),
                [&](const BisectOutcome& o) { seen.push_back(o.steps.size()); });
  EXPECT_EQ(seen, (std::vector<std::size_t>{1, 2, 3}));
}

TEST(BisectSearch, MeasurerErrorReachesTheCaller) {
  StepMeasurer failing = [](std::size_t prefix, int, double) -> StepMeasurement {
    if (prefix == 2) throw Error("patches 1-2 do not build");
    return {Verdict::regressed, "", 5, {}, 8};
  };
  EXPECT_THROW(bisect_series(4, kFourBoots, failing), Error);
}

TEST(BisectSearch, RefusesSettingsOutOfRange) {
  FakeSeries f = regressing_from(1);
  EXPECT_THROW(bisect_series(0, kFourBoots, f.measurer()), Error);
  EXPECT_THROW(bisect_series(3, {0, 16}, f.measurer()), Error);
  EXPECT_THROW(bisect_series(3, {8, 4}, f.measurer()), Error);
  EXPECT_TRUE(f.calls.empty());
}

TEST(BisectSearch, DecisionsAreOneAndTheCeilingOfLog2OfThePatches) {
  EXPECT_EQ(bisect_decisions(1), 1u);
  EXPECT_EQ(bisect_decisions(2), 2u);
  EXPECT_EQ(bisect_decisions(4), 3u);
  EXPECT_EQ(bisect_decisions(5), 4u);
  EXPECT_EQ(bisect_decisions(8), 4u);
  EXPECT_EQ(bisect_decisions(64), 7u);
  EXPECT_EQ(bisect_attempts({5, 20}), 3);
  EXPECT_EQ(bisect_attempts({5, 19}), 2);
  EXPECT_EQ(bisect_attempts({4, 4}), 1);
}

// Four patches: three decisions share alpha 0.05; the attempts of one spend 3/4, 3/16, 1/16.
TEST(BisectSearch, EachDecisionSpendsItsShareFrontLoaded) {
  const BisectSettings s{5, 20, 0.05};
  const double share = 0.05 / 3;
  EXPECT_DOUBLE_EQ(step_level(4, s, 1), share * 0.75);
  EXPECT_DOUBLE_EQ(step_level(4, s, 2), share * 0.1875);
  EXPECT_DOUBLE_EQ(step_level(4, s, 3), share * 0.0625);
  EXPECT_DOUBLE_EQ(step_level(4, s, 1) + step_level(4, s, 2) + step_level(4, s, 3), share);
  // One attempt only: it spends the whole share.
  EXPECT_DOUBLE_EQ(step_level(4, {5, 5, 0.05}, 1), share);
  // 5 boots a side reach the first level of a 64-patch series; 4 do not reach that of 4 patches.
  EXPECT_LT(1.0 / 252, step_level(64, s, 1) + 1e-12);
  EXPECT_GT(1.0 / 70, step_level(4, {4, 16, 0.05}, 1));
}

TEST(BisectSearch, TheMeasurerIsAskedForTheLevelAndEachStepRecordsIt) {
  std::vector<double> asked;
  StepMeasurer m = [&](std::size_t p, int boots, double level) {
    asked.push_back(level);
    StepMeasurement r;
    r.verdict = p == 2 && boots < 10 ? Verdict::inconclusive
                                     : (p >= 2 ? Verdict::regressed : Verdict::no_change);
    r.cells = 2 * boots;
    return r;
  };
  const BisectSettings s{5, 20, 0.05};
  const BisectOutcome o = bisect_series(4, s, m);
  ASSERT_EQ(o.steps.size(), 4u);  // 4, 2 (5 boots), 2 (10 boots), 1
  EXPECT_EQ(asked, (std::vector<double>{step_level(4, s, 1), step_level(4, s, 1),
                                        step_level(4, s, 2), step_level(4, s, 1)}));
  for (std::size_t i = 0; i < o.steps.size(); ++i) EXPECT_DOUBLE_EQ(o.steps[i].level, asked[i]);
  EXPECT_EQ(*o.culprit, 2u);
}

TEST(BisectSearch, RefusesAnAlphaOutsideZeroToOne) {
  FakeSeries f = regressing_from(1);
  EXPECT_THROW(bisect_series(3, {5, 20, 0.0}, f.measurer()), Error);
  EXPECT_THROW(bisect_series(3, {5, 20, 1.0}, f.measurer()), Error);
}

// The wrong-culprit rate by simulation. A fake measurer whose verdicts on a prefix that does
// not move the metric are as bad as a valid test allows: "regressed" with probability equal to
// the level it is judged at, otherwise "no significant change" or inconclusive (then measured
// again) half and half; a prefix that moves is seen moved with probability 0.6 per attempt. The
// culprit is the last of 8 patches, so three decisions of the binary search meet unmoved
// prefixes. Judged at the levels the search asks for, the search names a wrong patch in at
// most alpha of the searches; judged at alpha in every attempt (the rule before the budget),
// in about a fifth of them.
double wrong_culprit_rate(bool use_level) {
  const BisectSettings s{5, 20, 0.05};
  const std::size_t patches = 8, culprit = 8;
  std::mt19937_64 rng(20261205);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  StepMeasurer m = [&](std::size_t p, int, double level) {
    const double a = use_level ? level : s.alpha;
    StepMeasurement r;
    const double x = u(rng);
    if (p >= culprit)
      r.verdict = x < 0.6 ? Verdict::regressed : Verdict::inconclusive;
    else
      r.verdict =
          x < a ? Verdict::regressed : (x < a + 0.5 ? Verdict::no_change : Verdict::inconclusive);
    return r;
  };
  const int searches = 20000;
  int wrong = 0;
  for (int i = 0; i < searches; ++i) {
    const BisectOutcome o = bisect_series(patches, s, m);
    if (o.culprit && *o.culprit != culprit) ++wrong;
  }
  return static_cast<double>(wrong) / searches;
}

TEST(BisectSearch, NamesAWrongPatchInAtMostAlphaOfSimulatedSearches) {
  const double with_budget = wrong_culprit_rate(true);
  const double alpha_per_attempt = wrong_culprit_rate(false);
  RecordProperty("wrong_culprit_rate_with_budget", std::to_string(with_budget));
  RecordProperty("wrong_culprit_rate_alpha_per_attempt", std::to_string(alpha_per_attempt));
  EXPECT_LE(with_budget, 0.05) << "per-attempt alpha gave " << alpha_per_attempt;
  EXPECT_GT(alpha_per_attempt, 0.1) << "the fake no longer provokes the error";
}

}  // namespace
}  // namespace isolab
