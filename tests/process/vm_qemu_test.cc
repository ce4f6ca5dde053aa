// Real QEMU starts that fail or time out quickly (no guest kernel needed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "base/files.h"
#include "vm/accel.h"
#include "vm/qemu.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Dir {
  fs::path p;
  explicit Dir(const std::string& tag)
      : p(fs::temp_directory_path() / ("isolab-vmq-" + tag + "-" + std::to_string(::getpid()))) {
    fs::remove_all(p);
    fs::create_directories(p);
  }
  ~Dir() { fs::remove_all(p); }
};

VmConfig base(const fs::path& d, const std::string& name) {
  VmConfig c;
  c.name = name;
  c.kernel = d / "bzImage";
  c.vcpus = 2;
  c.memory_mib = 128;
  c.accel = Accel::tcg;
  c.console_log = d / "console.log";
  c.result_channel = d / "result.bin";
  c.wall_timeout = std::chrono::seconds(30);
  c.boot_timeout = std::chrono::seconds(20);
  return c;
}

TEST(QemuBackendReal, MissingKernelIsQemuFailedWithStderr) {
  Dir d("nokernel");
  auto runner = make_real_runner();
  QemuBackend qb(*runner);
  VmConfig c = base(d.p, "isolab-test-nokernel-" + std::to_string(::getpid()));
  c.kernel = d.p / "does-not-exist" / "bzImage";
  VmOutcome o = qb.run(c);
  EXPECT_EQ(o.end, VmOutcome::qemu_failed) << o.detail;
  EXPECT_EQ(o.qemu_exit_code, 1);
  EXPECT_THAT(o.qemu_stderr_excerpt, HasSubstr("does-not-exist"));
  EXPECT_THAT(o.detail, HasSubstr("exited 1"));
  EXPECT_EQ(o.seconds_to_first_output, -1);
  EXPECT_LT(o.seconds, 10);
  // The console and result files exist (empty) for the caller.
  EXPECT_TRUE(fs::exists(c.console_log));
  EXPECT_TRUE(fs::exists(c.result_channel));
}

// The cell's qemu-command.sh, run by sh, starts the same QEMU: here it fails on the same missing
// kernel, naming it.
TEST(QemuBackendReal, TheWrittenCommandBootsTheSameGuestAgain) {
  Dir d("command");
  auto runner = make_real_runner();
  QemuBackend qb(*runner);
  VmConfig c = base(d.p, "isolab-test-command-" + std::to_string(::getpid()));
  c.kernel = d.p / "it's not here" / "bzImage";
  (void)qb.run(c);
  const std::string script = read_file(qemu_command_file(c));
  EXPECT_THAT(script, HasSubstr("exec qemu-system-x86_64 "));
  EXPECT_THAT(script, HasSubstr("-kernel '" + (d.p / "it'\\''s not here").string()));
  ProcessSpec again;
  again.argv = {"sh", qemu_command_file(c).string()};
  again.stderr_to_stdout = true;
  again.timeout = std::chrono::seconds(30);
  const ProcessResult r = runner->run(again);
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_THAT(r.out, HasSubstr("it's not here"));
}

// A "kernel" that QEMU loads but that never writes to ttyS0: the probe image. Its guest ends
// through isa-debug-exit only when that device exists, which qemu_argv does not add, so it
// halts silently: boot_timeout, and the QEMU group is gone afterwards.
TEST(QemuBackendReal, SilentGuestHitsBootTimeoutAndLeavesNoQemu) {
  Dir d("silent");
  auto runner = make_real_runner();
  write_file_atomic(d.p / "bzImage", kvm_probe_image());
  VmConfig c = base(d.p, "isolab-test-silent-" + std::to_string(::getpid()));
  c.boot_timeout = std::chrono::seconds(3);
  QemuBackend qb(*runner);
  VmOutcome o = qb.run(c);
  EXPECT_EQ(o.end, VmOutcome::boot_timeout) << o.detail << " " << o.qemu_stderr_excerpt;
  EXPECT_GE(o.seconds, 3.0);
  EXPECT_LT(o.seconds, 8.0);
  EXPECT_THAT(o.detail, HasSubstr("no console output within 3 s"));
  ProcessSpec pg;
  pg.argv = {"pgrep", "-f", c.name};
  ProcessResult r = runner->run(pg);
  EXPECT_EQ(r.exit_code, 1) << "QEMU left behind: " << r.out;
}

}  // namespace
}  // namespace isolab
