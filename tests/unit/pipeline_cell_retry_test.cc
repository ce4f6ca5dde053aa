// A cell's boots with their retries (pipeline/cell.h run_cell_retrying) on a scripted VM
// backend (vm/fake_backend.h): the real image preparation, evidence collection and
// classification, with the guest's console and result channel written by the fake from real
// guest output (tests/data/console, tests/data/guest, tests/data/cyclictest).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/files.h"
#include "pipeline/cell.h"
#include "pipeline/run_plan.h"
#include "spec/spec.h"
#include "vm/fake_backend.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {
namespace {

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/" + name);
}

// The isolation of the real boot in tests/data/guest (8 vCPUs, 5-7 isolated and nohz_full).
constexpr const char* kCmdline =
    "isolcpus=managed_irq,domain,5-7 nohz_full=5-7 rcu_nocbs=5-7 irqaffinity=0-4 skew_tick=1 "
    "nosoftlockup tsc=nowatchdog";

Spec test_spec() {
  return parse_spec(json{{"name", "retry"},
                         {"variants", {{{"name", "vanilla"}}}},
                         {"guest", {{"cmdline", kCmdline}, {"vcpus", 8}}},
                         {"workloads", {{{"name", "lat"}, {"tool", "cyclictest"}}}}},
                    ISOLAB_SOURCE_DIR);
}

// What the guest of tests/data/guest sent before its workloads (its facts), then, for a
// finished plan, the cyclictest step of tests/data/cyclictest and DONE.
std::vector<FakeChannelRecord> guest_facts() {
  return {{"uname_r", 0, "6.1.192-test\n"},
          {"cmdline", 0, "console=ttyS0 panic=-1 " + std::string(kCmdline) + "\n"},
          {"cpu_online", 0, "0-7\n"},
          {"cpu_possible", 0, "0-7\n"},
          {"isolated", 0, "5-7\n"},
          {"nohz_full", 0, "5-7\n"},
          {"default_smp_affinity", 0, data("guest/default_smp_affinity.txt")},
          {"workqueue_cpumask", 0, data("guest/workqueue-cpumask.txt")},
          {"irq_affinity", 0, data("guest/irq-affinity.txt")},
          {"interrupts_before", 0, data("guest/interrupts-isolation-6.1-before.txt")},
          {"interrupts_after", 0, data("guest/interrupts-isolation-6.1-after.txt")},
          {"busy_window_s", 0, "3\n"},
          {"dmesg", 0, data("guest/dmesg-isolation-6.1.txt")},
          {"precheck", 0, "1\n"}};
}

VmOutcome ended(VmOutcome::End end, const std::string& detail) {
  VmOutcome o;
  o.end = end;
  o.qemu_exit_code = end == VmOutcome::End::powered_off ? 0 : -1;
  o.detail = detail;
  return o;
}

// The kinds of boot the tables below script.
enum class Boot { ok, qemu_failed, stale_int3, host_starved, panic, boot_timeout, workload_failed };

FakeBoot scripted(Boot b) {
  FakeBoot f;
  f.console = data("guest/console-isolation-6.1.log");
  f.records = guest_facts();
  f.outcome = ended(VmOutcome::End::powered_off, "the guest powered off");
  switch (b) {
    case Boot::ok:
      f.records.push_back({"lat.stdout", 0, data("cyclictest/guest-6.1-tcg.q.txt")});
      f.records.push_back({"lat.stderr", 0, ""});
      f.records.push_back({"lat.json", 0, data("cyclictest/guest-6.1-tcg.json")});
      f.done = true;
      break;
    case Boot::qemu_failed:
      f = FakeBoot{};
      f.outcome = ended(VmOutcome::End::qemu_failed, "QEMU exited with status 1");
      break;
    case Boot::stale_int3:
      f.console = data("console/int3-stale-text-poke-tcg-6.1.log");
      break;
    case Boot::host_starved:
      f.console = data("console/rcu-stall-gp-kthread-starved-tcg-6.1.log");
      f.outcome = ended(VmOutcome::End::wall_timeout, "still running; stopped");
      break;
    case Boot::panic:
      f.console = data("console/panic-sysrq-6.1.txt");
      break;
    case Boot::boot_timeout:
      f = FakeBoot{};
      f.outcome = ended(VmOutcome::End::boot_timeout, "no console output within 60 s; stopped");
      break;
    case Boot::workload_failed:
      f.records.push_back({"lat.stdout", 1, ""});
      f.records.push_back({"lat.stderr", 1, "cyclictest: unknown option\n"});
      f.done = true;
      break;
  }
  return f;
}

class CellRetry : public ::testing::Test {
 protected:
  CellRetry()
      : spec_(test_spec()),
        guest_(derive_guest(spec_)),
        dir_(fs::temp_directory_path() / ("isolab-cell-retry-" + std::to_string(::getpid()))) {
    opt_.trace = false;
    opt_.progress = [this](const std::string& line) { progress_.push_back(line); };
    accel_.accel = Accel::tcg;
    accel_.cpu_model = "max";
    fs::create_directories(dir_);
    write_file_atomic(dir_ / "base.cpio", "base image");
    slot_.backend = &backend_;
  }
  ~CellRetry() override { fs::remove_all(dir_); }

  json run(const std::vector<Boot>& boots) {
    for (Boot b : boots) backend_.queued.push_back(scripted(b));
    const CellContext cx{spec_, opt_, accel_, guest_, dir_ / "base.cpio", dir_ / "run"};
    results::RecordedKernel kernel;
    kernel.bzimage = (dir_ / "bzImage").string();
    kernel.kernel_release = "6.1.192-test";
    const CellPlan cell{"vanilla-r0", "vanilla", 0, false};
    return run_cell_retrying(cx, cell, slot_, spec_.variants[0], kernel, [this] { ++after_boot_; });
  }

  Spec spec_;
  GuestDerivation guest_;
  RunOptions opt_;
  AccelChoice accel_;
  fs::path dir_;
  FakeVmBackend backend_;
  Slot slot_;
  std::vector<std::string> progress_;
  int after_boot_ = 0;
};

struct RetryCase {
  const char* what;
  std::vector<Boot> boots;                   // what each boot does, in order
  std::size_t booted;                        // how many boots the cell took
  const char* status;                        // the recorded cell's
  json failure_class;                        // the recorded cell's (null for ok and invalid)
  std::vector<std::string> earlier_classes;  // "earlier_attempts" failure classes, in order
};

const RetryCase kRetryCases[] = {
    {"success", {Boot::ok}, 1, "ok", nullptr, {}},
    {"QEMU failed, then success",
     {Boot::qemu_failed, Boot::ok},
     2,
     "ok",
     nullptr,
     {"infrastructure"}},
    {"TCG stale int3, then success",
     {Boot::stale_int3, Boot::ok},
     2,
     "ok",
     nullptr,
     {"infrastructure"}},
    {"host starved the guest, then a panic",
     {Boot::host_starved, Boot::panic},
     2,
     "failed",
     "panic",
     {"infrastructure"}},
    {"three infrastructure failures: the limit",
     {Boot::qemu_failed, Boot::stale_int3, Boot::host_starved},
     3,
     "failed",
     "infrastructure",
     {"infrastructure", "infrastructure"}},
    {"a kernel panic is not retried", {Boot::panic, Boot::ok}, 1, "failed", "panic", {}},
    {"a boot timeout is not retried", {Boot::boot_timeout, Boot::ok}, 1, "failed", "boot", {}},
    {"a workload failure is not retried",
     {Boot::workload_failed, Boot::ok},
     1,
     "failed",
     "workload",
     {}},
};

TEST_F(CellRetry, RetriedClassesBootAgainUpToTheLimitOthersNot) {
  for (const RetryCase& row : kRetryCases) {
    SCOPED_TRACE(row.what);
    backend_.calls.clear();
    backend_.queued.clear();
    progress_.clear();
    after_boot_ = 0;
    const json cj = run(row.boots);
    EXPECT_EQ(backend_.calls.size(), row.booted);
    EXPECT_EQ(after_boot_, static_cast<int>(row.booted));
    EXPECT_EQ(cj["status"], row.status) << cj.value("reason", "");
    EXPECT_EQ(cj["failure_class"], row.failure_class) << cj.value("reason", "");
    EXPECT_EQ(cj["attempt"], row.booted);
    if (row.earlier_classes.empty()) {
      EXPECT_FALSE(cj.contains("earlier_attempts"));
      continue;
    }
    ASSERT_EQ(cj["earlier_attempts"].size(), row.earlier_classes.size());
    for (std::size_t i = 0; i < row.earlier_classes.size(); ++i) {
      const json& e = cj["earlier_attempts"][i];
      EXPECT_EQ(e["attempt"], i + 1);
      EXPECT_EQ(e["failure_class"], row.earlier_classes[i]);
      EXPECT_FALSE(e.value("reason", "").empty());
    }
  }
}

// Each boot is a boot of its own: a fresh VM name and nonce, the cell's files in its directory,
// and a progress line per retry (none after the last allowed boot).
TEST_F(CellRetry, EveryAttemptIsAFreshBootAndSaysWhyItRetries) {
  const json cj = run({Boot::qemu_failed, Boot::stale_int3, Boot::host_starved});
  ASSERT_EQ(backend_.calls.size(), 3u);
  EXPECT_NE(backend_.calls[0].name, backend_.calls[1].name);
  EXPECT_NE(backend_.calls[1].name, backend_.calls[2].name);
  for (const VmConfig& vm : backend_.calls) {
    EXPECT_EQ(vm.console_log, dir_ / "run/cells/vanilla-r0/console.log");
    EXPECT_EQ(vm.accel, Accel::tcg);
    EXPECT_FALSE(fs::exists(vm.initrd));  // removed after the boot
  }
  const json& e = cj["earlier_attempts"];
  EXPECT_EQ(e[0]["reason"], "QEMU: QEMU exited with status 1");
  EXPECT_NE(e[1]["reason"].get<std::string>().find("int3 trap where memory holds 0xe8"),
            std::string::npos);
  EXPECT_NE(cj["reason"].get<std::string>().find("grace-period kthread runnable but starved"),
            std::string::npos);
  int retrying = 0;
  for (const auto& line : progress_)
    if (line.find("infrastructure failure, retrying") != std::string::npos) ++retrying;
  EXPECT_EQ(retrying, 2);
}

// The fake frames the records with the boot's nonce, so the real collection stage reads them:
// a successful cell has the guest's facts, the passing gate and the workload's metrics.
TEST_F(CellRetry, ASuccessfulBootIsMeasured) {
  const json cj = run({Boot::ok});
  EXPECT_EQ(cj["status"], "ok") << cj.dump(1);
  EXPECT_EQ(cj["gate_pass"], true);
  EXPECT_EQ(cj["kernel_release_match"], true);
  EXPECT_FALSE(cj["metrics"].empty());
  EXPECT_FALSE(cj.contains("channel_problems"));
  EXPECT_EQ(cj["console_findings"]["fatal"], nullptr);
}

}  // namespace
}  // namespace isolab
