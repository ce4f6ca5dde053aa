// Instruction-count metrics of a KVM cell from the guest PMU counts vmstat-overhead reported.
#include <gtest/gtest.h>

#include "workload/insn_cell.h"
#include "workload/insn_metrics.h"
#include "workload/pmu_metrics.h"

namespace isolab {
namespace {

constexpr const char* kHead =
    "{\"tool\":\"vmstat-overhead\",\"version\":1,\"mode\":\"syscall\",\"cpu\":2,\"pinned\":true,"
    "\"iterations\":1000,\"warmup\":100,\"counter\":\"tsc\",\"total\":4000000,"
    "\"per_iteration\":4000,\"per_syscall\":2000,\"min\":3000,\"max\":9000,"
    "\"elapsed_ns\":2000000000,\"touched_pages\":0,\"marked_regions\":1000";

constexpr const char* kAvailable =
    ",\"pmu\":{\"available\":true,\"method\":\"read\",\"regions\":998,"
    "\"unscheduled_regions\":2,\"insns_median\":5000,\"kernel_insns_median\":4200,"
    "\"insns_mean\":6000.5,\"kernel_insns_mean\":5100,\"empty_regions\":1000,"
    "\"empty_insns_median\":1000,\"empty_kernel_insns_median\":800}";

std::string tool(const std::string& pmu) { return std::string(kHead) + pmu + "}\n"; }

std::vector<WorkloadSpec> workloads() {
  WorkloadSpec a, b;
  a.name = "vmstat-syscall";
  a.tool = "vmstat-overhead";
  b.name = "latency";
  b.tool = "cyclictest";
  return {a, b};
}

InsnCellOutcome derive(const std::string& out) {
  static const std::vector<WorkloadSpec> w = workloads();
  ChannelContents ch;
  ch.records = {{"vmstat-syscall.stdout", 0, out}, {"latency.stdout", 0, "{\"pmu\":1}"}};
  return pmu_cell_metrics({&w, &ch});
}

TEST(PmuMetrics, PerSyscallIsHalfTheMedianPairLessTheEmptyRegions) {
  const auto o = derive(tool(kAvailable));
  ASSERT_EQ(o.metrics.size(), 3u) << o.record.dump();
  const Metric& m = o.metrics.at("vmstat-syscall.insns_per_syscall");
  EXPECT_DOUBLE_EQ(m.values.at(0), (5000.0 - 1000) / 2);
  EXPECT_EQ(m.kind, "instructions");
  EXPECT_EQ(m.source, "pmu");
  EXPECT_EQ(m.unit, "instructions");
  EXPECT_DOUBLE_EQ(o.metrics.at("vmstat-syscall.kernel_insns_per_syscall").values.at(0), 1700);
  EXPECT_DOUBLE_EQ(o.metrics.at("vmstat-syscall.insns_per_syscall_mean").values.at(0), 2500.25);
  EXPECT_EQ(o.record["source"], "pmu");
  EXPECT_EQ(o.record["steps"]["vmstat-syscall"]["pmu"]["regions"], 998);
  EXPECT_EQ(o.record["per_cpu"], "per-CPU kernel counts from the PMU are not implemented");
  EXPECT_FALSE(o.record["steps"].contains("latency"));
}

TEST(PmuMetrics, TheNamesAreThePluginsNames) {
  // The plugin's metrics for the same step (tests/unit/workload_insn_metrics_test.cc layout).
  const std::vector<WorkloadSpec> w = {workloads()[0]};
  ChannelContents ch;
  ch.records = {{"vmstat-syscall.stdout", 0, tool("")},
                {"vmstat-syscall.window", 0, "10.00 12.00\n"}};
  InsnCellInput in;
  in.workloads = &w;
  in.isolated = parse_cpulist("2", 4);
  in.records = &ch;
  in.plugin_text =
      "isolab-insn-count 1 plugin_api=1 qemu_api=0-1 vcpus=4 profile_cpus=2 profile_top=20\n"
      "step 1 begin vcpu=0 counts=0:0,0:0,0:0,0:0\n"
      "step 1 end vcpu=0 counts=0:0,0:0,9000:4000000,0:0\n"
      "region 1 vcpu=2 n=1000 user=60000 kernel=3200000 unbalanced=0 median=3100 "
      "kernel_median=3040\n"
      "exit stray_step_ends=0 counts=0:0,0:0,9000:4000000,0:0\nend\n";
  const auto plugin = insn_cell_metrics(in);
  const auto pmu = derive(tool(kAvailable));
  for (const auto& [name, m] : pmu.metrics)
    EXPECT_TRUE(plugin.metrics.count(name)) << name << " " << plugin.record.dump();
}

TEST(PmuMetrics, UnavailableGivesNoMetricAndTheReason) {
  const auto o =
      derive(tool(",\"pmu\":{\"available\":false,\"reason\":\"perf_event_open: No such file or "
                  "directory\"}"));
  EXPECT_TRUE(o.metrics.empty());
  EXPECT_TRUE(o.record["source"].is_null());
  EXPECT_EQ(o.record["reason"],
            "guest PMU unavailable in vmstat-syscall: perf_event_open: No such file or directory");
}

TEST(PmuMetrics, NoPmuObjectSaysNoToolReportedCounts) {
  const auto o = derive(tool(""));
  EXPECT_TRUE(o.metrics.empty());
  EXPECT_TRUE(o.record["source"].is_null());
  EXPECT_EQ(o.record["reason"], "no guest tool reported PMU counts");
}

TEST(PmuMetrics, MalformedGuestOutputNeverThrows) {
  for (const std::string pmu :
       {",\"pmu\":null", ",\"pmu\":[]", ",\"pmu\":{}", ",\"pmu\":{\"available\":\"yes\"}",
        ",\"pmu\":{\"available\":true}", ",\"pmu\":{\"available\":false,\"reason\":7}",
        ",\"pmu\":{\"available\":true,\"regions\":1e300,\"insns_median\":-1}",
        ",\"pmu\":{\"available\":false,\"reason\":\"\\u0000\\u001b[31mred\"}"}) {
    InsnCellOutcome o;
    ASSERT_NO_THROW(o = derive(tool(pmu))) << pmu;
    EXPECT_TRUE(o.metrics.empty()) << pmu;
    EXPECT_TRUE(o.record["source"].is_null()) << pmu;
  }
  for (const std::string out : {"", "garbage", "{\"tool\":\"vmstat-overhead\"", "{}"}) {
    InsnCellOutcome o;
    ASSERT_NO_THROW(o = derive(out)) << out;
    EXPECT_TRUE(o.metrics.empty());
  }
}

TEST(PmuMetrics, ARegionCountOtherThanTheToolsIsInvalid) {
  std::string pmu = kAvailable;
  pmu.replace(pmu.find("\"regions\":998"), 13, "\"regions\":997");
  const auto o = derive(tool(pmu));
  EXPECT_TRUE(o.metrics.empty());
  EXPECT_NE(o.record["invalid"]["vmstat-syscall.insns_per_syscall"].get<std::string>().find(
                "the tool ran 1000"),
            std::string::npos)
      << o.record.dump();
  EXPECT_EQ(o.record["reason"], "the PMU counts did not check out (invalid)");
}

TEST(PmuMetrics, AnOperationBelowTheEmptyRegionsIsInvalid) {
  std::string pmu = kAvailable;
  pmu.replace(pmu.find("\"empty_insns_median\":1000"), 25, "\"empty_insns_median\":5001");
  const auto o = derive(tool(pmu));
  EXPECT_TRUE(o.metrics.empty());
  EXPECT_TRUE(o.record["invalid"].contains("vmstat-syscall.insns_per_syscall"));
}

TEST(PmuMetrics, AnUnpinnedToolIsInvalid) {
  std::string out = tool(kAvailable);
  out.replace(out.find("\"pinned\":true"), 13, "\"pinned\":false");
  const auto o = derive(out);
  EXPECT_TRUE(o.metrics.empty());
  EXPECT_EQ(o.record["invalid"]["vmstat-syscall.insns_per_syscall"],
            "the tool was not pinned to a CPU");
}

}  // namespace
}  // namespace isolab
