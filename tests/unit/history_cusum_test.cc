// The CUSUM of a nightly series (history/cusum.h): a creep that no single night shows raises an
// alarm, one bad night and nights well inside the margin do not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "history/cusum.h"
#include "report/cusum.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

// An anchor of 1000 and nights of `pct` percent above it.
std::vector<SeriesPoint> nights(std::vector<double> pct) {
  std::vector<SeriesPoint> s{{"r0", "2026-12-01T00:00:00Z", 1000}};
  for (std::size_t i = 0; i < pct.size(); ++i)
    s.push_back({"r" + std::to_string(i + 1), "", 1000 * (1 + pct[i] / 100)});
  return s;
}

CusumSettings one_percent() {
  CusumSettings s;
  s.margin_pct = 1;
  return s;
}

TEST(Cusum, FiveNightsOfPlusZeroPointNinePercentAlarmOnTheFourth) {
  const Cusum c = cusum("m", nights({0.9, 0.9, 0.9, 0.9, 0.9}), one_percent());
  ASSERT_EQ(c.points.size(), 5u);
  EXPECT_DOUBLE_EQ(c.margin, 10);
  EXPECT_NEAR(c.points[0].s, 0.4, 1e-9);
  EXPECT_NEAR(c.points[2].s, 1.2, 1e-9);
  EXPECT_FALSE(c.points[2].alarm);
  EXPECT_NEAR(c.points[3].s, 1.6, 1e-9);
  EXPECT_TRUE(c.points[3].alarm);
  EXPECT_TRUE(c.alarm);
  EXPECT_THAT(render_cusum_text(c), HasSubstr("ALARM"));
}

TEST(Cusum, OneBadNightOrASmallCreepNeverAlarms) {
  EXPECT_FALSE(cusum("m", nights({0.9, 0, 0, 0, 0}), one_percent()).alarm);
  EXPECT_FALSE(cusum("m", nights({0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4}), one_percent()).alarm);
  // Good nights reset the sum: it never goes below 0.
  const Cusum c = cusum("m", nights({-5, 0.9, 0.9, 0.9}), one_percent());
  EXPECT_DOUBLE_EQ(c.points[0].s, 0);
  EXPECT_FALSE(c.alarm);
}

TEST(Cusum, LowerIsBadTurnsTheDirection) {
  CusumSettings s = one_percent();
  s.higher_is_bad = false;
  EXPECT_FALSE(cusum("m", nights({0.9, 0.9, 0.9, 0.9, 0.9}), s).alarm);
  EXPECT_TRUE(cusum("m", nights({-0.9, -0.9, -0.9, -0.9, -0.9}), s).alarm);
}

TEST(Cusum, AnchorIsNamedOrRefusedAndACountUsesItsFloor) {
  CusumSettings s = one_percent();
  s.anchor_run = "r2";
  const Cusum c = cusum("m", nights({5, 0, 0.9, 0.9, 0.9, 0.9}), s);
  EXPECT_EQ(c.anchor_run, "r2");
  EXPECT_EQ(c.points.size(), 4u);  // the nights after the anchor
  s.anchor_run = "r9";
  EXPECT_THROW(cusum("m", nights({1}), s), Error);

  // A count of 0 per second at the anchor: the margin is the floor, not 1% of 0.
  CusumSettings f;
  f.margin_pct = 1;
  f.floor = 0.5;
  const Cusum z = cusum("n", {{"a", "", 0}, {"b", "", 0.4}, {"c", "", 0.4}, {"d", "", 0.4}}, f);
  EXPECT_DOUBLE_EQ(z.margin, 0.5);
  EXPECT_FALSE(z.alarm);  // z = 0.8 a night: S = 0.3, 0.6, 0.9
  f.floor = 0;
  EXPECT_THAT(cusum("n", {{"a", "", 0}, {"b", "", 1}}, f).note, HasSubstr("margin is 0"));
}

TEST(Cusum, NoSeriesSaysWhy) {
  EXPECT_THAT(cusum("m", {}, one_percent()).note, HasSubstr("no run"));
  EXPECT_THAT(cusum("m", nights({}), one_percent()).note, HasSubstr("only the anchor"));
  EXPECT_FALSE(cusum("m", nights({}), one_percent()).alarm);
}

}  // namespace
}  // namespace isolab
