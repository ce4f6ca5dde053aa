// The cell classifier's rows (pipeline/cell_classify.h), one table row per class of outcome,
// with the real guest consoles of tests/data/console/ and tests/data/guest/.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/files.h"
#include "parse/console.h"
#include "pipeline/cell.h"
#include "pipeline/cell_classify.h"

using nlohmann::json;

namespace isolab {
namespace {

std::string console_file(const std::string& name) {
  return name.empty() ? "" : read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/" + name);
}

// The real consoles.
constexpr const char* kPanic = "console/panic-sysrq-6.1.txt";  // sysrq crash after init
constexpr const char* kStarved = "console/rcu-stall-gp-kthread-starved-tcg-6.1.log";
constexpr const char* kInt3 = "console/int3-stale-text-poke-tcg-6.1.log";
constexpr const char* kClean = "guest/console-isolation-6.1.log";  // a boot that went well
// Constructed from the kernel's format strings (tests/data/console): a WARNING comes first;
// an RCU stall without the starved-kthread line comes first.
constexpr const char* kWarning = "console/constructed-warning-oops-panic-6.1.txt";
constexpr const char* kStall = "console/constructed-stalls-lockups-6.1.txt";

struct BootRowCase {
  const char* what;
  const char* console;  // under ISOLAB_TEST_DATA_DIR; "" = no output at all
  const char* accelerator;
  json overcommitted;  // true / false / null (remote slot)
  VmOutcome::End end;
  const char* detail;
  const char* qemu_stderr;
  bool reached_init;
  bool release_match;
  // Expected: the row ("" = no boot row decides), its class and a part of the reason.
  const char* rule;
  const char* failure_class;
  const char* reason_part;
};

using End = VmOutcome::End;

const BootRowCase kBootCases[] = {
    {"kernel panic after init", kPanic, "kvm", false, End::powered_off, "", "", true, true,
     "console_fatal", "panic",
     "Kernel panic at console line 205: Kernel panic - not syncing: "
     "sysrq triggered crash"},
    {"kernel panic before init", kPanic, "kvm", false, End::powered_off, "", "", false, true,
     "no_init", "boot", "the guest never reached our init (Kernel panic at console line 205"},
    {"RCU stall, gp kthread starved, TCG", kStarved, "tcg", false, End::wall_timeout, "", "", true,
     true, "host_starved_guest", "infrastructure",
     "with the grace-period kthread runnable but starved ([   53.048803] rcu: rcu_preempt kthread "
     "starved for 5254 jiffies!"},
    {"RCU stall, gp kthread starved, KVM overcommitted", kStarved, "kvm", true, End::wall_timeout,
     "", "", true, true, "host_starved_guest", "infrastructure", "(kvm, overcommitted)"},
    {"RCU stall, gp kthread starved, dedicated KVM CPUs", kStarved, "kvm", false, End::wall_timeout,
     "", "", true, true, "console_fatal", "rcu_stall", "RCU stall at console"},
    {"RCU stall, gp kthread starved, KVM remote slot", kStarved, "kvm", nullptr, End::wall_timeout,
     "", "", true, true, "console_fatal", "rcu_stall", "RCU stall at console"},
    {"RCU stall without starvation, TCG", kStall, "tcg", true, End::powered_off, "", "", true, true,
     "console_fatal", "rcu_stall", "RCU stall at console line"},
    {"TCG stale int3", kInt3, "tcg", false, End::powered_off, "", "", true, true, "stale_int3",
     "infrastructure", "int3 trap where memory holds 0xe8, not an int3 (0xcc)"},
    // "int3: 0000 [#1]" is no console finding (parse/console.h): the panic that follows decides.
    {"the same int3 trap under KVM", kInt3, "kvm", false, End::powered_off, "", "", true, true,
     "console_fatal", "panic",
     "Kernel panic at console line 272: Kernel panic - not syncing: Fatal exception in interrupt"},
    {"kernel warning", kWarning, "tcg", false, End::powered_off, "", "", true, true,
     "console_fatal", "warning", "WARNING at console line"},
    {"boot timeout, no output", "", "tcg", false, End::boot_timeout,
     "no console output within 60 s; stopped", "", false, true, "no_init", "boot",
     "the guest never reached our init (boot_timeout: no console output within 60 s; stopped)"},
    {"QEMU refused the topology", "", "tcg", false, End::qemu_failed, "QEMU exited 1",
     "qemu-system-x86_64: CPU topology parameters must be greater than zero", false, true,
     "qemu_topology", "configuration", "QEMU refused the CPU topology: QEMU exited 1"},
    // Case Q2: libvirt could not pin the vCPU threads (a host CPU outside machine.slice's
    // cpuset): host configuration, named so.
    {"libvirt cpuset write refused", "", "kvm", false, End::qemu_failed,
     "libvirt virDomainCreateXML: Unable to write",
     "error: Unable to write to '/sys/fs/cgroup/cpuset/machine.slice/machine-qemu\\x2d1\\x2dvm"
     ".scope/libvirt/vcpu0/cpuset.cpus': Permission denied",
     false, true, "host_cpu_placement", "configuration",
     "the host could not place the guest on the CPUs asked for (a host CPU offline or outside "
     "the parent cgroup's cpuset; host configuration, not the guest): error: Unable to write to "
     "'/sys/fs/cgroup/cpuset/machine.slice/machine-qemu"},
    {"libvirt affinity refused", "", "kvm", false, End::qemu_failed,
     "libvirt virDomainCreateXML: cannot set CPU affinity",
     "Error starting domain: cannot set CPU affinity on process 4242: Invalid argument", false,
     true, "host_cpu_placement", "configuration",
     "guest): Error starting domain: cannot set CPU affinity on process 4242: Invalid argument"},
    {"QEMU failed", "", "tcg", false, End::qemu_failed, "QEMU exited 1", "", false, true,
     "qemu_failed", "infrastructure", "QEMU: QEMU exited 1"},
    {"host CPU MSR error", "", "kvm", false, End::accelerator_failed,
     "QEMU killed by signal 6: the accelerator could not run the guest: qemu-system-x86_64: "
     "error: failed to set MSR 0x10a to 0x69",
     "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69", false, true, "accelerator",
     "infrastructure",
     "the host's accelerator (kvm), not the kernel: QEMU killed by signal 6: "
     "the accelerator could not run the guest: qemu-system-x86_64: error: failed to set MSR"},
    // Case O8: KVM refused to enter the guest, QEMU paused it and was stopped; no console at all,
    // yet no boot failure of the kernel's.
    {"KVM entry failure", "", "kvm", false, End::accelerator_failed,
     "the accelerator could not run the guest: KVM: entry failed, hardware error 0x80000021 "
     "(QEMU stopped)",
     "KVM: entry failed, hardware error 0x80000021\n\nIf you're running a guest", false, true,
     "accelerator", "infrastructure",
     "the host's accelerator (kvm), not the kernel: the accelerator could not run the guest: "
     "KVM: entry failed, hardware error 0x80000021 (QEMU stopped)"},
    {"another kernel booted", kClean, "tcg", false, End::powered_off, "", "", true, false,
     "kernel_release", "infrastructure",
     "guest runs kernel '6.1.0-other', expected '6.1.192-test'"},
    {"a clean boot: the run rows decide", kClean, "tcg", false, End::powered_off, "", "", true,
     true, "", "", ""},
};

TEST(CellClassifyBoot, EveryRowOnARealConsole) {
  for (const BootRowCase& row : kBootCases) {
    SCOPED_TRACE(row.what);
    const std::string console = console_file(row.console);
    json c = {{"accelerator", row.accelerator}, {"overcommitted", row.overcommitted}};
    if (row.reached_init) {
      c["guest"] = {{"uname_r", row.release_match ? "6.1.192-test\n" : "6.1.0-other"}};
      c["kernel_release_match"] = row.release_match;
    }
    VmOutcome out;
    out.end = row.end;
    out.detail = row.detail;
    out.qemu_stderr_excerpt = row.qemu_stderr;
    const ConsoleReport cons = classify_console(console);
    const auto v =
        classify_boot(boot_facts(c, out, cons, console, row.reached_init, "6.1.192-test"));
    if (std::string(row.rule).empty()) {
      EXPECT_FALSE(v.has_value()) << v->rule << ": " << v->reason;
      continue;
    }
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->rule, row.rule);
    EXPECT_EQ(v->status, "failed");
    EXPECT_EQ(v->failure_class, row.failure_class);
    EXPECT_NE(v->reason.find(row.reason_part), std::string::npos) << v->reason;
  }
}

struct RunRowCase {
  const char* what;
  bool done;
  VmOutcome::End end;
  const char* workload_failure;
  const char* workload_invalid;
  bool gate_pass;
  bool precheck_skipped;
  const char* setup_mismatch;
  const char* rule;
  const char* status;
  const char* failure_class;
  const char* reason;
};

const RunRowCase kRunCases[] = {
    {"powered off before DONE, a workload failed", false, End::powered_off,
     "workload lat: killed by the step timeout", "", true, false, "", "powered_off_early", "failed",
     "workload",
     "the guest powered off before finishing the plan; workload lat: killed by the step timeout"},
    {"powered off before DONE", false, End::powered_off, "", "", true, false, "",
     "powered_off_early", "failed", "workload", "the guest powered off before finishing the plan"},
    {"silence timeout", false, End::silence_timeout, "", "", false, false, "", "timeout", "failed",
     "timeout", "silence_timeout: console silent"},
    {"wall timeout", false, End::wall_timeout, "", "", true, false, "", "timeout", "failed",
     "timeout", "wall_timeout: console silent"},
    {"isolation gate failed", true, End::powered_off, "workload lat: x", "", false, true, "x",
     "gate", "invalid", "", "isolation gate: FAIL nohz_full"},
    {"guest precheck skipped the workloads", true, End::powered_off, "", "", true, true, "",
     "precheck", "invalid", "",
     "the guest's precheck found a CPU count or sysfs isolation mismatch and skipped the "
     "workloads (see console.log, lines starting 'isolab: precheck')"},
    {"sysctl not applied", true, End::powered_off, "workload lat: x", "", true, false,
     "sysctl vm.numa_stat: wanted 0, read 1", "guest_setup", "invalid", "",
     "sysctl vm.numa_stat: wanted 0, read 1"},
    {"workload failed", true, End::powered_off, "workload lat: cyclictest exited 1",
     "workload s: sctp skipped", true, false, "", "workload_failed", "failed", "workload",
     "workload lat: cyclictest exited 1"},
    {"workload did not measure what was asked", true, End::powered_off, "",
     "workload s: sctp skipped", true, false, "", "workload_invalid", "invalid", "",
     "workload s: sctp skipped"},
    {"success", true, End::powered_off, "", "", true, false, "", "ok", "ok", "", ""},
};

TEST(CellClassifyRun, EveryRow) {
  for (const RunRowCase& row : kRunCases) {
    SCOPED_TRACE(row.what);
    RunFacts f;
    f.done = row.done;
    f.outcome.end = row.end;
    f.outcome.detail = "console silent";
    f.workload_failure = row.workload_failure;
    f.workload_invalid = row.workload_invalid;
    f.gate_pass = row.gate_pass;
    f.gate_reason = "FAIL nohz_full";
    f.precheck_skipped = row.precheck_skipped;
    int setup_calls = 0;
    f.guest_setup_mismatch = [&] {
      ++setup_calls;
      return std::string(row.setup_mismatch);
    };
    const CellVerdict v = classify_run(f);
    EXPECT_EQ(v.rule, row.rule);
    EXPECT_EQ(v.status, row.status);
    EXPECT_EQ(v.failure_class, row.failure_class);
    EXPECT_EQ(v.reason.rfind(row.reason, 0), 0u) << v.reason;
    // The setup check records into the cell: called once, and only when the rows before it
    // did not decide.
    const bool reached = row.done && row.gate_pass && !row.precheck_skipped;
    EXPECT_EQ(setup_calls, reached ? 1 : 0);
  }
}

TEST(CellClassify, VerdictsWriteTheFieldsTheyAlwaysWrote) {
  const json header = {{"failure_class", nullptr}, {"reason", ""}};
  EXPECT_EQ(apply_verdict(header, {"timeout", "failed", "timeout", "r"}),
            json({{"status", "failed"}, {"failure_class", "timeout"}, {"reason", "r"}}));
  EXPECT_EQ(apply_verdict(header, {"gate", "invalid", "", "r"}),
            json({{"status", "invalid"}, {"failure_class", nullptr}, {"reason", "r"}}));
  EXPECT_EQ(apply_verdict(header, {"ok", "ok", "", ""}),
            json({{"status", "ok"}, {"failure_class", nullptr}, {"reason", ""}}));
}

}  // namespace
}  // namespace isolab
