// Instruction-count metrics of a cell from the plugin's file and the guest's records.
#include <gtest/gtest.h>

#include "parse/system_map.h"
#include "workload/insn_cell.h"
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

// count=steps: a step whose counting window opened at its own begin marker (late=1) missed
// what ran before the plugin's flush, so it gives no metric at all; the next step does.
TEST(InsnMetrics, ALateStepGivesNoMetric) {
  const std::string counts0 =
      " counts=100:1000,0:500,0:0,0:0 rep=0:0,0:0,0:0,0:0 "
      "faults=0:0:0,0:0:0,0:0:0,0:0:0";
  const std::string counts1 =
      " counts=200:2000,0:900,90000:4000000,0:20000 "
      "rep=0:0,0:0,0:0,0:0 faults=0:0:0,0:0:0,0:0:0,0:0:0";
  const std::string counts2 =
      " counts=400:4000,0:1100,90000:4000000,0:30000 "
      "rep=0:0,0:0,0:0,0:0 faults=0:0:0,0:0:0,0:0:0,0:0:0";
  const std::string plugin =
      "isolab-insn-count 3 plugin_api=1 qemu_api=0-1 vcpus=4 profile_cpus= symbols=0 "
      "mode=exact count=steps\n"
      "step 1 begin vcpu=0" +
      counts0 + " late=1\n" + "step 1 end vcpu=0" + counts1 + "\n" +
      "region 1 vcpu=2 n=1000 user=60000 kernel=3200000 rep=0 unbalanced=0 median=3100 "
      "kernel_median=3040 norep_median=3100\n" +
      "step 2 begin vcpu=0" + counts1 + "\n" + "step 2 end vcpu=0" + counts2 + "\nend\n";
  const auto w = workloads();
  const auto o = derive(w, records(kTool), plugin);
  EXPECT_FALSE(o.metrics.count("vmstat-syscall.insns_per_syscall")) << o.record.dump();
  EXPECT_FALSE(o.metrics.count("vmstat-syscall.noise.kernel_insns_per_s"));
  EXPECT_EQ(o.record["steps"]["vmstat-syscall"]["problem"],
            "the plugin began counting at the step's begin marker, not before it");
  ASSERT_TRUE(o.metrics.count("idle.noise.kernel_insns_per_s")) << o.record.dump();
  EXPECT_DOUBLE_EQ(*o.metrics.at("idle.noise.kernel_insns_per_s").per_cpu->slots[1], 2000);
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
      "ffffffff81000000 T _stext\nffffffff81001000 t refresh_cpu_vm_stats\n"
      "ffffffff81001400 T vmstat_update\nffffffff81002000 T _etext\n");
  const auto w = workloads();
  ChannelContents ch = records(kTool);
  ch.records.push_back({"kallsyms_stext", 0, "ffffffff81000000 T _stext\n"});
  const auto o = derive(w, ch, kPlugin, &map);
  const auto& cpu2 = o.record["profile"]["vmstat-syscall"]["2"];
  ASSERT_EQ(cpu2.size(), 2u);
  EXPECT_EQ(cpu2[0]["function"], "vmstat_update");
  EXPECT_EQ(cpu2[0]["insns"], 3000000);
  EXPECT_EQ(cpu2[1]["function"], "refresh_cpu_vm_stats");
  EXPECT_EQ(cpu2[1]["insns"], 200000);
  EXPECT_EQ(o.record["profile_unattributed"]["vmstat-syscall"]["3"], 20000);
}

// page-fault-bench on a 4-vCPU guest with --cpus 1-2, CPUs 2-3 isolated: the single phase's
// worker on CPU 1 (10 marked batches: class 0 faults, class 1 free), then the per_cpu phase's
// workers on CPUs 1 (8 batches) and 2 (9): classes 2 and 3. 64 pages per batch.
constexpr const char* kFaultPlugin =
    "isolab-insn-count 2 plugin_api=1 qemu_api=0-1 vcpus=4 profile_cpus= profile_top=2000\n"
    "step 1 begin vcpu=0 counts=0:0,0:0,0:0,0:0\n"
    "step 1 end vcpu=0 counts=100:1000,9000:900000,5000:500000,0:3000\n"
    "region 1 vcpu=1 n=10 user=3200 kernel=320000 unbalanced=0 median=32000 "
    "kernel_median=31680\n"
    "region 1 vcpu=1 class=1 n=10 user=100 kernel=64000 unbalanced=0 median=6400 "
    "kernel_median=6390\n"
    "region 1 vcpu=1 class=2 n=8 user=2560 kernel=266240 unbalanced=0 median=33280 "
    "kernel_median=32960\n"
    "region 1 vcpu=1 class=3 n=8 user=80 kernel=56320 unbalanced=0 median=7040 "
    "kernel_median=7000\n"
    "region 1 vcpu=2 class=2 n=9 user=2880 kernel=322560 unbalanced=0 median=35840 "
    "kernel_median=35520\n"
    "region 1 vcpu=2 class=3 n=9 user=90 kernel=69120 unbalanced=0 median=7680 "
    "kernel_median=7640\n"
    "exit stray_step_ends=0 counts=100:1000,9000:900000,5000:500000,0:3000\n"
    "end\n";

std::string fault_worker(int cpu, int batches) {
  return "{\"cpu\":" + std::to_string(cpu) + ",\"node\":0,\"batches\":" + std::to_string(batches) +
         ",\"pages\":" + std::to_string(64 * batches) +
         ",\"fault_total\":1000000,\"free_total\":200000,\"min_batch_fault\":9000,"
         "\"max_batch_fault\":90000,\"marked_batches\":" +
         std::to_string(batches) + "}";
}

std::string fault_tool(int single_cpu = 1, int per_cpu_2_batches = 9) {
  const std::string phase = ",\"elapsed_ns\":1000000000,\"vmstat_before\":{},\"vmstat_after\":{}";
  return "{\"tool\":\"page-fault-bench\",\"version\":1,\"counter\":\"tsc\",\"page_size\":4096,"
         "\"pages_per_batch\":64,\"duration_s\":1,\"warmup_batches\":5,\"phases\":["
         "{\"name\":\"single\"" +
         phase + ",\"workers\":[" + fault_worker(single_cpu, 10) + "]},{\"name\":\"per_cpu\"" +
         phase + ",\"workers\":[" + fault_worker(1, 8) + "," + fault_worker(2, per_cpu_2_batches) +
         "]}]}\n";
}

InsnCellOutcome derive_faults(const std::string& tool, const std::string& plugin) {
  static const std::vector<WorkloadSpec> w = [] {
    WorkloadSpec p;
    p.name = "pagefault";
    p.tool = "page-fault-bench";
    return std::vector<WorkloadSpec>{p};
  }();
  ChannelContents ch;
  ch.records = {{"pagefault.stdout", 0, tool}, {"pagefault.window", 0, "10.00 12.00\n"}};
  return derive(w, ch, plugin);
}

std::string invalid(const InsnCellOutcome& o, const std::string& metric) {
  const auto& inv = o.record.value("invalid", nlohmann::json::object());
  return inv.contains(metric) ? inv[metric].get<std::string>() : "";
}

TEST(InsnMetrics, PageFaultAndFreePerPageFromTheMedianBatchOfEachPhase) {
  const auto o = derive_faults(fault_tool(), kFaultPlugin);
  EXPECT_FALSE(o.record.contains("invalid")) << o.record.dump();
  const Metric& fault = o.metrics.at("pagefault.insns_per_page_fault");
  EXPECT_DOUBLE_EQ(fault.values.at(0), 500);  // 32000 / 64
  EXPECT_EQ(fault.kind, "instructions");
  EXPECT_EQ(fault.source, "tcg-plugin");
  EXPECT_EQ(fault.unit, "instructions");
  EXPECT_TRUE(fault.lower_is_better);
  EXPECT_FALSE(fault.per_cpu);
  EXPECT_DOUBLE_EQ(o.metrics.at("pagefault.kernel_insns_per_page_fault").values.at(0), 495);
  EXPECT_DOUBLE_EQ(o.metrics.at("pagefault.insns_per_page_free").values.at(0), 100);
  EXPECT_DOUBLE_EQ(o.metrics.at("pagefault.kernel_insns_per_page_free").values.at(0), 6390.0 / 64);
  // per_cpu: one slot per worker's CPU, ascending.
  const Metric& pc = o.metrics.at("pagefault.insns_per_page_fault_per_cpu");
  ASSERT_TRUE(pc.per_cpu);
  EXPECT_EQ(pc.per_cpu->cpus, (std::vector<int>{1, 2}));
  EXPECT_EQ(pc.per_cpu->kind, "instructions");
  EXPECT_TRUE(pc.per_cpu->counts.empty());
  EXPECT_FALSE(pc.per_cpu->window_s);
  EXPECT_EQ(pc.values, (std::vector<double>{520, 560}));
  EXPECT_EQ(pc.source, "tcg-plugin");
  EXPECT_EQ(pc.aggregate, "mean");
  EXPECT_EQ(o.metrics.at("pagefault.kernel_insns_per_page_fault_per_cpu").values,
            (std::vector<double>{515, 555}));
  EXPECT_EQ(o.metrics.at("pagefault.insns_per_page_free_per_cpu").values,
            (std::vector<double>{110, 120}));
  EXPECT_EQ(o.metrics.at("pagefault.kernel_insns_per_page_free_per_cpu").values,
            (std::vector<double>{7000.0 / 64, 7640.0 / 64}));
  // The JSON shape of a per-CPU metric.
  const nlohmann::json j = pc;
  EXPECT_EQ(j["cpus"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(j["values"], nlohmann::json::array({520, 560}));
  EXPECT_TRUE(o.metrics.count("pagefault.noise.kernel_insns_per_s"));
}

TEST(InsnMetrics, UnbalancedFreeMarkersInvalidateTheFreeMetricOnly) {
  std::string plugin = kFaultPlugin;
  const std::string line = "class=1 n=10 user=100 kernel=64000 unbalanced=0";
  plugin.replace(plugin.find(line), line.size(), "class=1 n=10 user=100 kernel=64000 unbalanced=1");
  const auto o = derive_faults(fault_tool(), plugin);
  EXPECT_FALSE(o.metrics.count("pagefault.insns_per_page_free"));
  EXPECT_FALSE(o.metrics.count("pagefault.kernel_insns_per_page_free"));
  EXPECT_EQ(invalid(o, "pagefault.insns_per_page_free"), "1 unbalanced class-1 markers on vCPU 1");
  EXPECT_TRUE(o.metrics.count("pagefault.insns_per_page_fault"));
  EXPECT_TRUE(o.metrics.count("pagefault.insns_per_page_free_per_cpu"));
}

TEST(InsnMetrics, MarkersOnACpuOtherThanTheWorkersAreInvalid) {
  // The tool says its single worker ran on CPU 2, the markers say CPU 1.
  const auto o = derive_faults(fault_tool(2), kFaultPlugin);
  EXPECT_FALSE(o.metrics.count("pagefault.insns_per_page_fault"));
  EXPECT_EQ(invalid(o, "pagefault.insns_per_page_fault"),
            "10 regions and 0 unbalanced markers on vCPU 1, expected vCPU 2 only; "
            "no regions on vCPU 2");
  EXPECT_EQ(invalid(o, "pagefault.insns_per_page_free"),
            "10 class-1 regions and 0 unbalanced class-1 markers on vCPU 1, expected vCPU 2 "
            "only; no class-1 regions on vCPU 2");
  EXPECT_TRUE(o.metrics.count("pagefault.insns_per_page_fault_per_cpu"));
  // per_cpu regions on a CPU that ran no worker: the per-CPU metric is left out whole.
  std::string plugin = kFaultPlugin;
  plugin.insert(plugin.find("exit "),
                "region 1 vcpu=3 class=2 n=1 user=1 kernel=1 unbalanced=0 "
                "median=2 kernel_median=1\n");
  const auto p = derive_faults(fault_tool(), plugin);
  EXPECT_FALSE(p.metrics.count("pagefault.insns_per_page_fault_per_cpu"));
  EXPECT_FALSE(p.metrics.count("pagefault.kernel_insns_per_page_fault_per_cpu"));
  EXPECT_EQ(invalid(p, "pagefault.insns_per_page_fault_per_cpu"),
            "1 class-2 regions and 0 unbalanced class-2 markers on vCPU 3, expected vCPUs 1-2 "
            "only");
  EXPECT_TRUE(p.metrics.count("pagefault.insns_per_page_free_per_cpu"));
  EXPECT_TRUE(p.metrics.count("pagefault.insns_per_page_fault"));
}

TEST(InsnMetrics, ARegionCountOtherThanTheMarkedBatchesIsInvalid) {
  const auto o = derive_faults(fault_tool(1, 10), kFaultPlugin);
  EXPECT_FALSE(o.metrics.count("pagefault.insns_per_page_fault_per_cpu"));
  EXPECT_FALSE(o.metrics.count("pagefault.insns_per_page_free_per_cpu"));
  EXPECT_EQ(invalid(o, "pagefault.insns_per_page_fault_per_cpu"),
            "9 class-2 regions on vCPU 2, expected 10");
  EXPECT_EQ(invalid(o, "pagefault.insns_per_page_free_per_cpu"),
            "9 class-3 regions on vCPU 2, expected 10");
  EXPECT_TRUE(o.metrics.count("pagefault.insns_per_page_fault"));
}

TEST(InsnMetrics, PageFaultBenchWithoutMarkedBatchesGivesNoPerPageInstructions) {
  std::string tool = fault_tool();
  for (std::size_t at; (at = tool.find(",\"marked_batches\":")) != std::string::npos;)
    tool.erase(at, tool.find('}', at) - at);
  const auto o = derive_faults(tool, kFaultPlugin);
  EXPECT_FALSE(o.metrics.count("pagefault.insns_per_page_fault"));
  EXPECT_FALSE(o.metrics.count("pagefault.insns_per_page_fault_per_cpu"));
  EXPECT_FALSE(o.record.contains("invalid")) << o.record.dump();
  EXPECT_TRUE(o.metrics.count("pagefault.noise.kernel_insns_per_s"));
}

TEST(InsnMetrics, HostilePageFaultOutputGivesReasonsNotCrashes) {
  // Two workers reporting one CPU in the per_cpu phase.
  std::string tool = fault_tool();
  tool.replace(tool.find(fault_worker(2, 9)), fault_worker(2, 9).size(), fault_worker(1, 9));
  const auto o = derive_faults(tool, kFaultPlugin);
  EXPECT_EQ(invalid(o, "pagefault.insns_per_page_fault_per_cpu"), "two workers on CPU 1");
  EXPECT_TRUE(o.metrics.count("pagefault.insns_per_page_fault"));
  // A second single phase: neither is read.
  std::string two = fault_tool();
  two.replace(two.find("{\"name\":\"per_cpu\""), 17, "{\"name\":\"single\"");
  const auto t = derive_faults(two, kFaultPlugin);
  EXPECT_FALSE(t.metrics.count("pagefault.insns_per_page_fault"));
  EXPECT_EQ(invalid(t, "pagefault.insns_per_page_fault"), "the tool reported 2 single phases");
  // Unparsable tool output: the workload's own parser reports it; nothing here.
  const auto g = derive_faults("{\"tool\":\"page-fault-bench\"}\n", kFaultPlugin);
  EXPECT_FALSE(g.record.contains("invalid"));
  EXPECT_TRUE(g.metrics.count("pagefault.noise.kernel_insns_per_s"));
}

// Format 3 (tcg-plugin/insn-count.c): the same cell with rep-string executions, a profile by
// function that sums to each CPU's kernel count, and wakeup paths on CPU 3.
constexpr const char* kPlugin3 =
    "isolab-insn-count 3 plugin_api=1 qemu_api=0-1 vcpus=4 profile_cpus=2-3 symbols=3 mode=exact\n"
    "step 1 begin vcpu=0 counts=100:1000,0:500,0:0,0:0 rep=0:0,0:0,0:0,0:0 "
    "faults=0:0:0,0:0:0,0:0:0,0:0:0\n"
    "step 1 end vcpu=0 counts=200:2000,0:900,90000:4000000,0:20000 rep=0:0,0:0,10:900000,0:0 "
    "faults=0:0:0,0:0:0,3:1:2,0:0:0\n"
    "region 1 vcpu=2 n=1000 user=60000 kernel=3200000 rep=800000 unbalanced=0 median=3100 "
    "kernel_median=3040 norep_median=2300\n"
    "prof 1 vcpu=2 fn=0xffffffff81001400 insns=3000000 rep=0\n"
    "prof 1 vcpu=2 fn=0xffffffff81001000 insns=950000 rep=900000\n"
    "prof 1 vcpu=2 fn=none insns=50000 rep=0\n"
    "prof 1 vcpu=3 fn=0xffffffff81001000 insns=20000 rep=0\n"
    "wake 1 vcpu=3 n=4 nowake=1 timer=3 irq=1 noentry=0 insns=4000,9000,5000,300000\n"
    "wakefn 1 vcpu=3 fn=0xffffffff81001000 insns=290000\n"
    "wakefn 1 vcpu=3 fn=none insns=9000\n"
    "wakefn 1 vcpu=3 fn=user insns=1000\n"
    "step 2 begin vcpu=0 counts=300:3000,0:1000,90000:4000000,0:20000 rep=0:0,0:0,10:900000,0:0 "
    "faults=0:0:0,0:0:0,3:1:2,0:0:0\n"
    "step 2 end vcpu=0 counts=400:4000,0:1100,90000:4000000,0:30000 rep=0:0,0:0,10:900000,0:0 "
    "faults=0:0:0,0:0:0,3:1:2,0:0:0\n"
    "prof 2 vcpu=3 fn=0xffffffff81001000 insns=9999 rep=0\n"
    "exit stray_step_ends=0 early_markers=0 counts=400:4000,0:1100,90000:4000000,0:30000 "
    "rep=0:0,0:0,10:900000,0:0 faults=0:0:0,0:0:0,3:1:2,0:0:0 boot=1,1,1,1\n"
    "end\n";

constexpr const char* kMap3 =
    "ffffffff81000000 T _stext\nffffffff81001000 t clear_page_erms\n"
    "ffffffff81001400 T vmstat_update\nffffffff81002000 T _etext\n";

ChannelContents records3(const std::string& stext = "ffffffff81000000 T _stext\n") {
  ChannelContents ch = records(kTool);
  ch.records.push_back({"kallsyms_stext", 0, stext});
  return ch;
}

TEST(InsnMetrics, Format3RepMetricsBesideThePerOperationOnes) {
  const auto w = workloads();
  const SystemMap map = parse_system_map(kMap3);
  const auto o = derive(w, records3(), kPlugin3, &map);
  EXPECT_DOUBLE_EQ(o.metrics.at("vmstat-syscall.insns_per_syscall").values.at(0), 1550);
  // The median pair less its rep executions, and the mean rep executions per pair, per call.
  EXPECT_DOUBLE_EQ(o.metrics.at("vmstat-syscall.norep_insns_per_syscall").values.at(0), 1150);
  EXPECT_DOUBLE_EQ(o.metrics.at("vmstat-syscall.rep_iters_per_syscall").values.at(0), 400);
  EXPECT_EQ(o.metrics.at("vmstat-syscall.norep_insns_per_syscall").kind, "instructions");
  const auto& s = o.record["steps"]["vmstat-syscall"];
  EXPECT_EQ(s["kernel_rep"]["2"], 900000);
  EXPECT_EQ(s["faults"]["2"],
            (nlohmann::json{{"user_fixed", 3}, {"user_unmatched", 1}, {"kernel", 2}}));
}

TEST(InsnMetrics, Format3ProfileAccountsForEveryKernelInstruction) {
  const auto w = workloads();
  const SystemMap map = parse_system_map(kMap3);
  InsnCellInput in;
  const ChannelContents ch = records3();
  in.workloads = &w;
  in.isolated = parse_cpulist("2-3", 4);
  in.records = &ch;
  in.plugin_text = kPlugin3;
  in.system_map = &map;
  in.profile_functions = 1;  // the top function, then the rest
  const auto o = insn_cell_metrics(in);
  const auto& cpu2 = o.record["profile"]["vmstat-syscall"]["2"];
  ASSERT_EQ(cpu2.size(), 1u);
  EXPECT_EQ(cpu2[0]["function"], "vmstat_update");
  EXPECT_EQ(o.record["profile_rest"]["vmstat-syscall"]["2"], 950000);
  EXPECT_EQ(o.record["profile_unattributed"]["vmstat-syscall"]["2"], 50000);
  // rows + rest + unattributed = the CPU's kernel count of the step.
  EXPECT_EQ(o.record["steps"]["vmstat-syscall"]["kernel"]["2"], 3000000 + 950000 + 50000);
  // Step 2's profile of CPU 3 sums to 9999, its kernel count is 10000: left out, with why.
  EXPECT_FALSE(o.record["profile"].contains("idle"));
  EXPECT_EQ(o.record["profile_invalid"]["idle"]["3"],
            "the profile of vCPU 3 in step 2 sums to 9999 instructions, its kernel count is 10000");
}

TEST(InsnMetrics, WakeupPathLengthsPerCpu) {
  const auto w = workloads();
  const SystemMap map = parse_system_map(kMap3);
  const auto o = derive(w, records3(), kPlugin3, &map);
  const Metric& max = o.metrics.at("vmstat-syscall.wakeup_insns_max");
  EXPECT_EQ(max.per_cpu->cpus, std::vector<int>{3});
  EXPECT_EQ(max.per_cpu->kind, "instructions");
  EXPECT_EQ(max.values, std::vector<double>{300000});
  EXPECT_EQ(max.source, "tcg-plugin");
  // p99 of 4 paths by the nearest rank: the 4th smallest.
  EXPECT_EQ(o.metrics.at("vmstat-syscall.wakeup_insns_p99").values, std::vector<double>{300000});
  const auto& r = o.record["wakeups"]["vmstat-syscall"]["3"];
  EXPECT_EQ(r["n"], 4);
  EXPECT_EQ(r["nowake"], 1);
  EXPECT_EQ(r["from_timer"], 3);
  EXPECT_EQ(r["median"], 5000);
  EXPECT_EQ(r["longest_path"][0]["function"], "clear_page_erms");
  EXPECT_EQ(r["longest_path"][1]["function"], "(outside every function)");
  EXPECT_EQ(r["longest_path"][2]["function"], "(user)");
  EXPECT_EQ(r["histogram"][0], (nlohmann::json{{"below", 4096}, {"paths", 1}}));
}

// KASLR: a kernel that runs elsewhere than its System.map says gets no profile and no wakeup
// paths, with the reason; the counts and per-operation metrics stay.
TEST(InsnMetrics, ARelocatedKernelInvalidatesTheProfile) {
  const auto w = workloads();
  const SystemMap map = parse_system_map(kMap3);
  const auto o = derive(w, records3("ffffffff9e000000 T _stext\n"), kPlugin3, &map);
  EXPECT_EQ(o.record["profile_invalid"],
            "the kernel's System.map does not describe the kernel that ran: the kernel runs at "
            "0xffffffff9e000000 (/proc/kallsyms _stext), its System.map has it at "
            "0xffffffff81000000: relocated by +0x1d000000, as KASLR does; no profile and no "
            "wakeup paths");
  EXPECT_FALSE(o.record.contains("profile"));
  EXPECT_FALSE(o.metrics.count("vmstat-syscall.wakeup_insns_max"));
  EXPECT_TRUE(o.metrics.count("vmstat-syscall.insns_per_syscall"));
  // No record from the guest at all: not checked, so not trusted either.
  ChannelContents none = records(kTool);
  const auto n = derive(w, none, kPlugin3, &map);
  EXPECT_NE(n.record["profile_invalid"].get<std::string>().find("sent no _stext line"),
            std::string::npos);
}

TEST(InsnMetrics, TheInlineBuildGivesNoMetrics) {
  std::string plugin = kPlugin3;
  plugin.replace(plugin.find("mode=exact"), 10, "mode=inline");
  const auto w = workloads();
  const auto o = derive(w, records3(), plugin);
  EXPECT_TRUE(o.metrics.empty());
  EXPECT_NE(o.record["problems"][0].get<std::string>().find("inline mode"), std::string::npos);
}

}  // namespace
}  // namespace isolab
