// docs/sources.md [cm1]-[cm7]: customers' machines as the customers handed them over
// (tests/data/machine/, see its README), each read by read_machine() and held to the right
// answer its source shows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "machine/machine.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

std::string data(const std::string& rel) {
  return (std::filesystem::path(ISOLAB_TEST_DATA_DIR) / "machine" / rel).string();
}

std::string list(const std::optional<Fact<CpuSet>>& f) {
  return f ? f->value.to_list() : "(not read)";
}

std::string sources(const std::vector<Origin>& from) {
  std::string out;
  for (const Origin& o : from) out += o.text() + "\n";
  return out;
}

std::string not_read(const MachineFacts& m, const std::string& fact) {
  for (const NotRead& n : m.not_read)
    if (n.fact == fact) return n.why;
  return "";
}

bool has_note(const MachineFacts& m, const std::string& needle) {
  for (const std::string& n : m.notes)
    if (n.find(needle) != std::string::npos) return true;
  return false;
}

std::string sysctl(const MachineFacts& m, const std::string& name) {
  if (!m.sysctls) return "(not read)";
  const auto it = m.sysctls->value.find(name);
  return it == m.sysctls->value.end() ? "(absent)" : it->second.value;
}

std::string variable(const MachineFacts& m, const std::string& name) {
  if (!m.tuned) return "(not read)";
  for (const auto& [k, v] : m.tuned->value.variables)
    if (k == name) return v;
  return "(absent)";
}

// CM1: a 4-CPU cloud VM whose CPUs 2-3 are offline; CPU 1 isolated by isolcpus=managed_irq,
// nohz_full=, rcu_nocbs= and the Tuned profile; virtio queue IRQs 31-38 sit on CPU 1.
TEST(MachineCases, Cm1MustGatherOfAnOpenShiftWorkerWithOfflineCpus) {
  const MachineFacts m = read_machine(data("cm1-ocp-mg-e2e-gcp4"));
  EXPECT_EQ(m.kind, "must-gather");
  EXPECT_EQ(m.node, "ci-ln-t0prq3t-72292-h4x2n-worker-a-wqnqt");
  ASSERT_TRUE(m.kernel_release);
  EXPECT_EQ(m.kernel_release->value, "4.18.0-348.23.1.el8_5.x86_64");
  EXPECT_EQ(m.kernel_release->from.front().text(),
            "cluster-scoped-resources/core/nodes/ci-ln-t0prq3t-72292-h4x2n-worker-a-wqnqt.yaml:341 "
            "(status.nodeInfo.kernelVersion)");
  ASSERT_TRUE(m.cmdline);
  EXPECT_THAT(m.cmdline->value, HasSubstr("isolcpus=managed_irq,1 nohz_full=1"));
  EXPECT_EQ(m.cmdline->from.front().text(),
            "nodes/ci-ln-t0prq3t-72292-h4x2n-worker-a-wqnqt/proc_cmdline:1");
  EXPECT_EQ(list(m.cpus), "0-3");
  EXPECT_THAT(sources(m.cpus->from), HasSubstr("/lscpu (lscpu -e: 4 rows)"));
  EXPECT_THAT(sources(m.cpus->from), HasSubstr("sysinfo.tgz:sys/devices/system/cpu/offline"));
  EXPECT_EQ(list(m.online), "0-1");
  ASSERT_TRUE(m.sockets && m.cores_per_socket && m.threads_per_core);
  EXPECT_EQ(m.sockets->value, 1u);
  EXPECT_EQ(m.cores_per_socket->value, 2u);
  EXPECT_EQ(m.threads_per_core->value, 1u);
  ASSERT_TRUE(m.numa_nodes);
  ASSERT_EQ(m.numa_nodes->value.size(), 1u);
  EXPECT_EQ(m.numa_nodes->value[0].cpus.to_list(), "0-1");
  EXPECT_EQ(list(m.isolated), "1");
  EXPECT_EQ(list(m.nohz_full), "1");
  EXPECT_EQ(list(m.rcu_nocbs), "1");
  // The mask 00000001 leaves the offline CPUs out: housekeeping is the online CPU 0 only.
  EXPECT_EQ(list(m.housekeeping), "0");
  ASSERT_TRUE(m.tuned);
  EXPECT_EQ(m.tuned->value.profile, "openshift-node-performance-performance");
  EXPECT_EQ(m.tuned->value.include,
            (std::vector<std::string>{"openshift-node", "cpu-partitioning"}));
  EXPECT_EQ(variable(m, "isolated_cores"), "1");
  EXPECT_EQ(sysctl(m, "kernel.sched_rt_runtime_us"), "-1");
  EXPECT_EQ(sysctl(m, "vm.stat_interval"), "10");
  EXPECT_EQ(sysctl(m, "kernel.timer_migration"), "1");
  EXPECT_EQ(sysctl(m, "kernel.nmi_watchdog"), "0");
  EXPECT_EQ(sysctl(m, "kernel.hung_task_timeout_secs"), "600");
  ASSERT_TRUE(m.irqs_on_isolated);
  std::vector<unsigned> only;
  for (const IrqPlacement& i : m.irqs_on_isolated->value)
    if (i.only_isolated) only.push_back(i.irq);
  EXPECT_EQ(only, (std::vector<unsigned>{31, 32, 33, 34, 35, 36, 37, 38}));
  EXPECT_EQ(m.irqs_on_isolated->value.back().name, "virtio1-output.3");
  // The PerformanceProfile renders the isolation the node booted with.
  ASSERT_TRUE(m.rendered_cmdline);
  EXPECT_THAT(m.rendered_cmdline->value,
              HasSubstr("nohz=on rcu_nocbs=1 tuned.non_isolcpus=00000001 systemd.cpu_affinity=0 "
                        "intel_iommu=on iommu=pt isolcpus=managed_irq,1 nohz_full=1"));
  EXPECT_FALSE(has_note(m, "the profile renders"));
  EXPECT_TRUE(has_note(m, "PID 1 (systemd) runs on CPUs 0 (nodes/"));
  EXPECT_TRUE(m.not_read.empty()) << m.not_read.front().fact << ": " << m.not_read.front().why;
}

// CM2: bare metal, 2 sockets x 16 cores x 1 thread (SMT off), NUMA node0 the even CPUs, no
// isolation; the must-gather holds only the node's sysinfo.tgz and its Node object.
TEST(MachineCases, Cm2BareMetalWithSmtOffAndNoIsolation) {
  const MachineFacts m = read_machine(data("cm2-ocp-mg-bm-worker2-smtoff"));
  EXPECT_EQ(m.node, "worker2.internal");
  ASSERT_TRUE(m.kernel_release);
  EXPECT_EQ(m.kernel_release->value, "5.14.0-427.59.1.el9_4.x86_64");
  EXPECT_EQ(m.cmdline->from.front().text(), "nodes/worker2.internal/sysinfo.tgz:proc/cmdline:1");
  EXPECT_EQ(list(m.cpus), "0-31");
  EXPECT_EQ(list(m.online), "0-31");
  ASSERT_TRUE(m.sockets && m.cores_per_socket && m.threads_per_core);
  EXPECT_EQ(m.sockets->value, 2u);
  EXPECT_EQ(m.cores_per_socket->value, 16u);
  EXPECT_EQ(m.threads_per_core->value, 1u);
  ASSERT_TRUE(m.numa_nodes);
  ASSERT_EQ(m.numa_nodes->value.size(), 2u);
  EXPECT_EQ(m.numa_nodes->value[0].cpus.to_list(), "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30");
  EXPECT_EQ(m.numa_nodes->value[1].cpus.to_list(), "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31");
  EXPECT_EQ(list(m.isolated), "");
  EXPECT_EQ(list(m.housekeeping), "0-31");
  ASSERT_TRUE(m.irqs_on_isolated);
  EXPECT_TRUE(m.irqs_on_isolated->value.empty());
  EXPECT_THAT(not_read(m, "tuned"), HasSubstr("no TuneD active profile"));
  EXPECT_THAT(not_read(m, "sysctls"), HasSubstr("no sysctl -a output"));
}

// CM7: two more nodes of CM2's must-gather, which no case here describes: the master, 112 CPUs
// (2 sockets x 28 cores x 2 threads) without isolation, and the worker-cnf node, 80 CPUs with
// the RT kernel and isolcpus=managed_irq / nohz_full / rcu_nocbs on all but CPUs 5-10. The
// right answer is the vendor tool's own reading (EXPECTED/ppc-expected-info: cpus_count,
// smt_enabled, numa_cells), the line's `tuned.non_isolcpus=000007e0` (bits 5-10) and
// `systemd.cpu_affinity=5,6,7,8,9,10`.
std::string even_or_odd(unsigned first, unsigned count) {
  std::string out;
  for (unsigned c = first; c < count; c += 2) out += (out.empty() ? "" : ",") + std::to_string(c);
  return out;
}

MachineOptions on_node(const std::string& node) {
  MachineOptions o;
  o.node = node;
  return o;
}

// CPUs 0..cpus-1 online, 2 sockets x `cores` x 2 threads, NUMA node0 the even CPUs and node1
// the odd ones: both nodes' shape.
void expect_two_smt_sockets_split_by_parity(const MachineFacts& m, unsigned cpus, unsigned cores) {
  const std::string all = "0-" + std::to_string(cpus - 1);
  EXPECT_EQ(list(m.cpus), all);
  EXPECT_EQ(list(m.online), all);
  ASSERT_TRUE(m.sockets && m.cores_per_socket && m.threads_per_core);
  EXPECT_EQ(m.sockets->value, 2u);
  EXPECT_EQ(m.cores_per_socket->value, cores);
  EXPECT_EQ(m.threads_per_core->value, 2u);  // smt_enabled
  ASSERT_TRUE(m.numa_nodes);
  ASSERT_EQ(m.numa_nodes->value.size(), 2u);
  EXPECT_EQ(m.numa_nodes->value[0].cpus.to_list(), even_or_odd(0, cpus));
  EXPECT_EQ(m.numa_nodes->value[1].cpus.to_list(), even_or_odd(1, cpus));
}

TEST(MachineCases, Cm7MasterOf112CpusAndIsolatedWorkerOf80) {
  const std::string dump = data("cm7-ocp-mg-bm-master-worker1");
  EXPECT_THROW(read_machine(dump), Error);  // two nodes: --node chooses
  const MachineFacts master = read_machine(dump, on_node("master.internal"));
  expect_two_smt_sockets_split_by_parity(master, 112, 28);
  EXPECT_EQ(list(master.isolated), "");
  EXPECT_EQ(list(master.housekeeping), "0-111");

  const MachineFacts worker = read_machine(dump, on_node("worker1.internal"));
  ASSERT_TRUE(worker.kernel_release);
  EXPECT_EQ(worker.kernel_release->value, "5.14.0-427.59.1.el9_4.x86_64+rt");
  expect_two_smt_sockets_split_by_parity(worker, 80, 20);
  EXPECT_EQ(list(worker.isolated), "0-4,11-79");
  EXPECT_EQ(list(worker.nohz_full), "0-4,11-79");
  EXPECT_EQ(list(worker.rcu_nocbs), "0-4,11-79");
  EXPECT_EQ(list(worker.housekeeping), "5-10");
  // The IRQs the node left on isolated CPUs only, as its proc/irq says: the SMBus controller's
  // on CPU 18, each NVMe and NIC queue on one isolated CPU.
  ASSERT_TRUE(worker.irqs_on_isolated);
  bool smbus = false;
  for (const auto& i : worker.irqs_on_isolated->value)
    if (i.irq == 16) smbus = i.only_isolated && i.name == "i801_smbus";
  EXPECT_TRUE(smbus);
}

// CM3: part of a sos report of a 2-CPU KVM guest; the real uname is behind the `uname` link.
TEST(MachineCases, Cm3SosReportOfAnUbuntuGuest) {
  const MachineFacts m = read_machine(data("cm3-hotsos-ubuntu-openstack-2cpu"));
  EXPECT_EQ(m.kind, "sos report");
  ASSERT_TRUE(m.kernel_release);
  EXPECT_EQ(m.kernel_release->value, "5.4.0-97-generic");
  EXPECT_EQ(m.kernel_release->from.front().text(), "sos_commands/kernel/uname_-a:1 (uname -a)");
  EXPECT_EQ(list(m.cpus), "0-1");
  ASSERT_TRUE(m.sockets && m.cores_per_socket && m.threads_per_core && m.numa_nodes);
  EXPECT_EQ(m.sockets->value, 2u);
  EXPECT_EQ(m.cores_per_socket->value, 1u);
  EXPECT_EQ(m.threads_per_core->value, 1u);
  EXPECT_EQ(m.numa_nodes->value.size(), 1u);
  EXPECT_EQ(list(m.isolated), "");  // `isolated` holds only a newline
  EXPECT_THAT(sources(m.isolated->from), HasSubstr("sys/devices/system/cpu/isolated"));
  EXPECT_EQ(sysctl(m, "vm.stat_interval"), "1");
  EXPECT_EQ(sysctl(m, "kernel.timer_migration"), "1");
  EXPECT_EQ(sysctl(m, "kernel.sched_rt_runtime_us"), "950000");
  EXPECT_EQ(m.sysctls->value.at("vm.stat_interval").from.text(),
            "sos_commands/kernel/sysctl_-a:3385");
}

// CM4: the PerformanceProfile alone, rendered; then with the line the node showed, which an
// older operator wrote without nohz_full=.
TEST(MachineCases, Cm4PerformanceProfileRenderedAndComparedWithTheNode) {
  const MachineFacts p = read_machine(data("cm4-k8s5glab-pao-r630-48cpu/performance_profile.yaml"));
  EXPECT_EQ(p.kind, "performance profile");
  EXPECT_THAT(p.cmdline->value, HasSubstr("rcu_nocbs=2-23,26-47 tuned.non_isolcpus=03000003 "
                                          "systemd.cpu_affinity=0,1,24,25 intel_iommu=on iommu=pt "
                                          "isolcpus=managed_irq,2-23,26-47 nohz_full=2-23,26-47"));
  EXPECT_THAT(p.cmdline->value, HasSubstr("module_blacklist=ixgbevf,iavf default_hugepagesz=1G "
                                          "hugepagesz=1G hugepages=48"));
  EXPECT_EQ(list(p.cpus), "0-47");
  EXPECT_EQ(list(p.isolated), "2-23,26-47");
  EXPECT_EQ(list(p.housekeeping), "0-1,24-25");
  EXPECT_EQ(variable(p, "isolated_cores"), "2-23,26-47");
  EXPECT_THAT(not_read(p, "kernel_release"), HasSubstr("no uname output"));

  MachineOptions o;
  o.cmdline_file = data("cm4-k8s5glab-pao-r630-48cpu/node/proc/cmdline");
  const MachineFacts n =
      read_machine(data("cm4-k8s5glab-pao-r630-48cpu/performance_profile.yaml"), o);
  EXPECT_EQ(n.kernel_release->value, "4.18.0-240.10.1.el8_3.x86_64");
  EXPECT_EQ(n.kernel_release->from.front().text(), "cmdline:1 (BOOT_IMAGE's image name)");
  EXPECT_EQ(list(n.isolated), "2-23,26-47");
  EXPECT_EQ(list(n.nohz_full), "");  // no nohz_full= on the node
  EXPECT_EQ(list(n.rcu_nocbs), "2-23,26-47");
  EXPECT_EQ(list(n.housekeeping), "0-1,24-25");
  EXPECT_TRUE(has_note(n, "the profile renders 'nohz_full=2-23,26-47', the node's line has none"));
  EXPECT_TRUE(has_note(n, "tuned.non_isolcpus=03000003: housekeeping CPUs 0-1,24-25"));
  EXPECT_FALSE(has_note(n, "unknown parameter"));
}

// CM5: CentOS 7 RT, 2 CPUs, CPU 0 isolated, tuned `realtime`, LANG= on the line.
TEST(MachineCases, Cm5RealtimeTunedWithCpu0Isolated) {
  const MachineFacts m = read_machine(data("cm5-ess-mcu010-atom-isolcpus0/machine"));
  EXPECT_EQ(m.kind, "machine dump");
  EXPECT_EQ(m.kernel_release->value, "3.10.0-1062.9.1.rt56.1033.el7.x86_64");
  EXPECT_EQ(list(m.cpus), "0-1");
  EXPECT_EQ(list(m.isolated), "0");
  EXPECT_THAT(sources(m.isolated->from),
              HasSubstr("etc/tuned/realtime-variables.conf:1 (isolated_cores)"));
  EXPECT_EQ(list(m.nohz_full), "");
  EXPECT_EQ(list(m.housekeeping), "1");
  ASSERT_TRUE(m.tuned);
  EXPECT_EQ(m.tuned->value.profile, "realtime");
  EXPECT_EQ(variable(m, "isolated_cores"), "0");
  EXPECT_TRUE(has_note(m, "boot CPU 0 is in isolcpus"));
  EXPECT_THAT(not_read(m, "online"), HasSubstr("no sys/devices/system/cpu/online"));
}

// CM6: the line alone of a 96-CPU server, ranges out of order.
TEST(MachineCases, Cm6LineAloneWithRangesOutOfOrder) {
  const MachineFacts m = read_machine(data("cm6-gh-cmtcat130-ubuntu1804-96cpu/proc_cmdline"));
  EXPECT_EQ(m.kind, "command line");
  EXPECT_EQ(m.kernel_release->value, "4.15.0-20-generic");
  EXPECT_EQ(list(m.isolated), "2-23,26-47,50-71,74-95");
  EXPECT_EQ(m.isolated->value.count(), 88u);
  EXPECT_EQ(list(m.nohz_full), "2-23,26-47,50-71,74-95");
  EXPECT_EQ(list(m.rcu_nocbs), "2-23,26-47,50-71,74-95");
  EXPECT_EQ(list(m.housekeeping), "0-1,24-25,48-49,72-73");
  EXPECT_THAT(sources(m.housekeeping->from), HasSubstr("the CPUs the line implies"));
  EXPECT_FALSE(m.cpus);
  EXPECT_THAT(not_read(m, "cpus"), HasSubstr("the command line says at least 96"));
  EXPECT_THAT(not_read(m, "sockets"), HasSubstr("no lscpu"));
}

}  // namespace
}  // namespace isolab
