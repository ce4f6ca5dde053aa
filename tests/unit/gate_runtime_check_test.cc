// The gate's rows for the customer's runtime settings (gate/runtime_check.h): a guest that took
// them passes, one that did not (a value that did not stick, a sysctl its kernel lacks, a mask
// or an IRQ left on an isolated CPU, no report at all) fails.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "gate/gate.h"
#include "gate/runtime_check.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

ExpectedRuntime cm1_expected() {
  ExpectedRuntime e;
  e.sysctls = {{"vm.stat_interval", "10"}, {"kernel.nmi_watchdog", "0"}};
  e.housekeeping = parse_cpulist("0", 2);
  return e;
}

// What the guest of a 2-vCPU CM1 sends when everything took.
const std::string kGood =
    "sysctl\tvm.stat_interval\t0\t10\n"
    "sysctl\tkernel.nmi_watchdog\t1\t0\n"
    "workqueue_cpumask\t0\t1\n"
    "default_smp_affinity\t0\t1\n"
    "irq\t0\t5\t0-1\n"
    "irq\t4\t0\t0\n"
    "kthread\t2\t0\tkthreadd\t0\n"
    "kthread\t14\t22\tksoftirqd/1\t1\n";

std::vector<GateRow> rows_for(const ExpectedRuntime& e, const std::string* record) {
  std::vector<GateRow> rows;
  check_runtime(e, record, 2, rows);
  return rows;
}

const GateRow* row(const std::vector<GateRow>& rows, const std::string& check) {
  for (const GateRow& r : rows)
    if (r.check == check) return &r;
  return nullptr;
}

TEST(GateRuntime, AGuestThatTookEverySettingPasses) {
  const auto rows = rows_for(cm1_expected(), &kGood);
  ASSERT_EQ(rows.size(), 6u);
  for (const GateRow& r : rows) EXPECT_TRUE(r.pass) << r.check << ": " << r.detail;
  EXPECT_EQ(rows[0].check, "sysctl vm.stat_interval");
  EXPECT_EQ(rows[0].effective, "10");
  // Read-only but already the customer's value: passes, the status named.
  EXPECT_EQ(row(rows, "sysctl kernel.nmi_watchdog")->detail, "write exit status 1");
  EXPECT_EQ(row(rows, "runtime workqueue cpumask")->effective, "0");
  const GateRow* irq = row(rows, "runtime irq affinity");
  EXPECT_EQ(irq->effective, "1 moved, 1 refused");
  EXPECT_TRUE(irq->warning);
  EXPECT_THAT(irq->detail, HasSubstr("refused (per-CPU or managed): 0"));
  EXPECT_EQ(row(rows, "runtime kthreads")->effective, "1 moved, 1 refused");
}

TEST(GateRuntime, ASettingThatDidNotStickFails) {
  std::string rec = kGood;
  rec.replace(rec.find("stat_interval\t0\t10"), 18, "stat_interval\t0\t1");
  rec.replace(rec.find("workqueue_cpumask\t0\t1"), 21, "workqueue_cpumask\t0\t3");
  rec.replace(rec.find("irq\t4\t0\t0"), 9, "irq\t4\t0\t0-1");
  const auto rows = rows_for(cm1_expected(), &rec);
  EXPECT_FALSE(row(rows, "sysctl vm.stat_interval")->pass);
  EXPECT_EQ(row(rows, "sysctl vm.stat_interval")->detail, "read back '1'");
  EXPECT_FALSE(row(rows, "runtime workqueue cpumask")->pass);
  EXPECT_EQ(row(rows, "runtime workqueue cpumask")->effective, "0-1");
  EXPECT_FALSE(row(rows, "runtime irq affinity")->pass);
  EXPECT_THAT(row(rows, "runtime irq affinity")->detail, HasSubstr("4->0-1"));
  EXPECT_TRUE(row(rows, "runtime kthreads")->pass);
}

TEST(GateRuntime, AMissingSysctlOrNoReportFails) {
  const std::string rec = "sysctl\tvm.stat_interval\tmissing\t\n";
  ExpectedRuntime e;
  e.sysctls = {{"vm.stat_interval", "10"}, {"kernel.timer_migration", "0"}};
  auto rows = rows_for(e, &rec);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].pass);
  EXPECT_EQ(rows[0].effective, "(no such file)");
  EXPECT_EQ(rows[0].detail,
            "/proc/sys/vm/stat_interval does not exist in the guest kernel (a setup failure: an "
            "option of its .config provides it)");
  EXPECT_EQ(rows[1].effective, "(not reported)");
  EXPECT_EQ(missing_sysctls(parse_runtime_record(rec)),
            std::vector<std::string>{"vm.stat_interval"});
  rows = rows_for(e, nullptr);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].check, "runtime settings");
  EXPECT_FALSE(rows[0].pass);
  EXPECT_TRUE(rows_for(ExpectedRuntime{}, nullptr).empty());
}

TEST(GateRuntime, ABadRecordNamesItsLine) {
  EXPECT_THAT([] { parse_runtime_record("sysctl\tvm.x\t0\t1\nbogus\t1\t2\n"); },
              testing::ThrowsMessage<Error>(HasSubstr("runtime line 2: unknown kind: 'bogus")));
  EXPECT_THAT([] { parse_runtime_record("irq\t3\n"); },
              testing::ThrowsMessage<Error>(HasSubstr("runtime line 1: too few fields")));
}

TEST(GateRuntime, EvaluateGateFailsAGuestThatDidNotTakeTheSettings) {
  ExpectedIsolation iso;
  iso.vcpus = 2;
  iso.online = CpuSet::all(2);
  GuestFacts f;
  f.runtime_record = "sysctl\tvm.stat_interval\t0\t1\n";
  ExpectedRuntime e;
  e.sysctls = {{"vm.stat_interval", "10"}};
  const GateReport r = evaluate_gate(iso, f, e);
  EXPECT_FALSE(r.pass);
  EXPECT_THAT(r.reason, HasSubstr("sysctl vm.stat_interval: read back '1'"));
  f.runtime_record = "sysctl\tvm.stat_interval\t0\t10\n";
  const GateReport ok = evaluate_gate(iso, f, e);
  EXPECT_TRUE(row(ok.rows, "sysctl vm.stat_interval")->pass);
}

}  // namespace
}  // namespace isolab
