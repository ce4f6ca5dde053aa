// stress-ng parsers against real captures (tests/data/stress-ng/host-*, stress-ng 0.15.06 on the
// build host) and public inputs restated in docs/sources.md [s1], [s2].
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "base/files.h"
#include "parse/stressng.h"
#include "parse/yaml_subset.h"

namespace isolab {
namespace {

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/stress-ng/" + name);
}

TEST(StressngYaml, RealCpuRun) {
  auto r = parse_stressng_yaml(data("host-cpu2.yaml"));
  EXPECT_EQ(r.format, "yaml");
  EXPECT_EQ(r.version, "0.15.06");
  ASSERT_EQ(r.stressors.size(), 1u);
  const auto& s = r.stressors[0];
  EXPECT_EQ(s.stressor, "cpu");
  EXPECT_EQ(s.bogo_ops, 6941);
  EXPECT_DOUBLE_EQ(*s.bogo_ops_per_s_usr_sys, 2274.472949);
  EXPECT_DOUBLE_EQ(*s.bogo_ops_per_s_real, 2308.802331);
  EXPECT_DOUBLE_EQ(*s.wall_clock_s, 3.006321);
  EXPECT_DOUBLE_EQ(*s.user_s, 2.983494);
  EXPECT_DOUBLE_EQ(*s.system_s, 0.068202);
  EXPECT_DOUBLE_EQ(*s.cpu_usage_per_instance_pct, 50.754667);
  EXPECT_DOUBLE_EQ(*s.max_rss_kb, 6552);
  EXPECT_FALSE(r.times.has_value());
  EXPECT_TRUE(r.notes.empty());
  auto m = stressng_metrics(r);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m.at("cpu.bogo_ops_per_s_real").values, std::vector<double>{2308.802331});
  EXPECT_EQ(m.at("cpu.bogo_ops_per_s_real").unit, "bogo ops/s");
  EXPECT_FALSE(m.at("cpu.bogo_ops_per_s_real").lower_is_better);
  EXPECT_EQ(m.at("cpu.bogo_ops_per_s_real").aggregate, "sum");
  EXPECT_EQ(m.at("cpu.bogo_ops_per_s_usr_sys").values, std::vector<double>{2274.472949});
  EXPECT_EQ(m.at("cpu.bogo_ops").values, std::vector<double>{6941});
  EXPECT_EQ(m.at("cpu.bogo_ops").unit, "bogo ops");
}

TEST(StressngYaml, RealTwoStressorsWithTimesAndExtras) {
  auto r = parse_stressng_yaml(data("host-cpu-mlock-times.yaml"));
  ASSERT_EQ(r.stressors.size(), 2u);
  EXPECT_EQ(r.stressors[0].stressor, "cpu");
  EXPECT_DOUBLE_EQ(*r.stressors[0].system_s, 0);  // 0 system time but usr time: rate is real
  EXPECT_DOUBLE_EQ(*r.stressors[0].bogo_ops_per_s_usr_sys, 2309.076390);
  const auto& ml = r.stressors[1];
  EXPECT_EQ(ml.stressor, "mlock");
  EXPECT_EQ(ml.bogo_ops, 1);
  EXPECT_DOUBLE_EQ(ml.extra.at("nanosecs-per-mlock-call"), 2980.232239);
  EXPECT_DOUBLE_EQ(ml.extra.at("nanosecs-per-munlock-call"), 0);
  ASSERT_TRUE(r.times.has_value());
  EXPECT_DOUBLE_EQ(*r.times->run_time_s, 2.490218);
  EXPECT_DOUBLE_EQ(*r.times->available_cpu_s, 4.980435);
  EXPECT_EQ(r.times->cpus(), 2);
}

// [s1]: flow style, zero CPU time accounted: the usr+sys rate is missing, never 0.
TEST(StressngYaml, S1ZeroUsrSysIsNotAccounted) {
  auto r = parse_stressng_yaml(
      "---\n"
      "metrics: [ {stressor: clone, bogo-ops: 38891, bogo-ops-per-second-usr-sys-time: 0.000000, "
      "bogo-ops-per-second-real-time: 1341.045392, wall-clock-time: 29.000510, user-time: "
      "0.000000, "
      "system-time: 0.000000, cpu-usage-per-instance: 0.000000} ]\n"
      "...\n");
  ASSERT_EQ(r.stressors.size(), 1u);
  const auto& s = r.stressors[0];
  EXPECT_EQ(s.stressor, "clone");
  EXPECT_FALSE(s.bogo_ops_per_s_usr_sys.has_value());
  EXPECT_NEAR(*s.bogo_ops / *s.wall_clock_s, 1341.05, 0.005);
  EXPECT_DOUBLE_EQ(*s.bogo_ops_per_s_real, 1341.045392);
  EXPECT_THAT(r.notes, testing::Contains(testing::HasSubstr("not accounted")));
  std::vector<std::string> notes;
  auto m = stressng_metrics(r, &notes);
  EXPECT_EQ(m.count("clone.bogo_ops_per_s_usr_sys"), 0u);
  EXPECT_EQ(m.at("clone.bogo_ops_per_s_real").values, std::vector<double>{1341.045392});
  EXPECT_THAT(notes, testing::Contains("stress-ng: clone.bogo_ops_per_s_usr_sys: no value"));
}

TEST(StressngText, RealBriefWithTimes) {
  auto r = parse_stressng_text(data("host-cpu2-brief-times.txt"));
  ASSERT_EQ(r.stressors.size(), 1u);
  EXPECT_EQ(r.stressors[0].bogo_ops, 6856);
  EXPECT_DOUBLE_EQ(*r.stressors[0].wall_clock_s, 3.00);
  EXPECT_DOUBLE_EQ(*r.stressors[0].bogo_ops_per_s_real, 2284.64);
  EXPECT_DOUBLE_EQ(*r.stressors[0].bogo_ops_per_s_usr_sys, 2303.24);
  ASSERT_TRUE(r.times.has_value());
  EXPECT_DOUBLE_EQ(*r.times->run_time_s, 3.00);
  EXPECT_DOUBLE_EQ(*r.times->available_cpu_s, 6.00);
  EXPECT_DOUBLE_EQ(*r.times->user_s, 2.97);
  EXPECT_EQ(r.times->cpus(), 2);
}

TEST(StressngText, RealFullMetricsAndMiscRowsSkipped) {
  auto r = parse_stressng_text(data("host-cpu2-metrics.txt"));
  ASSERT_EQ(r.stressors.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.stressors[0].cpu_usage_per_instance_pct, 50.75);
  EXPECT_DOUBLE_EQ(*r.stressors[0].max_rss_kb, 6552);
  auto two = parse_stressng_text(data("host-cpu-mlock-brief-times.txt"));
  ASSERT_EQ(two.stressors.size(), 2u);  // the "nanosecs per mlock call" rows are not stressors
  EXPECT_EQ(two.stressors[1].stressor, "mlock");
  EXPECT_DOUBLE_EQ(*two.stressors[1].bogo_ops_per_s_usr_sys, 0.70);
  EXPECT_EQ(two.times->cpus(), 2);
}

// [s2]: the rows before and after "mm: vmscan: make global slab shrink lockless", one with the
// "stress-ng: info: [pid]" prefix and one without.
TEST(StressngText, S2RelativeChange) {
  auto before = parse_stressng_text(
      "stress-ng: info:  [4321] stressor       bogo ops real time  usr time  sys time   bogo ops/s "
      "    bogo ops/s\n"
      "stress-ng: info:  [4321]                           (secs)    (secs)    (secs)   (real time) "
      "(usr+sys time)\n"
      "stress-ng: info:  [4321] ramfs 880623 60.02 7.71 226.93 14671.45 3753.09\n"
      "stress-ng: info:  [4321] for a 60.03s run time:\n"
      "stress-ng: info:  [4321]    5762.40s available CPU time\n");
  auto after = parse_stressng_text("ramfs 847562 60.02 7.44 230.22 14120.66 3566.23\n");
  ASSERT_EQ(before.stressors.size(), 1u);
  ASSERT_EQ(after.stressors.size(), 1u);
  auto b = stressng_metrics(before), a = stressng_metrics(after);
  auto change = [&](const std::string& name) {
    double x = reduce_metric(b.at(name)), y = reduce_metric(a.at(name));
    return (y - x) / x * 100;
  };
  EXPECT_NEAR(change("ramfs.bogo_ops_per_s_real"), -3.75, 0.005);
  EXPECT_NEAR(change("ramfs.bogo_ops_per_s_usr_sys"), -4.98, 0.005);
  EXPECT_EQ(before.times->cpus(), 96);
  EXPECT_FALSE(after.times.has_value());
}

TEST(StressngYamlSubset, BlockFlowAndQuoting) {
  auto j = parse_yaml_subset(
      "---\n"
      "a:\n"
      "  b: 'it''s #1'\n"
      "  c: \"x\\\"y\"\n"
      "  d: plain # comment\n"
      "list:\n"
      "- one\n"
      "- k: 1\n"
      "  l: [1, {m: 2}]\n"
      "empty:\n"
      "...\n"
      "ignored: after the end\n");
  EXPECT_EQ(j["a"]["b"], "it's #1");
  EXPECT_EQ(j["a"]["c"], "x\"y");
  EXPECT_EQ(j["a"]["d"], "plain");
  EXPECT_EQ(j["list"][0], "one");
  EXPECT_EQ(j["list"][1]["k"], "1");
  EXPECT_EQ(j["list"][1]["l"][1]["m"], "2");
  EXPECT_TRUE(j["empty"].is_null());
  EXPECT_FALSE(j.contains("ignored"));
}

TEST(StressngErrors, NameWhatAndWhere) {
  try {
    parse_stressng_yaml("metrics:\n    - stressor: cpu\n      bogo-ops: lots\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("metrics/0/bogo-ops"));
    EXPECT_THAT(e.what(), testing::HasSubstr("lots"));
  }
  try {
    parse_stressng_yaml("metrics:\n  - stressor: cpu\n      bogo-ops: 1\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("line 3"));
  }
  EXPECT_THROW(parse_stressng_yaml("metrics: [ {stressor: cpu, bogo-ops: 1"), Error);
  EXPECT_THROW(parse_stressng_yaml("system-info:\n  cpus: 2\n"), Error);    // no metrics
  EXPECT_THROW(parse_stressng_yaml("metrics:\n  - bogo-ops: 1\n"), Error);  // no stressor
  EXPECT_THROW(parse_stressng_yaml(std::string(5000, '[')), Error);         // deep nesting
  EXPECT_THROW(parse_stressng_yaml(std::string("\x00\xff\x01 junk", 8)), Error);
  EXPECT_THROW(parse_stressng_text("stress-ng: info:  [1] successful run completed in 3.00s\n"),
               Error);
  EXPECT_THROW(parse_stressng_text("cpu nan 3.00 2.98 0.00 2284.64 2303.24\n"), Error);
}

// Captured in a 6.1 TCG guest (tests/data/stress-ng/guest-*, saved by the guest helper).
TEST(StressngGuest, RealTcgGuestYamlAndText) {
  auto y = parse_stressng_yaml(data("guest-6.1-tcg.yaml"));
  ASSERT_EQ(y.stressors.size(), 1u);
  EXPECT_EQ(y.stressors[0].bogo_ops, 148);
  EXPECT_DOUBLE_EQ(*y.stressors[0].bogo_ops_per_s_real, 41.226709);
  EXPECT_DOUBLE_EQ(*y.stressors[0].bogo_ops_per_s_usr_sys, 41.204577);
  // --yaml without --metrics writes system-info only: a clear error, not an empty result.
  try {
    parse_stressng_yaml(data("guest-6.1-tcg-plain.yaml"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("no \"metrics\" list"));
  }
  auto t = parse_stressng_text(data("guest-6.1-tcg-metrics-brief.txt"));
  ASSERT_EQ(t.stressors.size(), 1u);
  EXPECT_DOUBLE_EQ(*t.stressors[0].bogo_ops_per_s_real, 41.23);
  EXPECT_FALSE(t.times.has_value());
}

}  // namespace
}  // namespace isolab
