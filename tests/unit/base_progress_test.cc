// Progress lines (base/progress.h) with an injected clock: throttling, ETA, the three renderings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "base/progress.h"

using namespace isolab;
using ::testing::HasSubstr;

namespace {

struct FakeClock {
  double t = 1000;
  Progress::Clock fn() {
    return [this] { return t; };
  }
};

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST(Eta, FromWorkDoneSoFar) {
  // 100 of 400 steps in 50 s: 300 left at 2 steps/s.
  EXPECT_DOUBLE_EQ(*eta_seconds(50, 100, 0, 400), 150);
  // A resumed task: 4 cells were done before; 2 more took 120 s; 4 left.
  EXPECT_DOUBLE_EQ(*eta_seconds(120, 6, 4, 10), 240);
  EXPECT_FALSE(eta_seconds(10, 0, 0, 400));            // nothing done yet
  EXPECT_FALSE(eta_seconds(10, 50, 0, std::nullopt));  // total unknown
  EXPECT_FALSE(eta_seconds(10, 500, 0, 400));          // past the estimate
}

TEST(Progress, PlainLinesAtMostEveryIntervalAndAtLeastWhenDue) {
  FakeClock clk;
  std::ostringstream out;
  Progress p(ProgressMode::plain, out, clk.fn(), 10.0);
  int shown = 0;
  // Polled every 200 ms for 60 s, 10 steps per second out of 1000.
  for (int i = 0; i <= 300; ++i) {
    clk.t = 1000 + i / 5.0;  // exact at whole seconds
    if (p.update("build vanilla", i * 2.0, 1000.0, "steps")) ++shown;
  }
  EXPECT_EQ(shown, 7);  // t = 0, 10, 20, ..., 60
  auto l = lines_of(out.str());
  ASSERT_EQ(l.size(), 7u);
  EXPECT_EQ(l[0], "isolab: build vanilla: 0/1000 steps (0%), 0 s");
  EXPECT_EQ(l[1], "isolab: build vanilla: 100/1000 steps (10%), 10 s, ETA 1 min 30 s");
  EXPECT_EQ(l[6], "isolab: build vanilla: 600/1000 steps (60%), 1 min 00 s, ETA 40 s");
}

TEST(Eta, MedianOfUnitTimes) {
  EXPECT_DOUBLE_EQ(*median_unit_eta({60}, 1, 10), 540);
  EXPECT_DOUBLE_EQ(*median_unit_eta({60, 120}, 2, 10), 720);      // even: the middle two
  EXPECT_DOUBLE_EQ(*median_unit_eta({56, 119, 74}, 3, 10), 518);  // 74 x 7
  EXPECT_FALSE(median_unit_eta({}, 0, 10));
  EXPECT_FALSE(median_unit_eta({60}, 10, 10));
  EXPECT_FALSE(median_unit_eta({60}, 1, std::nullopt));
}

// Cells (forced updates at each end): one slow cell among 60 s ones does not move the ETA,
// where elapsed / done would (75 s per cell here).
TEST(Progress, CellsEtaFromTheMedianCell) {
  FakeClock clk;
  std::ostringstream out;
  Progress q(ProgressMode::json, out, clk.fn());
  double done = 0;
  q.update("cells", done, 10.0, "cells", true);
  for (double d : {60.0, 120.0, 60.0, 60.0}) {
    clk.t += d;
    q.update("cells", ++done, 10.0, "cells", true);
  }
  auto last = nlohmann::json::parse(lines_of(out.str()).back());
  EXPECT_EQ(last["done"], 4.0);
  EXPECT_DOUBLE_EQ(last["eta_s"].get<double>(), 360.0);  // median 60 s x 6 cells
  EXPECT_DOUBLE_EQ(last["elapsed_s"].get<double>(), 300.0);
}

TEST(Progress, ForcedUpdatesAndUnknownTotal) {
  FakeClock clk;
  std::ostringstream out;
  Progress p(ProgressMode::plain, out, clk.fn());
  p.update("cells", 0, 4.0, "cells", true);
  clk.t += 65;
  p.update("cells", 1, 4.0, "cells", true);  // within 10 s of nothing: forced anyway
  clk.t += 1;
  p.update("cells", 2, 4.0, "cells", true);
  p.update("build x", 12, std::nullopt, "steps");
  auto l = lines_of(out.str());
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[1], "isolab: cells: 1/4 cells (25%), 1 min 05 s, ETA 3 min 15 s");
  EXPECT_EQ(l[2], "isolab: cells: 2/4 cells (50%), 1 min 06 s, ETA 1 min 06 s");
  EXPECT_EQ(l[3], "isolab: build x: 12 steps, 0 s");
}

TEST(Progress, HundredPercentOnlyWhenDone) {
  EXPECT_EQ(Progress::line_text("b", 1200, 990.0, "steps", 30, std::nullopt),
            "b: 1200/990 steps (99%), 30 s");
  EXPECT_EQ(Progress::line_text("cells", 4, 4.0, "cells", 539, std::nullopt),
            "cells: 4/4 cells (100%), 8 min 59 s");
}

TEST(Progress, JsonOneObjectPerLine) {
  FakeClock clk;
  std::ostringstream out;
  Progress p(ProgressMode::json, out, clk.fn());
  p.message("variant vanilla: kernel");
  p.update("build vanilla", 0, 400.0, "steps");
  clk.t += 20;
  p.update("build vanilla", 100, 400.0, "steps");
  p.update("build other", 7, std::nullopt, "steps");
  auto l = lines_of(out.str());
  ASSERT_EQ(l.size(), 4u);
  auto m = nlohmann::json::parse(l[0]);
  EXPECT_EQ(m["event"], "message");
  EXPECT_EQ(m["text"], "variant vanilla: kernel");
  auto j = nlohmann::json::parse(l[2]);
  EXPECT_EQ(j["event"], "progress");
  EXPECT_EQ(j["task"], "build vanilla");
  EXPECT_EQ(j["done"], 100);
  EXPECT_EQ(j["total"], 400);
  EXPECT_EQ(j["unit"], "steps");
  EXPECT_DOUBLE_EQ(j["percent"].get<double>(), 25);
  EXPECT_DOUBLE_EQ(j["elapsed_s"].get<double>(), 20);
  EXPECT_DOUBLE_EQ(j["eta_s"].get<double>(), 60);
  auto u = nlohmann::json::parse(l[3]);
  EXPECT_FALSE(u.contains("total"));
  EXPECT_FALSE(u.contains("percent"));
  EXPECT_FALSE(u.contains("eta_s"));
}

TEST(Progress, TtyRedrawsOneLineAndKeepsMessagesAbove) {
  FakeClock clk;
  std::ostringstream out;
  Progress p(ProgressMode::tty, out, clk.fn(), 10.0, 0.25);
  p.update("build v", 1, 10.0, "steps");
  clk.t += 0.1;
  EXPECT_FALSE(p.update("build v", 2, 10.0, "steps"));  // within the tty interval
  clk.t += 0.2;
  EXPECT_TRUE(p.update("build v", 3, 10.0, "steps"));
  p.message("hello");
  p.finish("build v");
  const std::string s = out.str();
  EXPECT_THAT(s, HasSubstr("\r\x1b[Kisolab: build v: 1/10 steps (10%), 0 s"));
  EXPECT_THAT(s, HasSubstr("\r\x1b[Kisolab: build v: 3/10 steps (30%)"));
  // The message erases the status line, prints itself, then redraws the status line.
  EXPECT_THAT(s, HasSubstr("\r\x1b[Kisolab: hello\nisolab: build v: 3/10 steps"));
  EXPECT_EQ(s.substr(s.size() - 4), "\r\x1b[K");   // finish erases it
  EXPECT_EQ(s.find('\n'), s.find("hello\n") + 5);  // no newline from the updates
}

TEST(Progress, QuietWritesNothing) {
  FakeClock clk;
  std::ostringstream out;
  Progress p(ProgressMode::quiet, out, clk.fn());
  p.message("x");
  EXPECT_FALSE(p.update("t", 1, 2.0, "steps", true));
  EXPECT_EQ(out.str(), "");
}

TEST(Progress, ModeFromOptions) {
  EXPECT_EQ(progress_mode("json", true, 2), ProgressMode::quiet);
  EXPECT_EQ(progress_mode("json", false, 2), ProgressMode::json);
  EXPECT_EQ(progress_mode("text", false, -1), ProgressMode::plain);  // not a tty
}

TEST(Duration, Formats) {
  EXPECT_EQ(format_duration(42.4), "42 s");
  EXPECT_EQ(format_duration(185), "3 min 05 s");
  EXPECT_EQ(format_duration(3720), "1 h 02 min");
}
