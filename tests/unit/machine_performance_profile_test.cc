// machine/performance_profile.h and kube_yaml.h: PerformanceProfiles rendered by the Node
// Tuning Operator's rules (docs/sources.md [cm1], [cm4]); YAML that does not read is refused
// naming the file and line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "machine/performance_profile.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string text(const std::string& rel) {
  return read_file(std::filesystem::path(ISOLAB_TEST_DATA_DIR) / "machine" / rel);
}

PerformanceProfile profile_of(const std::string& yaml, const std::string& file = "p.yaml") {
  const auto objects = load_kube_objects(yaml, file);
  if (objects.size() != 1) throw Error("expected one object");
  return read_performance_profile(objects.front());
}

std::string error_of(const std::string& yaml) {
  try {
    profile_of(yaml);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MachinePerformanceProfile, Cm4RendersTheIsolationItsNodeShows) {
  const PerformanceProfile p =
      profile_of(text("cm4-k8s5glab-pao-r630-48cpu/performance_profile.yaml"), "pp.yaml");
  EXPECT_EQ(p.name, "pao-worker-cnf");
  EXPECT_EQ(p.isolated_line, 13u);
  const RenderedProfile r = render(p);
  EXPECT_EQ(r.cmdline(),
            "nohz=on rcu_nocbs=2-23,26-47 tuned.non_isolcpus=03000003 "
            "systemd.cpu_affinity=0,1,24,25 intel_iommu=on iommu=pt "
            "isolcpus=managed_irq,2-23,26-47 nohz_full=2-23,26-47 tsc=reliable nosoftlockup "
            "nmi_watchdog=0 mce=off skew_tick=1 rcutree.kthread_prio=11 nmi_watchdog=0 audit=0 "
            "mce=off processor.max_cstate=1 idle=poll intel_idle.max_cstate=0 "
            "module_blacklist=ixgbevf,iavf default_hugepagesz=1G hugepagesz=1G hugepages=48");
  EXPECT_EQ(r.tuned_profile, "openshift-node-performance-pao-worker-cnf");
  EXPECT_EQ(r.not_isolated.to_list(), "0-1,24-25");
  EXPECT_EQ(r.cpus.to_list(), "0-47");
}

// CM1: offlined CPUs 2-3 are not online, so the mask names CPU 0 alone; the 1G pages on node 0
// stay off the line, the 2M pages without a node go on it.
TEST(MachinePerformanceProfile, Cm1OfflinedCpusAndHugepages) {
  const PerformanceProfile p =
      profile_of(text("cm1-ocp-mg-e2e-gcp4/cluster-scoped-resources/performance.openshift.io/"
                      "performanceprofiles/performance.yaml"));
  const RenderedProfile r = render(p);
  EXPECT_EQ(r.online.to_list(), "0-1");
  EXPECT_THAT(r.cmdline(), HasSubstr("tuned.non_isolcpus=00000001 systemd.cpu_affinity=0 "));
  EXPECT_THAT(r.cmdline(), HasSubstr(" default_hugepagesz=1G hugepagesz=2M hugepages=128"));
  EXPECT_EQ(r.sysctls.back(), (std::pair<std::string, std::string>{"kernel.timer_migration", "1"}));
}

TEST(MachinePerformanceProfile, WorkloadHintsAndStaticIsolation) {
  const std::string yaml =
      "apiVersion: performance.openshift.io/v2\nkind: PerformanceProfile\n"
      "metadata:\n  name: p\nspec:\n  cpu:\n    reserved: 0-1\n    isolated: 2-7\n"
      "    balanceIsolated: false\n  workloadHints:\n    realTime: false\n"
      "    highPowerConsumption: true\n";
  const RenderedProfile r = render(profile_of(yaml));
  EXPECT_THAT(r.cmdline(), HasSubstr("isolcpus=domain,managed_irq,2-7"));
  EXPECT_THAT(r.cmdline(), HasSubstr("processor.max_cstate=1 intel_idle.max_cstate=0"));
  EXPECT_THAT(r.cmdline(), Not(HasSubstr("nohz_full")));
  EXPECT_THAT(r.cmdline(), Not(HasSubstr("idle=poll")));
  EXPECT_EQ(r.sysctls.size(), 1u);
}

TEST(MachinePerformanceProfile, TunedMaskIsWholeWordsMostSignificantFirst) {
  EXPECT_EQ(tuned_cpumask_hex(CpuSet::of(64, {0, 1, 48, 49})), "00030000,00000003");
  EXPECT_EQ(tuned_cpumask_hex(CpuSet::of(24, {0, 1, 2, 3, 20, 21, 22, 23})), "00f0000f");
  EXPECT_EQ(tuned_cpumask_hex(CpuSet(8)), "00000000");
}

TEST(MachinePerformanceProfile, BadProfilesNameTheFileLineAndField) {
  const std::string head =
      "apiVersion: performance.openshift.io/v2\nkind: PerformanceProfile\nmetadata:\n  name: p\n";
  EXPECT_THAT(error_of(head + "spec:\n  cpu:\n    reserved: 0-1\n"),
              HasSubstr("p.yaml:7: spec.cpu.isolated: missing"));
  EXPECT_THAT(error_of(head + "spec:\n  cpu:\n    reserved: 0-1\n    isolated: 2-x\n"),
              HasSubstr("p.yaml:8: spec.cpu.isolated: not a CPU list"));
  EXPECT_THAT(error_of(head + "spec:\n  cpu:\n    reserved: 0-2\n    isolated: 2-7\n"),
              HasSubstr("CPUs 2 are also reserved"));
  EXPECT_THAT(
      error_of(head + "spec:\n  cpu:\n    reserved: 0\n    isolated: 1\n"
                      "  workloadHints:\n    realTime: yes please\n"),
      HasSubstr("p.yaml:10: spec.workloadHints.realTime: 'yes please' is not true or false"));
  // YAML that does not parse: yaml-cpp's message with the line and column.
  EXPECT_THAT(error_of(head + "spec:\n  cpu: [0, 1\n"), HasSubstr("p.yaml:7:"));
  EXPECT_THAT(error_of(head + "spec:\n  cpu: [0, 1\n"), HasSubstr("YAML: "));
  // A document without kind is no Kubernetes object.
  EXPECT_THAT(error_of("spec:\n  cpu:\n    isolated: 1\n"),
              HasSubstr("p.yaml:1: a YAML document that is not a Kubernetes object"));
}

TEST(MachinePerformanceProfile, ListsStandForTheirItems) {
  const auto objects = load_kube_objects(
      "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n"
      "    name: a\n- kind: Node\n  metadata:\n    name: b\n",
      "list.yaml");
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_EQ(objects[1].name(), "b");
  EXPECT_EQ(objects[1].line_of("/metadata/name"), 10u);
}

}  // namespace
}  // namespace isolab
