// A stress-ng step parsed from the records a guest sends: the version stress-ng reports in its
// YAML system-info is recorded with the result (docs/sources.md [s4]), from a real
// 0.15.06 guest capture.
#include <gtest/gtest.h>

#include "base/files.h"
#include "workload/step.h"
#include "workload/workload.h"

namespace isolab {
namespace {

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/stress-ng/" + name);
}

TEST(WorkloadStressng, ReportedVersionIsRecorded) {
  WorkloadSpec w;
  w.name = "stress";
  w.tool = "stress-ng";
  w.stressors = {{"cpu", 1}};
  ChannelContents ch;
  ch.records.push_back({"stress.stdout", 0, "", false});
  ch.records.push_back({"stress.yaml", 0, data("guest-6.1-tcg.yaml"), false});
  WorkloadOutcome o = parse_workload(w, ch);
  ASSERT_FALSE(o.failed) << o.failure;
  EXPECT_EQ(o.tool_versions.at("stress-ng"), "0.15.06");
  EXPECT_FALSE(o.metrics.empty());

  // A YAML without system-info reports no version: nothing is made up.
  ChannelContents bare;
  bare.records.push_back({"stress.stdout", 0, "", false});
  std::string yaml = data("guest-6.1-tcg.yaml");
  yaml.erase(yaml.find("      stress-ng-version: 0.15.06\n"),
             std::string("      stress-ng-version: 0.15.06\n").size());
  bare.records.push_back({"stress.yaml", 0, yaml, false});
  EXPECT_TRUE(parse_workload(w, bare).tool_versions.empty());
}

}  // namespace
}  // namespace isolab
