// The oslat workload tool (workload/tools/oslat.cc): the guest step it builds from a workload and
// the guest's partition, and what it makes of the records the guest sends back (real rt-tests
// 2.4 captures of tests/data/oslat/).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/files.h"
#include "workload/registry.h"
#include "workload/step.h"
#include "workload/workload.h"

namespace isolab {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/oslat/" + name);
}

// 8 vCPUs, 5-7 isolated.
CpuPartition partition() {
  CpuPartition p;
  p.all = CpuSet::all(8);
  p.isolated = CpuSet::of(8, {5, 6, 7});
  p.housekeeping = p.all - p.isolated;
  return p;
}

WorkloadSpec oslat_workload() {
  WorkloadSpec w;
  w.name = "noise";
  w.tool = "oslat";
  w.priority = 0;  // what the spec reader sets without "priority"
  return w;
}

GuestStep step_of(const WorkloadSpec& w, const CpuPartition& p = partition()) {
  TimeoutSpec t;
  t.workload_margin_s = 60;
  return guest_step(w, p, t, false);
}

TEST(WorkloadOslat, StepRunsOneThreadPerCpuWithTheMainThreadOnHousekeeping) {
  const GuestStep s = step_of(oslat_workload());
  EXPECT_EQ(s.script,
            "echo 5-7 > oslat.cpus\n"
            "'oslat' '--cpu-list' '5-7' '--cpu-main-thread' '0' '-D' '10' '-b' '1000' '-z' "
            "'--json=oslat.json'\n");
  EXPECT_THAT(s.outputs, ElementsAre(std::pair<std::string, std::string>{"json", "oslat.json"},
                                     std::pair<std::string, std::string>{"cpus", "oslat.cpus"}));
  EXPECT_EQ(s.timeout_s, 10 + 1 + 60);  // the run, oslat's 1 s pre-heat, the margin
}

TEST(WorkloadOslat, StepWithPriorityWorkloadBucketsAndExtraArgs) {
  WorkloadSpec w = oslat_workload();
  w.cpus = "6";
  w.duration_s = 30;
  w.priority = 1;
  w.histogram_us = 64;
  w.oslat_workload = "memmove";
  w.extra_args = {"-T", "500"};
  w.timeout_s = 99;
  const GuestStep s = step_of(w);
  EXPECT_EQ(s.script,
            "echo 6 > oslat.cpus\n"
            "'oslat' '--cpu-list' '6' '--cpu-main-thread' '0' '-D' '30' '--rtprio' '1' '-b' '64' "
            "'-z' '-w' 'memmove' '--json=oslat.json' '-T' '500'\n");
  EXPECT_EQ(s.timeout_s, 99);
  // A guest without housekeeping CPUs: oslat's own default (CPU 0) for the main thread.
  CpuPartition all_isolated;
  all_isolated.all = CpuSet::all(2);
  all_isolated.isolated = CpuSet::all(2);
  all_isolated.housekeeping = CpuSet(2);
  w.cpus = "isolated";
  EXPECT_THAT(step_of(w, all_isolated).script,
              HasSubstr("'oslat' '--cpu-list' '0-1' '-D' '30' '--rtprio' '1'"));
}

ChannelContents records(const std::string& json, const std::string& out, int rc,
                        const std::string& cpus) {
  ChannelContents ch;
  ch.records.push_back({"noise.stdout", rc, out, false});
  if (!json.empty()) ch.records.push_back({"noise.json", 0, json, false});
  ch.records.push_back({"noise.cpus", 0, cpus, false});
  return ch;
}

TEST(WorkloadOslat, ParsesTheJsonIntoPerCpuMetricsAndHistograms) {
  const WorkloadOutcome o = parse_workload(
      oslat_workload(), records(data("host-2.40-cpus0-1-zero-omit.json"),
                                data("host-2.40-cpus0-1-zero-omit.txt"), 0, "0-1\n"));
  ASSERT_FALSE(o.failed) << o.failure;
  EXPECT_TRUE(o.invalid.empty()) << o.invalid;
  const Metric& max = o.metrics.at("noise.oslat_max_us");
  ASSERT_TRUE(max.per_cpu.has_value());
  EXPECT_THAT(max.per_cpu->cpus, ElementsAre(0, 1));
  EXPECT_THAT(max.values, ElementsAre(54559, 28154));
  EXPECT_THAT(o.metrics.at("noise.oslat_avg_us").values, ElementsAre(1.133998, 1.102454));
  EXPECT_EQ(o.histograms["noise[cpu0]"]["overflows"], 88);
  EXPECT_EQ(o.histograms["noise[cpu1]"]["counts"]["29"], 1);  // "030 (us)"
  EXPECT_EQ(o.tool_versions.at("oslat"), "2.40");
}

TEST(WorkloadOslat, CpuLeftOutByOslatMakesTheCellInvalid) {
  const WorkloadOutcome o =
      parse_workload(oslat_workload(), records(data("host-2.40-cpu1-d3.json"), "", 0, "1-2\n"));
  EXPECT_FALSE(o.failed) << o.failure;
  EXPECT_EQ(o.invalid,
            "oslat measured CPUs 1, not the CPUs it was given (1-2): it leaves out a CPU it "
            "cannot run on");
}

TEST(WorkloadOslat, NoJsonBecauseOfLibnumaFailsNamingTheKernelConfig) {
  const WorkloadOutcome o = parse_workload(
      oslat_workload(), records("", data("host-2.40-get-mempolicy-enosys.txt"), 1, "5-7\n"));
  EXPECT_TRUE(o.failed);
  EXPECT_THAT(o.failure, HasSubstr("oslat exited 1 without JSON output"));
  EXPECT_THAT(o.failure, HasSubstr("CONFIG_NUMA"));
  EXPECT_TRUE(o.metrics.empty());
}

TEST(WorkloadOslat, NoJsonButACompleteTextIsRead) {
  const WorkloadOutcome o =
      parse_workload(oslat_workload(), records("", data("host-2.40-cpu1-d3.txt"), 0, "1\n"));
  ASSERT_FALSE(o.failed) << o.failure;
  EXPECT_THAT(o.metrics.at("noise.oslat_max_us").values, ElementsAre(4060));
  EXPECT_THAT(o.notes, ::testing::Contains(HasSubstr("wrote no JSON file")));
}

TEST(WorkloadOslat, NonZeroExitFails) {
  const WorkloadOutcome o =
      parse_workload(oslat_workload(), records(data("host-2.40-cpu1-d3.json"), "", 1, "1\n"));
  EXPECT_TRUE(o.failed);
  EXPECT_EQ(o.failure, "oslat exited 1");
}

TEST(WorkloadOslat, RegisteredWithItsMetricsAndBinary) {
  const WorkloadTool* t = find_workload_tool("oslat");
  ASSERT_NE(t, nullptr);
  EXPECT_THAT(t->metric_names(oslat_workload()),
              ElementsAre("oslat_min_us", "oslat_avg_us", "oslat_max_us"));
  EXPECT_STREQ(t->guest_binary, "/usr/bin/oslat");
  EXPECT_FALSE(t->binary_always);  // the default image stays as it was
  EXPECT_THAT(guest_binaries({oslat_workload()}, false), ElementsAre("/usr/bin/oslat"));
}

}  // namespace
}  // namespace isolab
