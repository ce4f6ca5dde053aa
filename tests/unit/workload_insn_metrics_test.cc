// Instruction-count metrics of a cell from the plugin's file and the guest's records.
#include <gtest/gtest.h>

#include "parse/system_map.h"
#include "workload/insn_metrics.h"

namespace isolab {
namespace {

// Two steps on a 4-vCPU guest with CPUs 2-3 isolated: vmstat-syscall pinned on CPU 2 (1000
// marked pairs), then an idle step. Counts are user:kernel per vCPU.
constexpr const char* kPlugin =
    "isolab-insn-count 1 plugin_api=1 qemu_api=0-1 vcpus=4 profile_cpus=2-3 profile_top=2000\n"
    "step 1 begin vcpu=0 counts=100:1000,0:500,0:0,0:0\n"
    "step 1 end vcpu=0 counts=200:2000,0:900,90000:4000000,0:20000\n"
    "region 1 vcpu=2 n=1000 user=60000 kernel=3200000 unbalanced=0 median=3100 "
    "kernel_median=3040\n"
    "prof 1 vcpu=2 pc=0xffffffff81001404 insns=3000000\n"
    "prof 1 vcpu=2 pc=0xffffffff81001000 insns=150000\n"
    "prof 1 vcpu=2 pc=0xffffffff81001010 insns=50000\n"
    "prof 1 vcpu=3 pc=0xffffffffa0000000 insns=20000\n"
    "step 2 begin vcpu=0 counts=300:3000,0:1000,90000:4000000,0:20000\n"
    "step 2 end vcpu=0 counts=400:4000,0:1100,90000:4000000,0:30000\n"
    "exit stray_step_ends=0 counts=400:4000,0:1100,90000:4000000,0:30000\n"
    "end\n";

constexpr const char* kTool =
    "{\"tool\":\"vmstat-overhead\",\"version\":1,\"mode\":\"syscall\",\"cpu\":2,\"pinned\":true,"
    "\"iterations\":1000,\"warmup\":100,\"counter\":\"tsc\",\"total\":4000000,"
    "\"per_iteration\":4000,\"per_syscall\":2000,\"min\":3000,\"max\":9000,"
    "\"elapsed_ns\":2000000000,\"touched_pages\":1000,\"marked_regions\":1000}\n";

std::vector<WorkloadSpec> workloads() {
  WorkloadSpec a, b;
  a.name = "vmstat-syscall";
  a.tool = "vmstat-overhead";
  b.name = "idle";
  b.tool = "vmstat-overhead";
  return {a, b};
}

ChannelContents records(const std::string& tool_out) {
  ChannelContents ch;
  ch.records = {{"vmstat-syscall.stdout", 0, tool_out},
                {"vmstat-syscall.window", 0, "10.00 12.00\n"},
                {"idle.stdout", 0, ""},
                {"idle.window", 0, "12.50 17.50\n"}};
  return ch;
}

InsnCellOutcome derive(const std::vector<WorkloadSpec>& w, const ChannelContents& ch,
                       std::string_view plugin, const SystemMap* map = nullptr) {
  InsnCellInput in;
  in.workloads = &w;
  in.isolated = parse_cpulist("2-3", 4);
  in.records = &ch;
  in.plugin_text = plugin;
  in.system_map = map;
  return insn_cell_metrics(in);
}

TEST(InsnMetrics, PerSyscallIsHalfTheMedianPairOnThePinnedCpu) {
  const auto w = workloads();
  const auto o = derive(w, records(kTool), kPlugin);
  ASSERT_TRUE(o.metrics.count("vmstat-syscall.insns_per_syscall")) << o.record.dump();
  const Metric& m = o.metrics.at("vmstat-syscall.insns_per_syscall");
  EXPECT_DOUBLE_EQ(m.values.at(0), 3100.0 / 2);
  EXPECT_EQ(m.kind, "instructions");
  EXPECT_EQ(m.source, "tcg-plugin");
  EXPECT_EQ(m.unit, "instructions");
  EXPECT_DOUBLE_EQ(o.metrics.at("vmstat-syscall.kernel_insns_per_syscall").values.at(0), 1520);
  // The mean pair carries what entered the pairs: (60000 + 3200000) / 1000 / 2.
  EXPECT_DOUBLE_EQ(o.metrics.at("vmstat-syscall.insns_per_syscall_mean").values.at(0), 1630);
}

TEST(InsnMetrics, WithoutARegionMedianOnlyTheMeanIsGiven) {
  std::string plugin = kPlugin;
  plugin.erase(plugin.find(" median=3100 kernel_median=3040"), 31);
  const auto w = workloads();
  const auto o = derive(w, records(kTool), plugin);
  EXPECT_FALSE(o.metrics.count("vmstat-syscall.insns_per_syscall"));
  EXPECT_TRUE(o.metrics.count("vmstat-syscall.insns_per_syscall_mean"));
  EXPECT_EQ(o.record["invalid"]["vmstat-syscall.insns_per_syscall"],
            "the plugin wrote no region median");
}

TEST(InsnMetrics, KernelInstructionsPerSecondOnEachIsolatedCpuOverTheStepWindow) {
  const auto w = workloads();
  const auto o = derive(w, records(kTool), kPlugin);
  const Metric& busy = o.metrics.at("vmstat-syscall.noise.kernel_insns_per_s");
  ASSERT_TRUE(busy.per_cpu);
  EXPECT_EQ(busy.per_cpu->cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(busy.per_cpu->counts, (std::vector<long long>{4000000, 20000}));
  EXPECT_DOUBLE_EQ(*busy.per_cpu->slots[0], 2000000);  // over a 2 s window
  EXPECT_EQ(busy.per_cpu->kind, "instructions");
  const Metric& idle = o.metrics.at("idle.noise.kernel_insns_per_s");
  EXPECT_DOUBLE_EQ(*idle.per_cpu->slots[0], 0);
  EXPECT_DOUBLE_EQ(*idle.per_cpu->slots[1], 2000);  // 10000 over 5 s
}

TEST(InsnMetrics, AMarkerOnAnotherCpuInvalidatesThePerOperationMetricOnly) {
  std::string tool = kTool;
  tool.replace(tool.find("\"cpu\":2"), 7, "\"cpu\":3");
  const auto w = workloads();
  const auto o = derive(w, records(tool), kPlugin);
  EXPECT_FALSE(o.metrics.count("vmstat-syscall.insns_per_syscall"));
  EXPECT_FALSE(o.metrics.count("vmstat-syscall.kernel_insns_per_syscall"));
  EXPECT_NE(
      o.record["invalid"]["vmstat-syscall.insns_per_syscall"].get<std::string>().find("vCPU 2"),
      std::string::npos)
      << o.record.dump();
  EXPECT_TRUE(o.metrics.count("vmstat-syscall.noise.kernel_insns_per_s"));
}

TEST(InsnMetrics, ARegionCountOtherThanTheToolsIsInvalid) {
  std::string tool = kTool;
  tool.replace(tool.find("\"marked_regions\":1000"), 21, "\"marked_regions\":999");
  const auto w = workloads();
  const auto o = derive(w, records(tool), kPlugin);
  EXPECT_FALSE(o.metrics.count("vmstat-syscall.insns_per_syscall"));
  EXPECT_TRUE(o.record["invalid"].contains("vmstat-syscall.insns_per_syscall"));
}

TEST(InsnMetrics, AStepCountThatDiffersFromThePlanGivesNoMetric) {
  const auto w = workloads();
  ChannelContents ch = records(kTool);
  ch.records.erase(ch.records.begin() + 2);  // the idle step never reported
  const auto o = derive(w, ch, kPlugin);
  EXPECT_TRUE(o.metrics.empty());
  EXPECT_NE(o.record["problems"].dump().find("the plugin saw 2 steps, the guest ran 1"),
            std::string::npos);
}

TEST(InsnMetrics, AnUnreadableFileIsAProblemNotAnException) {
  const auto w = workloads();
  const auto o = derive(w, records(kTool), "garbage\n");
  EXPECT_TRUE(o.metrics.empty());
  EXPECT_EQ(o.record["problems"].size(), 1u);
}

TEST(InsnMetrics, TheProfileNamesFunctionsFromSystemMap) {
  const SystemMap map = parse_system_map(
      "ffffffff81001000 t refresh_cpu_vm_stats\nffffffff81001400 T vmstat_update\n"
      "ffffffff81002000 T _etext\n");
  const auto w = workloads();
  const auto o = derive(w, records(kTool), kPlugin, &map);
  const auto& cpu2 = o.record["profile"]["vmstat-syscall"]["2"];
  ASSERT_EQ(cpu2.size(), 2u);
  EXPECT_EQ(cpu2[0]["function"], "vmstat_update");
  EXPECT_EQ(cpu2[0]["insns"], 3000000);
  EXPECT_EQ(cpu2[1]["function"], "refresh_cpu_vm_stats");
  EXPECT_EQ(cpu2[1]["insns"], 200000);
  EXPECT_EQ(o.record["profile_unattributed"]["vmstat-syscall"]["3"], 20000);
}

}  // namespace
}  // namespace isolab
