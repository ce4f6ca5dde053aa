// A spec that names the customer's machine (/customer, spec/customer.h): the guest it implies
// (the line, the vCPUs, the topology and NUMA nodes down to QEMU's argv), the runtime settings
// each cell gets, the fidelity table, and the errors that name the field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "pipeline/customer_guest.h"
#include "pipeline/fidelity.h"
#include "pipeline/run_plan.h"
#include "spec/spec.h"
#include "vm/qemu.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

fs::path machines() { return fs::path(ISOLAB_TEST_DATA_DIR) / "machine"; }

json spec_doc(const std::string& machine, json customer_extra = json::object()) {
  json customer = {{"machine", machine}};
  customer.update(customer_extra);
  return {{"name", "customer-test"},
          {"variants",
           {{{"name", "vanilla"}}, {{"name", "patched"}, {"sysctls", {{"vm.stat_interval", 1}}}}}},
          {"customer", customer},
          {"workloads",
           {{{"name", "spin"},
             {"tool", "vmstat-overhead"},
             {"mode", "spin"},
             {"cpus", "isolated"},
             {"duration_s", 2},
             {"event", "fault+cputimer"}}}}};
}

Spec cm1() { return parse_spec(spec_doc("cm1-ocp-mg-e2e-gcp4"), machines()); }

const FidelityRow* row(const std::vector<FidelityRow>& rows, const std::string& fact) {
  for (const FidelityRow& r : rows)
    if (r.fact == fact) return &r;
  return nullptr;
}

VmConfig vm_of(const Spec& s, const GuestDerivation& g) {
  VmConfig vm;
  vm.name = "isolab-t";
  vm.kernel = "/k/bzImage";
  vm.cmdline = g.cmdline;
  vm.vcpus = g.vcpus;
  vm.sockets = g.topology.sockets;
  vm.cores = g.topology.cores;
  vm.threads = g.topology.threads;
  vm.memory_mib = s.memory_mib;
  vm.numa_nodes = guest_numa_nodes(s);
  vm.console_log = "/r/console.log";
  vm.result_channel = "/r/results.bin";
  return vm;
}

std::string arg_after(const std::vector<std::string>& argv, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag) return argv[i + 1];
  return "";
}

TEST(CustomerSpec, Cm1GivesTheGuestItsLineCpusAndTopology) {
  const Spec s = cm1();
  ASSERT_TRUE(s.customer);
  EXPECT_EQ(s.customer->facts.kind, "must-gather");
  EXPECT_EQ(s.customer_kernel_version, "4.18.0-348.23.1.el8_5.x86_64");
  EXPECT_THAT(s.customer_cmdline, HasSubstr("isolcpus=managed_irq,1 nohz_full=1"));
  EXPECT_EQ(s.vcpus, 2);
  const GuestDerivation g = derive_guest(s);
  EXPECT_EQ(g.vcpus, 2);
  EXPECT_EQ(g.partition.isolated.to_list(), "1");
  EXPECT_THAT(g.cmdline, HasSubstr("nohz_full=1"));
  EXPECT_THAT(g.cmdline, testing::Not(HasSubstr("BOOT_IMAGE")));
  const auto argv = qemu_argv(vm_of(s, g));
  EXPECT_EQ(arg_after(argv, "-smp"), "2,sockets=1,cores=2,threads=1");
  EXPECT_EQ(arg_after(argv, "-numa"), "");
}

TEST(CustomerSpec, Cm2GivesQemuItsNumaNodesAndOneSocketPerVcpu) {
  const Spec s =
      parse_spec(spec_doc("cm2-ocp-mg-bm-worker2-smtoff", {{"max_vcpus", 32}}), machines());
  EXPECT_EQ(s.customer->shape.rule, "same");
  ASSERT_EQ(s.numa_nodes.size(), 2u);
  EXPECT_EQ(s.numa_nodes[0].cpus, "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30");
  EXPECT_EQ(s.numa_nodes[0].memory_mib + s.numa_nodes[1].memory_mib, 512);
  const GuestDerivation g = derive_guest(s);
  const auto argv = qemu_argv(vm_of(s, g));
  // Even CPUs on node 0 would split QEMU's sockets of 16 vCPUs in a row across the nodes.
  EXPECT_EQ(arg_after(argv, "-smp"), "32,sockets=32,cores=1,threads=1");
  EXPECT_THAT(argv, testing::Contains("node,nodeid=1,memdev=numa-mem1"));
  EXPECT_THAT(argv, testing::Contains("cpu,node-id=1,socket-id=1,core-id=0,thread-id=0"));
  // Scaled to the default cap: one CPU per class, a node each.
  const Spec small = parse_spec(spec_doc("cm2-ocp-mg-bm-worker2-smtoff"), machines());
  EXPECT_EQ(small.customer->shape.rule, "one CPU per class");
  EXPECT_EQ(small.vcpus, 2);
  const auto rows = fidelity_rows(small, derive_guest(small));
  EXPECT_EQ(
      row(rows, "CPUs")->label(),
      "scaled (one CPU per class: 32 online CPUs, more than 16: each class's lowest CPU, 0-1)");
}

TEST(CustomerSpec, AQemuTopologyMismatchIsTheMachinesConfigurationError) {
  Spec s = cm1();
  s.topology.cores = 3;
  EXPECT_THAT([&] { derive_guest(s); },
              testing::ThrowsMessage<SpecError>(HasSubstr(
                  "/customer/machine: Invalid CPU topology: product of the hierarchy must match "
                  "maxcpus: sockets (1) * cores (3) * threads (1) != maxcpus (2)")));
}

TEST(CustomerSpec, EachCellGetsTheRuntimeSettingsLessItsVariantsOwn) {
  const Spec s = cm1();
  const ExpectedRuntime a = expected_runtime(s, s.variants[0]);
  EXPECT_EQ(a.sysctls.size(), 6u);
  ASSERT_TRUE(a.housekeeping);
  EXPECT_EQ(a.housekeeping->to_list(), "0");
  const ExpectedRuntime b = expected_runtime(s, s.variants[1]);
  EXPECT_EQ(b.sysctls.size(), 5u);  // patched sets vm.stat_interval itself
  const GuestRuntime r = guest_runtime(a);
  EXPECT_EQ(r.housekeeping, "0");
  EXPECT_EQ(r.housekeeping_mask, "1");
  const std::string rec = "sysctl\tkernel.hung_task_timeout_secs\tmissing\t\n";
  EXPECT_THAT(runtime_setup_failure(&rec),
              HasSubstr("customer sysctl kernel.hung_task_timeout_secs: "
                        "/proc/sys/kernel/hung_task_timeout_secs does not exist in the guest "
                        "kernel"));
  EXPECT_EQ(runtime_setup_failure(nullptr), "");
}

TEST(CustomerSpec, Cm1FidelityTable) {
  const Spec s = cm1();
  const auto rows = fidelity_rows(s, derive_guest(s));
  EXPECT_EQ(row(rows, "kernel")->fidelity, "not reproduced");
  EXPECT_EQ(row(rows, "CPUs")->customer, "0-3 (4), online 0-1");
  EXPECT_EQ(row(rows, "CPUs")->guest, "0-1 (2)");
  EXPECT_EQ(row(rows, "CPUs")->label(), "scaled (online CPUs only: CPUs 2-3 offline: not booted)");
  EXPECT_EQ(row(rows, "topology (sockets x cores x threads)")->label(), "same");
  EXPECT_EQ(row(rows, "NUMA nodes")->label(), "same");
  EXPECT_EQ(row(rows, "kernel command line")->fidelity, "scaled");
  // 4.18 knew no managed_irq flag (cmdline/customer_kernel.h): the guest boots without it.
  EXPECT_THAT(row(rows, "kernel command line")->why,
              HasSubstr("what the customer's kernel ignored: isolcpus=managed_irq,1"));
  for (const char* f : {"isolated (any means)", "nohz_full", "rcu_nocbs", "housekeeping"})
    EXPECT_EQ(row(rows, f)->label(), "same") << f;
  EXPECT_EQ(row(rows, "isolated (any means)")->guest, "1");
  EXPECT_EQ(row(rows, "sysctl vm.stat_interval")->customer, "10");
  EXPECT_EQ(row(rows, "sysctl vm.stat_interval")->guest, "patched sets 1");
  EXPECT_EQ(row(rows, "sysctl kernel.timer_migration")->label(), "same");
  EXPECT_EQ(row(rows, "workqueue cpumask")->guest, "0");
  EXPECT_EQ(row(rows, "workqueue cpumask")->label(), "same");
  EXPECT_EQ(row(rows, "IRQs on isolated CPUs")->fidelity, "not reproduced");
  EXPECT_EQ(row(rows, "TuneD profile")->fidelity, "not reproduced");
  EXPECT_EQ(to_json(rows)[0]["fact"], "kernel");
  EXPECT_THAT(fidelity_text(rows), HasSubstr("sysctl kernel.timer_migration"));
  EXPECT_TRUE(fidelity_rows(parse_spec({{"name", "plain"},
                                        {"variants", {{{"name", "a"}}}},
                                        {"guest", {{"cmdline", "nohz_full=1"}, {"vcpus", 2}}},
                                        {"workloads", spec_doc("x")["workloads"]}},
                                       machines()),
                            GuestDerivation{})
                  .empty());
}

TEST(CustomerSpec, ErrorsNameTheField) {
  json d = spec_doc("cm1-ocp-mg-e2e-gcp4");
  d["guest"] = {{"vcpus", 4}};
  EXPECT_THAT(
      [&] { parse_spec(d, machines()); },
      testing::ThrowsMessage<SpecError>(HasSubstr("/guest/vcpus: set by the customer's machine")));
  EXPECT_THAT([&] { parse_spec(spec_doc("no-such-dump"), machines()); },
              testing::ThrowsMessage<SpecError>(HasSubstr("/customer/machine: file not found")));
  EXPECT_THAT(
      [&] {
        parse_spec(spec_doc("cm1-ocp-mg-e2e-gcp4", {{"nodes", "x"}}), machines());
      },
      testing::ThrowsMessage<SpecError>(HasSubstr("/customer/nodes")));
  EXPECT_THAT(
      [&] {
        parse_spec(spec_doc("cm1-ocp-mg-e2e-gcp4", {{"node", "nope"}}), machines());
      },
      testing::ThrowsMessage<SpecError>(HasSubstr("/customer/machine: ")));
}

}  // namespace
}  // namespace isolab
