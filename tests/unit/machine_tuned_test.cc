// machine/tuned.h, sysctls.h and irqs.h: TuneD's files, the isolation sysctls and the IRQ files
// as the dumps of tests/data/machine hold them; a line that does not read names file and line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "machine/irqs.h"
#include "machine/kube_yaml.h"
#include "machine/sysctls.h"
#include "machine/tuned.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

std::string text(const std::string& rel) {
  return read_file(std::filesystem::path(ISOLAB_TEST_DATA_DIR) / "machine" / rel);
}

TEST(MachineTuned, VariablesFileWithComments) {
  const auto vars = parse_tuned_variables(
      text("cm5-ess-mcu010-atom-isolcpus0/machine/etc/tuned/realtime-variables.conf"), "v.conf");
  ASSERT_EQ(vars.size(), 1u);
  EXPECT_EQ(vars[0].name, "isolated_cores");
  EXPECT_EQ(vars[0].value, "0");
  EXPECT_EQ(vars[0].line, 1u);
  EXPECT_THAT([] { parse_tuned_variables("isolated_cores=2-5\nno_balance_cores 6\n", "v.conf"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("v.conf:2: not a 'name=value' line")));
}

// The data of CM1's Tuned object: a tuned.conf inside a YAML string.
TEST(MachineTuned, ProfileOfATunedObject) {
  const auto objects = load_kube_objects(
      text("cm1-ocp-mg-e2e-gcp4/namespaces/openshift-cluster-node-tuning-operator/"
           "tuned.openshift.io/tuneds/openshift-node-performance-performance.yaml"),
      "t.yaml");
  ASSERT_EQ(objects.size(), 1u);
  const auto data = objects[0].text_at("/spec/profile/0/data");
  ASSERT_TRUE(data);
  EXPECT_EQ(objects[0].line_of("/spec/profile/0/data"), 36u);
  const auto conf = parse_tuned_conf(*data, "data");
  EXPECT_EQ(find_setting(conf, "main", "include")->value, "openshift-node,cpu-partitioning");
  EXPECT_EQ(find_setting(conf, "variables", "isolated_cores")->value, "1");
  EXPECT_EQ(find_setting(conf, "sysctl", "vm.stat_interval")->value, "10");
  EXPECT_EQ(find_setting(conf, "scheduler", "default_irq_smp_affinity")->value, "ignore");
  EXPECT_THAT(find_setting(conf, "bootloader", "cmdline_additionalArg")->value, "+");
}

TEST(MachineTuned, TunedCpuLists) {
  EXPECT_EQ(parse_tuned_cpulist("2,4-7", "x").to_list(), "2,4-7");
  EXPECT_EQ(parse_tuned_cpulist("1-10,^5", "x").to_list(), "1-4,6-10");
  EXPECT_EQ(parse_tuned_cpulist("0x0000000c", "x").to_list(), "2-3");
  EXPECT_THAT([] { parse_tuned_cpulist("2..5", "f.conf:3: isolated_cores"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("f.conf:3: isolated_cores: '2..5'")));
  EXPECT_THROW(parse_tuned_cpulist("${f:cpulist_invert:1}", "x"), Error);
  EXPECT_EQ(parse_active_profile("Current active profile: realtime\n"), "realtime");
}

TEST(MachineTuned, IsolationSysctlsOfSysctlA) {
  const auto rows =
      parse_sysctl_a(text("cm3-hotsos-ubuntu-openstack-2cpu/sos_commands/kernel/sysctl_-a"));
  std::vector<std::string> names;
  for (const SysctlLine& r : rows) names.push_back(r.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "kernel.hung_task_timeout_secs", "kernel.nmi_watchdog", "kernel.numa_balancing",
                "kernel.sched_rt_period_us", "kernel.sched_rt_runtime_us", "kernel.soft_watchdog",
                "kernel.timer_migration", "kernel.watchdog", "kernel.watchdog_cpumask",
                "kernel.watchdog_thresh", "vm.numa_stat", "vm.stat_interval"}));
  EXPECT_EQ(isolation_sysctl("kernel.watchdog_thresh")->name, "kernel.watchdog*");
  EXPECT_EQ(isolation_sysctl("kernel.numa_balancing_scan_delay_ms"), nullptr);
}

TEST(MachineTuned, IrqNamesAndAffinities) {
  const auto names =
      parse_interrupt_names(text("cm3-hotsos-ubuntu-openstack-2cpu/proc/interrupts"), "i");
  EXPECT_EQ(names.at(1), "i8042");
  EXPECT_EQ(names.at(10), "virtio10, ehci_hcd:usb1, uhci_hcd:usb2");
  EXPECT_EQ(names.at(26), "virtio0-output.0");
  EXPECT_EQ(names.count(0), 0u);
  const auto irqs = parse_irq_affinities_json(
      text(
          "cm1-ocp-mg-e2e-gcp4/nodes/ci-ln-t0prq3t-72292-h4x2n-worker-a-wqnqt/irq_affinities.json"),
      "a.json");
  ASSERT_EQ(irqs.size(), 20u);
  EXPECT_EQ(irqs[12].irq, 31u);
  EXPECT_EQ(irqs[12].name, "virtio1-input.0");
  EXPECT_EQ(irqs[12].affinity.to_list(), "1");
  EXPECT_THAT([] { parse_irq_affinities_json("[{\"irq\": 1, \"affinity\": [\"x\"]}]", "a.json"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("a.json: element 0: affinity holds")));
}

}  // namespace
}  // namespace isolab
