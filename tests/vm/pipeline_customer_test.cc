// vm tier (docs/spec.md, "The customer's machine"): one guest booted as the customer's machine of
// tests/data/machine/cm1-ocp-mg-e2e-gcp4 (2 online CPUs, CPU 1 isolated, the operator's TuneD
// profile with vm.stat_interval=10). The gate must pass with the runtime rows: every
// customer sysctl read back, the workqueue cpumask, the IRQ default affinity, the IRQs and the
// kernel threads on housekeeping CPU 0; result.json must carry the fidelity table. One boot of
// one short step: a kernel that lacks a customer sysctl (the cell invalid, naming its /proc/sys
// file) is covered without a guest by guest_runtime_script_test (the fragment run by a shell
// against a fake /proc), gate_runtime_check_test and pipeline_customer_test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "vm/isolab_run.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {
namespace {

using namespace vmtest;

const json* gate_row(const json& cell, const std::string& check) {
  for (const auto& r : cell["gate"]["rows"])
    if (r["check"] == check) return &r;
  return nullptr;
}

TEST(PipelineCustomer, Cm1GuestTakesTheMachinesSettingsAndPassesTheGate) {
  fs::path dir = temp_dir("customer");
  IsolabRun r = run_isolab(load_spec("customer-short.json"), dir);
  const std::string err = read_file(dir / "isolab.stderr", 20000);
  ASSERT_EQ(r.proc.exit_code, 0) << err;
  ASSERT_FALSE(r.result.is_null()) << err;
  EXPECT_EQ(r.result["status"], "complete") << err;
  ASSERT_EQ(r.result["cells"].size(), 1u);
  const json& c = r.result["cells"][0];
  EXPECT_EQ(c["status"], "ok") << c.value("reason", json()).dump();
  EXPECT_EQ(c["gate"]["pass"], true) << c["gate"].dump(1);
  EXPECT_EQ(c["guest"]["cpu_online"], "0-1\n");
  EXPECT_EQ(c["topology_requested"], json({{"sockets", 1}, {"cores", 2}, {"threads", 1}}));
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"vm.stat_interval", "10"},
                                                        {"kernel.timer_migration", "1"},
                                                        {"kernel.sched_rt_runtime_us", "-1"},
                                                        {"kernel.nmi_watchdog", "0"},
                                                        {"kernel.hung_task_timeout_secs", "600"},
                                                        {"kernel.numa_balancing", "0"}}) {
    const json* row = gate_row(c, "sysctl " + name);
    ASSERT_NE(row, nullptr) << name << " in " << c["gate"].dump(1);
    EXPECT_EQ((*row)["effective"], value) << name;
    EXPECT_EQ((*row)["pass"], true) << name;
  }
  for (const char* check : {"runtime workqueue cpumask", "runtime irq default affinity"}) {
    const json* row = gate_row(c, check);
    ASSERT_NE(row, nullptr) << check;
    EXPECT_EQ((*row)["effective"], "0") << check;
  }
  for (const char* check : {"runtime irq affinity", "runtime kthreads"}) {
    const json* row = gate_row(c, check);
    ASSERT_NE(row, nullptr) << check;
    EXPECT_EQ((*row)["pass"], true) << (*row).dump();
    EXPECT_THAT((*row)["effective"].get<std::string>(),
                testing::Not(testing::StartsWith("0 moved")))
        << check;
  }
  ASSERT_TRUE(r.result.contains("fidelity")) << err;
  std::map<std::string, json> fidelity;
  for (const auto& row : r.result["fidelity"]) fidelity[row["fact"]] = row;
  const std::string table = r.result["fidelity"].dump(1);
  ASSERT_TRUE(fidelity.count("CPUs")) << table;
  EXPECT_EQ(fidelity["CPUs"]["customer"], "0-3 (4), online 0-1");
  EXPECT_EQ(fidelity["CPUs"]["guest"], "0-1 (2)");
  EXPECT_EQ(fidelity["CPUs"]["fidelity"], "scaled");
  EXPECT_THAT(fidelity["CPUs"]["why"].get<std::string>(), testing::StartsWith("online CPUs only"));
  ASSERT_TRUE(fidelity.count("sysctl vm.stat_interval")) << table;
  EXPECT_EQ(fidelity["sysctl vm.stat_interval"]["guest"], "10");
  EXPECT_EQ(fidelity["sysctl vm.stat_interval"]["fidelity"], "same");
  ASSERT_TRUE(fidelity.count("kernel")) << table;
  EXPECT_EQ(fidelity["kernel"]["fidelity"], "not reproduced");
  ASSERT_TRUE(fidelity.count("kernel threads")) << table;
  EXPECT_EQ(fidelity["kernel threads"]["guest"], "0");
}

}  // namespace
}  // namespace isolab
