// The workload registry: every tool a spec can name has one definition, found by its name,
// and says which metric names it gives and which binary the guest image needs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "workload/registry.h"

namespace isolab {
namespace {

using ::testing::ElementsAre;

TEST(WorkloadRegistry, EveryToolIsFoundByItsName) {
  std::vector<std::string> names;
  for (const WorkloadTool* t : workload_tools()) {
    names.push_back(t->name);
    EXPECT_EQ(find_workload_tool(t->name), t);
    EXPECT_NE(t->read_fields, nullptr) << t->name;
    EXPECT_NE(t->metric_names, nullptr) << t->name;
    EXPECT_EQ(t->as_workload, t->step != nullptr) << t->name;
    EXPECT_EQ(t->as_load, t->load_script != nullptr && t->parse_load != nullptr) << t->name;
  }
  EXPECT_THAT(names, ElementsAre("cyclictest", "stress-ng", "vmstat-overhead", "rtla-osnoise",
                                 "rtla-timerlat", "madvise-pressure", "page-fault-bench", "oslat"));
  EXPECT_EQ(find_workload_tool("fio"), nullptr);
}

TEST(WorkloadRegistry, MetricPatternsOfAWorkloadAndItsLoad) {
  WorkloadSpec w;
  w.name = "lat";
  w.tool = "cyclictest";
  w.count_calls = {"madvise_cold_or_pageout_pte_range"};
  WorkloadSpec l;
  l.name = "load";
  l.tool = "stress-ng";
  l.stressors = {{"cpu", 0}};
  w.load = std::vector<WorkloadSpec>{l};
  const auto p = workload_metric_patterns(w);
  EXPECT_THAT(p, ::testing::Contains("lat.noise.*"));
  EXPECT_THAT(p, ::testing::Contains("lat.latency_max_us"));
  EXPECT_THAT(p, ::testing::Contains("lat.calls.madvise_cold_or_pageout_pte_range"));
  EXPECT_THAT(p, ::testing::Contains("lat.load.cpu.*"));
}

TEST(WorkloadRegistry, PatternMatchesNamesAndPrefixes) {
  EXPECT_TRUE(metric_pattern_matches("lat.latency_max_us", "lat.latency_max_us", false));
  EXPECT_FALSE(metric_pattern_matches("lat.latency_max_us", "lat.latency_max", false));
  EXPECT_TRUE(metric_pattern_matches("lat.latency_max_us", "lat.latency_", true));
  EXPECT_TRUE(metric_pattern_matches("lat.noise.*", "lat.noise.irq_per_s", false));
  EXPECT_TRUE(metric_pattern_matches("lat.noise.*", "lat.", true));
  EXPECT_TRUE(metric_pattern_matches("lat.load.cpu.*", "lat.load.cpu.bogo_ops", false));
  EXPECT_FALSE(metric_pattern_matches("lat.load.cpu.*", "lat.load.vm.bogo_ops", false));
  EXPECT_FALSE(metric_pattern_matches("lat.noise.*", "latency.", true));
}

TEST(WorkloadRegistry, GuestBinariesAlwaysThenThoseUsed) {
  EXPECT_THAT(guest_binaries({}, true),
              ElementsAre("/usr/bin/cyclictest", "/usr/bin/stress-ng", "vmstat-overhead"));
  EXPECT_TRUE(guest_binaries({}, false).empty());
  WorkloadSpec os, tl, pf, ct, mp, ol;
  os.tool = "rtla-osnoise";
  ol.tool = "oslat";
  tl.tool = "rtla-timerlat";
  pf.tool = "page-fault-bench";
  ct.tool = "cyclictest";
  mp.tool = "madvise-pressure";
  ct.load = std::vector<WorkloadSpec>{mp};
  EXPECT_THAT(
      guest_binaries({pf, ol, tl, ct, os}, false),
      ElementsAre("/usr/bin/rtla", "madvise-pressure", "page-fault-bench", "/usr/bin/oslat"));
}

}  // namespace
}  // namespace isolab
