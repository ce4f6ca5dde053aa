// The guest that stands for a customer's machine (machine/guest_shape.h) and the runtime
// settings TuneD applies there (machine/runtime_settings.h): the rule of each case, the CPU
// each vCPU stands for, the topology, the NUMA nodes and the line in guest numbering.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "machine/guest_shape.h"
#include "machine/machine.h"
#include "machine/runtime_settings.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

std::string data(const std::string& rel) {
  return (std::filesystem::path(ISOLAB_TEST_DATA_DIR) / "machine" / rel).string();
}

Fact<CpuSet> set(const char* list, unsigned n = 96) { return {parse_cpulist(list, n), {}}; }

// docs/sources.md [cm6]: 96 CPUs, 2 x 24 x 2, housekeeping 0,1,24,25,48,49,72,73; the nodes as
// such a machine has them (node0 the first socket's CPUs and their siblings).
MachineFacts cm6_like() {
  MachineFacts m;
  m.cpus = set("0-95");
  m.online = set("0-95");
  m.sockets = Fact<unsigned>{2, {}};
  m.cores_per_socket = Fact<unsigned>{24, {}};
  m.threads_per_core = Fact<unsigned>{2, {}};
  m.numa_nodes = Fact<std::vector<NumaNode>>{
      {{0, parse_cpulist("0-23,48-71", 96)}, {1, parse_cpulist("24-47,72-95", 96)}}, {}};
  for (auto* f : {&m.isolated, &m.nohz_full, &m.rcu_nocbs}) *f = set("2-23,26-47,50-71,74-95");
  m.housekeeping = set("0,1,24,25,48,49,72,73");
  return m;
}

std::vector<std::string> lists(const std::vector<CpuSet>& nodes) {
  std::vector<std::string> out;
  for (const CpuSet& n : nodes) out.push_back(n.to_list());
  return out;
}

TEST(GuestShape, Cm1BootsItsOnlineCpusWithTheirTopology) {
  const GuestShape s = guest_shape(read_machine(data("cm1-ocp-mg-e2e-gcp4")));
  EXPECT_EQ(s.rule, "online CPUs only");
  EXPECT_EQ(s.why, "CPUs 2-3 offline: not booted");
  EXPECT_EQ(s.customer_cpu, (std::vector<unsigned>{0, 1}));
  EXPECT_TRUE(s.identity());
  EXPECT_TRUE(s.topology_kept);
  EXPECT_EQ(std::vector<unsigned>({s.sockets, s.cores, s.threads}),
            (std::vector<unsigned>{1, 2, 1}));
  EXPECT_TRUE(s.numa_nodes.empty());  // one node: no layout
}

TEST(GuestShape, Cm3IsTheSameMachine) {
  const GuestShape s = guest_shape(read_machine(data("cm3-hotsos-ubuntu-openstack-2cpu")));
  EXPECT_EQ(s.rule, "same");
  EXPECT_EQ(s.vcpus(), 2u);
  EXPECT_EQ(std::vector<unsigned>({s.sockets, s.cores, s.threads}),
            (std::vector<unsigned>{2, 1, 1}));
}

TEST(GuestShape, NinetySixCpusKeepOneCpuPerClass) {
  const GuestShape s = guest_shape(cm6_like());
  EXPECT_EQ(s.rule, "one CPU per class");
  EXPECT_EQ(s.customer_cpu, (std::vector<unsigned>{0, 2, 24, 26}));
  EXPECT_THAT(s.why, HasSubstr("96 online CPUs, more than 16: each class's lowest CPU, 0,2,24,26"));
  EXPECT_EQ(lists(s.numa_nodes), (std::vector<std::string>{"0-1", "2-3"}));
  // One socket per vCPU on several nodes; the machine's 2 x 24 x 2 is not kept.
  EXPECT_FALSE(s.topology_kept);
  EXPECT_EQ(std::vector<unsigned>({s.sockets, s.cores, s.threads}),
            (std::vector<unsigned>{4, 1, 1}));
  EXPECT_EQ(s.to_guest(parse_cpulist("2-23,26-47,50-71,74-95", 96)).to_list(), "1,3");
  EXPECT_EQ(line_in_guest_numbering("BOOT_IMAGE=/vmlinuz isolcpus=nohz,domain,2-23,26-47,50-71,"
                                    "74-95 nohz_full=2-23,26-47,50-71,74-95 rcu_nocbs=2-95 "
                                    "tuned.non_isolcpus=00000300,00030000,03000003 quiet",
                                    s),
            "BOOT_IMAGE=/vmlinuz isolcpus=nohz,domain,1,3 nohz_full=1,3 rcu_nocbs=1-3 "
            "tuned.non_isolcpus=5 quiet");
}

TEST(GuestShape, AtTheCapTheMachineIsKeptButNoSocketSpansTwoNodes) {
  MachineFacts m = cm6_like();
  GuestShape s = guest_shape(m, 96);
  EXPECT_EQ(s.rule, "same");
  EXPECT_EQ(s.vcpus(), 96u);
  EXPECT_EQ(lists(s.numa_nodes), (std::vector<std::string>{"0-23,48-71", "24-47,72-95"}));
  EXPECT_EQ(line_in_guest_numbering("nohz_full=2-23", s), "nohz_full=2-23");
  // QEMU's socket 0 would be vCPUs 0-47, on both nodes: one socket per vCPU instead.
  EXPECT_FALSE(s.topology_kept);
  EXPECT_THAT(s.why, HasSubstr("NUMA nodes cut across sockets"));
  EXPECT_EQ(std::vector<unsigned>({s.sockets, s.cores, s.threads}),
            (std::vector<unsigned>{96, 1, 1}));
  // Nodes that follow QEMU's numbering keep the machine's 2 x 24 x 2.
  m.numa_nodes->value = {{0, parse_cpulist("0-47", 96)}, {1, parse_cpulist("48-95", 96)}};
  s = guest_shape(m, 96);
  EXPECT_TRUE(s.topology_kept);
  EXPECT_EQ(std::vector<unsigned>({s.sockets, s.cores, s.threads}),
            (std::vector<unsigned>{2, 24, 2}));
}

TEST(GuestShape, ALineTheKernelRefusedIsKeptAsWritten) {
  GuestShape s = guest_shape(cm6_like());
  EXPECT_EQ(line_in_guest_numbering("nohz_full=5-3 isolcpus=x", s), "nohz_full=5-3 isolcpus=x");
}

// docs/sources.md [cm4]: the PerformanceProfile names 48 CPUs (reserved 0,1,24,25, isolated the
// rest); its node's folder has the line alone, no CPU count, whose isolcpus=, rcu_nocbs= and
// tuned.non_isolcpus= name the same 48: both get the same guest (before, the folder got one of
// 48 vCPUs "from the line").
TEST(GuestShape, Cm4ProfileAndItsNodesLineKeepOnePerClass) {
  for (const char* in :
       {"cm4-k8s5glab-pao-r630-48cpu/performance_profile.yaml", "cm4-k8s5glab-pao-r630-48cpu"}) {
    const GuestShape s = guest_shape(read_machine(data(in)));
    EXPECT_EQ(s.rule, "one CPU per class") << in;
    EXPECT_EQ(s.customer_cpu, (std::vector<unsigned>{0, 2})) << in;
    EXPECT_THAT(s.why, HasSubstr("48 online CPUs, more than 16")) << in;
  }
  EXPECT_THAT(guest_shape(read_machine(data("cm4-k8s5glab-pao-r630-48cpu"))).why,
              HasSubstr("no CPU count in the dump: the CPUs its isolation facts name, 0-47"));
}

TEST(GuestShape, WithoutACpuCountTheLineDecides) {
  MachineFacts m;
  const GuestShape s = guest_shape(m);
  EXPECT_EQ(s.rule, "from the line");
  EXPECT_EQ(s.vcpus(), 0u);
}

TEST(RuntimeSettings, Cm1TunedMovesToHousekeepingAndSetsItsSysctls) {
  const RuntimeSettings r = runtime_settings(read_machine(data("cm1-ocp-mg-e2e-gcp4")));
  ASSERT_TRUE(r.housekeeping);
  EXPECT_EQ(r.housekeeping->to_list(), "0");
  EXPECT_THAT(r.moved_by, HasSubstr("TuneD isolating 1 ("));
  EXPECT_EQ(r.sysctls, (std::vector<std::pair<std::string, std::string>>{
                           {"kernel.hung_task_timeout_secs", "600"},
                           {"kernel.nmi_watchdog", "0"},
                           {"kernel.numa_balancing", "0"},
                           {"kernel.sched_rt_runtime_us", "-1"},
                           {"kernel.timer_migration", "1"},
                           {"vm.stat_interval", "10"}}));
  EXPECT_TRUE(r.left_out.empty());
}

TEST(RuntimeSettings, WithoutTunedNothingMovesAndAnUnwritableValueIsLeftOut) {
  MachineFacts m = read_machine(data("cm3-hotsos-ubuntu-openstack-2cpu"));
  ASSERT_TRUE(m.sysctls);
  m.sysctls->value["kernel.watchdog_cpumask"] = {"0-1;rm", {}};
  const RuntimeSettings r = runtime_settings(m);
  EXPECT_FALSE(r.housekeeping);
  EXPECT_THAT(r.not_moved_why, HasSubstr("no TuneD isolated_cores"));
  ASSERT_EQ(r.left_out.size(), 1u);
  EXPECT_EQ(r.left_out[0].first, "kernel.watchdog_cpumask");
  EXPECT_FALSE(r.sysctls.empty());
}

}  // namespace
}  // namespace isolab
