// The host-load rule: did A's and B's boots run under different load?
#include <gtest/gtest.h>

#include "compare/host_load.h"
#include "report/host_load.h"
#include "results/result.h"

namespace isolab {
namespace {

std::vector<results::CellHostLoad> loads(const std::vector<double>& loadavg,
                                         std::optional<double> pressure = std::nullopt) {
  std::vector<results::CellHostLoad> out;
  for (double l : loadavg) out.push_back({"c", l, pressure, std::nullopt});
  return out;
}

TEST(HostLoad, SeparatedLoadsDiffer) {
  // 5 boots each, every B boot under more load: p = 2/252 = 0.0079 < 0.05 (one measure).
  const auto c =
      compare_host_loads(loads({1.0, 1.1, 0.9, 1.2, 1.0}), loads({3.0, 3.2, 2.9, 3.1, 3.3}));
  ASSERT_EQ(c.measures.size(), 1u);
  EXPECT_NEAR(c.measures[0].p, 2.0 / 252, 1e-12);
  EXPECT_TRUE(c.differ);
  const std::string line = host_load_flag_line(c);
  EXPECT_NE(line.find("different host load: 1-min loadavg A 1.04, B 3.1"), std::string::npos)
      << line;
  EXPECT_NE(line.find("may be the host's"), std::string::npos);
}

TEST(HostLoad, InterleavedLoadsAreAlike) {
  const auto c =
      compare_host_loads(loads({1.0, 3.0, 1.1, 2.9, 2.0}), loads({2.9, 1.2, 3.1, 1.0, 2.0}));
  EXPECT_FALSE(c.differ);
  EXPECT_EQ(host_load_flag_line(c).rfind("host load: alike in A and B (1-min loadavg", 0), 0u);
}

TEST(HostLoad, BonferroniOverTheMeasuresTested) {
  // loadavg separated (p = 2/252 = 0.0079) with a second measure present: 0.0079 < 0.05/2.
  auto a = loads({1, 1.1, 0.9, 1.2, 1.0}, 5.0), b = loads({3, 3.2, 2.9, 3.1, 3.3}, 5.0);
  a[0].cpu_pressure_some_avg10 = 6.0;
  const auto c = compare_host_loads(a, b);
  EXPECT_EQ(c.measures.size(), 2u);
  EXPECT_TRUE(c.differ);
  // 3 vs 3 fully separated: p = 2/20 = 0.1, never below alpha.
  EXPECT_FALSE(compare_host_loads(loads({1, 1, 1.1}), loads({3, 3, 3.1})).differ);
}

TEST(HostLoad, ReadsTheRunsCellsAndSaysWhenNotRecorded) {
  nlohmann::json run = {{"cells", nlohmann::json::array()}};
  auto cell = [](const char* id, const char* v, double l0, double l1, bool warmup) {
    return nlohmann::json{{"id", id},
                          {"variant", v},
                          {"status", "ok"},
                          {"warmup", warmup},
                          {"host_load",
                           {{"loadavg_start", {l0, 0, 0}},
                            {"loadavg_end", {l1, 0, 0}},
                            {"cpu_pressure_some_avg10_start", nullptr},
                            {"cpu_pressure_some_avg10_end", 40.0},
                            {"steal_s", 0.5}}}};
  };
  run["cells"].push_back(cell("a-r0", "a", 1, 3, false));
  run["cells"].push_back(cell("a-w0", "a", 9, 9, true));
  run["cells"].push_back({{"id", "a-r1"}, {"variant", "a"}, {"status", "ok"}});
  const auto a = variant_host_loads(results::result_from_json(run), "a");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_DOUBLE_EQ(*a[0].loadavg_1min, 2.0);
  EXPECT_DOUBLE_EQ(*a[0].cpu_pressure_some_avg10, 40.0);
  EXPECT_DOUBLE_EQ(*a[0].steal_s, 0.5);
  EXPECT_TRUE(variant_host_loads(results::result_from_json(run), "b").empty());
  const results::RunResult r = results::result_from_json(run);
  EXPECT_EQ(host_load_flag_line(r, "a", r, "b").rfind("host load: not recorded", 0), 0u);
}

}  // namespace
}  // namespace isolab
