// Real boots under TCG, with a tiny busybox initramfs written here, of the vm tier's vanilla
// kernel (linux-source-6.1, tinyconfig + base.config + isolation.config, the kernel most vm
// tests boot) taken from the build cache as `isolab run` takes it, built there first if
// the cache ($ISOLAB_CACHE_DIR, default ~/.cache/isolab) does not hold it. The libvirt tests use
// isolab's private libvirt (the embedded QEMU driver) under a temporary directory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "base/files.h"
#include "kernel/kernel.h"
#include "vm/libvirt.h"
#include "vm/libvirt_internal.h"
#include "vm/qemu.h"
#include "vm/watch.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kSource = ISOLAB_SOURCE_DIR;

// The vm tier's vanilla kernel from the shared cache (built when missing). Throws
// isolab::Error from ensure_kernel when it cannot be built.
fs::path cached_test_kernel() {
  static fs::path image;
  if (!image.empty()) return image;
  auto runner = make_real_runner();
  KernelRequest req;  // default source: /usr/src/linux-source-6.1.tar.xz, tinyconfig
  req.fragments = {kSource / "kernel-configs/base.config",
                   kSource / "kernel-configs/isolation.config"};
  req.variant_name = "vanilla";
  KernelEnv env{default_cache_dir(), *runner, {}, 0, std::nullopt, {}};
  env.log_dir = fs::temp_directory_path() / ("isolab-vmboot-build-" + std::to_string(::getpid()));
  env.progress = [](const std::string& m) { std::fprintf(stderr, "kernel: %s\n", m.c_str()); };
  image = ensure_kernel(req, env).bzimage;
  return image;
}

// One private libvirt root for this process (libvirt embeds one driver root per process),
// removed when the tests are done.
const fs::path& private_libvirt_root() {
  static const fs::path root =
      fs::temp_directory_path() / ("isolab-vmboot-libvirt-" + std::to_string(::getpid()));
  return root;
}
const std::string& private_libvirt_uri() {
  static const std::string uri = prepare_private_libvirt(private_libvirt_root());
  return uri;
}
class RemovePrivateRoot : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(private_libvirt_root(), ec);
  }
};
const auto* const kRemoveRoot = ::testing::AddGlobalTestEnvironment(new RemovePrivateRoot);

// A minimal cpio "newc" writer (format: the kernel's Documentation/driver-api/early-userspace/
// buffer-format.rst): 110-byte ASCII-hex header, name, data, each padded to 4 bytes.
class Newc {
 public:
  void dir(const std::string& name) { add(name, 040755, "", 0, 0); }
  void file(const std::string& name, const std::string& data, unsigned mode = 0100755) {
    add(name, mode, data, 0, 0);
  }
  void chardev(const std::string& name, unsigned major, unsigned minor) {
    add(name, 020600, "", major, minor);
  }
  std::string finish() {
    add("TRAILER!!!", 0, "", 0, 0);
    return out_;
  }

 private:
  void add(const std::string& name, unsigned mode, const std::string& data, unsigned rmaj,
           unsigned rmin) {
    char h[111];
    std::snprintf(h, sizeof h, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", ino_++,
                  mode, 0u, 0u, 1u, 0u, static_cast<unsigned>(data.size()), 0u, 0u, rmaj, rmin,
                  static_cast<unsigned>(name.size() + 1), 0u);
    out_.append(h, 110);
    out_ += name;
    out_ += '\0';
    pad();
    out_ += data;
    pad();
  }
  void pad() {
    while (out_.size() % 4) out_ += '\0';
  }
  std::string out_;
  unsigned ino_ = 1;
};

// init: proc/sys, the CPU count on the console, one line on the result channel, power off.
const char kInit[] = R"SH(#!/bin/busybox sh
B=/bin/busybox
$B mount -t proc proc /proc
$B mount -t sysfs sys /sys
$B mount -t devtmpfs dev /dev 2>/dev/null
echo "ISOLAB-NPROC $($B nproc)"
$B stty -F /dev/ttyS1 raw -echo
echo "ISOLAB-RESULT nproc=$($B nproc) cmdline=$($B cat /proc/cmdline)" > /dev/ttyS1
$B poweroff -f
)SH";

const char kLoopingInit[] = R"SH(#!/bin/busybox sh
echo "ISOLAB-LOOPING"
while :; do :; done
)SH";

std::string initramfs(const std::string& init) {
  Newc c;
  for (const char* d : {"bin", "dev", "proc", "sys"}) c.dir(d);
  c.chardev("dev/console", 5, 1);
  c.chardev("dev/ttyS0", 4, 64);
  c.chardev("dev/ttyS1", 4, 65);
  c.chardev("dev/null", 1, 3);
  c.file("bin/busybox", read_file("/bin/busybox"));
  c.file("init", init);
  return c.finish();
}

bool qemu_alive(ProcessRunner& runner, const std::string& name) {
  ProcessSpec s;
  s.argv = {"pgrep", "-f", "qemu-system-x86_64.*" + name};
  return runner.run(s).exit_code == 0;
}

class VmBoot : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_THROW(kernel_ = cached_test_kernel());
    ASSERT_TRUE(fs::exists(kernel_)) << kernel_;
    ASSERT_TRUE(fs::exists("/bin/busybox")) << "busybox-static is not installed (scripts/setup.sh)";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    name_ = std::string("isolab-vmtest-") + info->name() + "-" + std::to_string(::getpid());
    dir_ = fs::temp_directory_path() / name_;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    runner_ = make_real_runner();
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  VmConfig config(const std::string& init, int vcpus) {
    write_file_atomic(dir_ / "initramfs.cpio", initramfs(init));
    VmConfig c;
    c.name = name_;
    c.kernel = kernel_;
    c.initrd = dir_ / "initramfs.cpio";
    c.cmdline = "nohz_full=1";
    c.vcpus = vcpus;
    c.memory_mib = 256;
    c.accel = Accel::tcg;
    c.console_log = dir_ / "console.log";
    c.result_channel = dir_ / "result.bin";
    c.wall_timeout = std::chrono::seconds(300);
    c.silence_timeout = std::chrono::seconds(60);
    c.boot_timeout = std::chrono::seconds(60);
    return c;
  }

  void expect_good_boot(const VmConfig& c, const VmOutcome& o, int vcpus) {
    std::fprintf(stderr, "%s: %s in %.1f s (first output %.1f s): %s\n", name_.c_str(),
                 std::string(to_string(o.end)).c_str(), o.seconds, o.seconds_to_first_output,
                 o.detail.c_str());
    EXPECT_EQ(o.end, VmOutcome::powered_off) << o.detail << "\n" << o.qemu_stderr_excerpt;
    EXPECT_GE(o.seconds_to_first_output, 0);
    std::string console = read_file(c.console_log);
    EXPECT_THAT(console, HasSubstr("Linux version "));
    EXPECT_THAT(console, HasSubstr("ISOLAB-NPROC " + std::to_string(vcpus) + "\r\n"));
    EXPECT_THAT(console, Not(HasSubstr("Kernel panic")));
    std::string result = read_file(c.result_channel);
    // Raw mode on ttyS1: no CR added, the line arrives as written.
    EXPECT_THAT(result, HasSubstr("ISOLAB-RESULT nproc=" + std::to_string(vcpus) + " cmdline="));
    EXPECT_THAT(result, Not(HasSubstr("\r")));
    EXPECT_THAT(result, HasSubstr("nohz_full=1 console=ttyS0 panic=-1"));
    EXPECT_FALSE(qemu_alive(*runner_, name_));
  }

  fs::path kernel_, dir_;
  std::string name_;
  std::unique_ptr<ProcessRunner> runner_;
};

TEST_F(VmBoot, QemuTcgFourCpusPowersOff) {
  VmConfig c = config(kInit, 4);
  QemuBackend qb(*runner_);
  expect_good_boot(c, qb.run(c), 4);
}

TEST_F(VmBoot, LibvirtTcgTwoCpusPowersOff) {
  LibvirtReach r = libvirt_reachability(private_libvirt_uri());
  ASSERT_TRUE(r.ok) << r.detail;
  VmConfig c = config(kInit, 2);
  LibvirtBackend lb(private_libvirt_uri());
  expect_good_boot(c, lb.run(c), 2);
  // What boots it again by hand: the domain, and libvirt's QEMU command line for it.
  EXPECT_THAT(read_file(dir_ / "domain.xml"), HasSubstr("<kernel>" + kernel_.string()));
  const std::string command = read_file(dir_ / "qemu-command.sh");
  EXPECT_THAT(command, HasSubstr("qemu-system-x86_64"));
  EXPECT_THAT(command, HasSubstr("-kernel " + kernel_.string()));
}

// docs/sources.md [o3]: a missing init with no root device panics; panic=-1 and -no-reboot end QEMU
// with status 0. The backend reports powered_off; the console shows the panic.
TEST_F(VmBoot, PanicEndsQemuWithStatusZero) {
  VmConfig c = config(kInit, 2);
  c.cmdline = "rdinit=/does-not-exist";
  QemuBackend qb(*runner_);
  VmOutcome o = qb.run(c);
  std::fprintf(stderr, "panic boot: %s in %.1f s\n", std::string(to_string(o.end)).c_str(),
               o.seconds);
  EXPECT_EQ(o.end, VmOutcome::powered_off) << o.detail;
  EXPECT_EQ(o.qemu_exit_code, 0);
  EXPECT_THAT(read_file(c.console_log), HasSubstr("Kernel panic - not syncing"));
  EXPECT_EQ(read_file(c.result_channel), "");
}

TEST_F(VmBoot, QemuLoopingInitHitsSilenceTimeoutAndLeavesNoQemu) {
  VmConfig c = config(kLoopingInit, 2);
  c.silence_timeout = std::chrono::seconds(8);
  QemuBackend qb(*runner_);
  VmOutcome o = qb.run(c);
  std::fprintf(stderr, "looping init: %s in %.1f s: %s\n", std::string(to_string(o.end)).c_str(),
               o.seconds, o.detail.c_str());
  EXPECT_EQ(o.end, VmOutcome::silence_timeout) << o.detail;
  EXPECT_THAT(read_file(c.console_log), HasSubstr("ISOLAB-LOOPING"));
  // The console's last growth is the init's line (a few seconds in); the stop follows it by
  // the 8 s silence bound plus poll and kill slack.
  EXPECT_GE(o.seconds, 8.0);
  EXPECT_LT(o.seconds, 40.0);
  EXPECT_FALSE(qemu_alive(*runner_, name_));
}

#ifdef ISOLAB_HAVE_LIBVIRT
// Case O8 under libvirt: on a KVM entry failure QEMU pauses the VM and the domain stays active.
// A domain started paused is in that state: it ends at the first poll, never at the wall
// timeout: with QEMU's entry-failure line in its log (injected: this host cannot make KVM fail an
// entry) as an accelerator failure quoting it, with its real log as a QEMU failure naming the
// pause.
TEST_F(VmBoot, LibvirtPausedDomainEndsAtOnce) {
  LibvirtReach r = libvirt_reachability(private_libvirt_uri());
  ASSERT_TRUE(r.ok) << r.detail;
  for (bool kvm_line : {true, false}) {
    SCOPED_TRACE(kvm_line);
    VmConfig c = config(kLoopingInit, 2);
    c.name += kvm_line ? "-kvm" : "-plain";
    c.wall_timeout = std::chrono::seconds(60);
    prepare_output_files(c);
    libvirt_detail::ConnHandle conn = libvirt_detail::open_connection(private_libvirt_uri());
    libvirt_detail::DomainWatch w;
    w.console_bytes = [&] { return file_size_or_zero(c.console_log); };
    w.log_tail = [&] {
      return kvm_line
                 ? std::string("KVM: entry failed, hardware error 0x80000021\n\nEAX=0\n")
                 : read_file(libvirt_domain_log_dir(private_libvirt_uri()) / (c.name + ".log"));
    };
    w.create_flags = VIR_DOMAIN_START_PAUSED;
    const VmOutcome o = libvirt_detail::run_domain(conn.get(), libvirt_domain_xml(c), c, w);
    EXPECT_LT(o.seconds, 10.0) << o.detail;
    if (kvm_line) {
      EXPECT_EQ(o.end, VmOutcome::accelerator_failed) << o.detail;
      EXPECT_THAT(o.detail, HasSubstr("the accelerator could not run the guest: KVM: entry failed, "
                                      "hardware error 0x80000021 (libvirt: domain paused"));
    } else {
      EXPECT_EQ(o.end, VmOutcome::qemu_failed) << o.detail;
      EXPECT_THAT(o.detail, HasSubstr("libvirt: domain paused (virDomainPausedReason "));
    }
    EXPECT_FALSE(qemu_alive(*runner_, c.name));
  }
}
#endif

TEST_F(VmBoot, LibvirtLoopingInitHitsWallTimeoutAndDomainIsGone) {
  LibvirtReach r = libvirt_reachability(private_libvirt_uri());
  ASSERT_TRUE(r.ok) << r.detail;
  VmConfig c = config(kLoopingInit, 2);
  c.silence_timeout = std::chrono::seconds(0);
  c.wall_timeout = std::chrono::seconds(25);
  LibvirtBackend lb(private_libvirt_uri());
  VmOutcome o = lb.run(c);
  std::fprintf(stderr, "libvirt looping init: %s in %.1f s\n",
               std::string(to_string(o.end)).c_str(), o.seconds);
  EXPECT_EQ(o.end, VmOutcome::wall_timeout) << o.detail;
  EXPECT_GE(o.seconds, 25);
  EXPECT_LT(o.seconds, 32);
  EXPECT_FALSE(qemu_alive(*runner_, name_));
}

}  // namespace
}  // namespace isolab
