// Real QEMU on this machine: the KVM probe, the probe image under TCG, qemu --version.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "base/error.h"
#include "base/files.h"
#include "vm/accel.h"
#include "vm/libvirt.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

fs::path temp_dir(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("isolab-vm-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(KvmProbeReal, ProbeImageFinishesUnderTcg) {
  auto runner = make_real_runner();
  fs::path d = temp_dir("probe-tcg");
  KvmProbeOptions o;
  o.accel = Accel::tcg;
  KvmProbeResult r = probe_kvm(*runner, d, o);
  EXPECT_TRUE(r.works) << r.reason;
  EXPECT_EQ(r.cpu_model, kTcgCpuModel);
  EXPECT_LT(r.seconds, 10.0);
  KvmProbeMarkers m = parse_kvm_probe_log(read_file(d / "kvm-probe-0.debugcon"));
  EXPECT_TRUE(m.done);
  EXPECT_EQ(m.compute_blocks, 8);
  fs::remove_all(d);
}

// Case O8 with a stand-in for QEMU (this host cannot make KVM fail an entry on demand): QEMU
// prints the entry failure and keeps running with the VM paused. The probe stops each attempt as
// soon as the line appears, not after the 6 s start budget, tries every model and quotes it.
TEST(KvmProbeReal, EntryFailureStopsQemuAtOnceAndIsQuoted) {
  fs::path d = temp_dir("probe-entry");
  const fs::path bin = d / "bin";
  fs::create_directories(bin);
  write_file_atomic(bin / "qemu-system-x86_64",
                    "#!/bin/sh\nprintf 'KVM: entry failed, hardware error 0x80000021\\n\\n"
                    "EAX=00000000 EBX=00000000\\n'\nexec sleep 30\n");
  fs::permissions(bin / "qemu-system-x86_64", fs::perms::owner_all);
  write_file_atomic(d / "kvm", "");
  const std::string path = ::getenv("PATH");
  ::setenv("PATH", (bin.string() + ":" + path).c_str(), 1);
  auto runner = make_real_runner();
  KvmProbeOptions o;
  o.dev_kvm = d / "kvm";
  const KvmProbeResult r = probe_kvm(*runner, d / "probe", o);
  ::setenv("PATH", path.c_str(), 1);
  EXPECT_FALSE(r.works);
  ASSERT_EQ(r.attempts.size(), 3u) << r.reason;
  for (const std::string& a : r.attempts)
    EXPECT_THAT(a, HasSubstr("the accelerator could not run the guest: KVM: entry failed, "
                             "hardware error 0x80000021"));
  EXPECT_THAT(r.reason, HasSubstr("every -cpu model"));
  EXPECT_LT(r.seconds, 5.0);  // three attempts, each well inside one 6 s start budget
  fs::remove_all(d);
}

// Auto mode follows the probe's own answer, whatever this host's KVM does: KVM with the model
// that worked when the probe passes; TCG with the probe's reason when it fails (docs/sources.md
// [o2]: /dev/kvm opens but a KVM guest crawls), decided within seconds; TCG without starting QEMU
// when /dev/kvm is missing. An explicit kvm request then gives KVM or the error.
TEST(KvmProbeReal, AutoModeFollowsTheProbeWithinSeconds) {
  auto runner = make_real_runner();
  fs::path d = temp_dir("probe-kvm");
  const KvmProbeResult probe = probe_kvm(*runner, d / "probe");
  AccelChooser chooser;
  AccelChoice c = chooser.choose(AccelMode::auto_, *runner, d / "choose");
  std::cerr << "probe: works=" << probe.works << "; choice " << c.probe_seconds << " s; "
            << c.reason << "\n";
  EXPECT_LT(c.probe_seconds, 15.0);
  if (probe.works) {
    EXPECT_EQ(c.accel, Accel::kvm);
    EXPECT_EQ(c.cpu_model, probe.cpu_model);
    EXPECT_THAT(c.reason, HasSubstr("KVM probe passed with -cpu " + probe.cpu_model));
  } else {
    EXPECT_EQ(c.accel, Accel::tcg);
    EXPECT_EQ(c.cpu_model, kTcgCpuModel);
    EXPECT_THAT(c.reason, HasSubstr("falling back to TCG: "));
    if (fs::exists("/dev/kvm")) {
      EXPECT_THAT(c.reason, HasSubstr("falling back to TCG: KVM probe failed"));
      EXPECT_GT(c.probe_seconds, 0.5);
    } else {
      EXPECT_EQ(c.reason, "falling back to TCG: /dev/kvm does not exist");
      EXPECT_EQ(c.probe_seconds, 0);
    }
  }
  // Cached: the second choice does not probe again.
  auto t0 = std::chrono::steady_clock::now();
  AccelChoice again = chooser.choose(AccelMode::auto_, *runner, d / "choose");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.1);
  EXPECT_EQ(again.reason, c.reason);
  if (c.accel == Accel::kvm)
    EXPECT_EQ(chooser.choose(AccelMode::kvm, *runner, d / "choose").accel, Accel::kvm);
  else
    EXPECT_THROW(chooser.choose(AccelMode::kvm, *runner, d / "choose"), Error);
  fs::remove_all(d);
}

TEST(QemuVersionReal, Parses) {
  auto runner = make_real_runner();
  std::string v = qemu_version(*runner);
  EXPECT_THAT(v, ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+.*"));
}

TEST(DoctorReal, ReportsQemuAndLibvirt) {
  auto runner = make_real_runner();
  fs::path d = temp_dir("doctor");
  // isolab's private libvirt (the embedded QEMU driver) needs no daemon: it must be reachable.
  VmDoctorFacts f =
      vm_doctor_facts(*runner, d, /*run_kvm_probe=*/false, prepare_private_libvirt(d / "libvirt"));
  EXPECT_THAT(f.qemu_path, HasSubstr("qemu-system-x86_64"));
  EXPECT_FALSE(f.qemu_version.empty()) << f.qemu_error;
  EXPECT_FALSE(f.kvm_probe.has_value());
  EXPECT_TRUE(f.libvirt_reachable) << f.libvirt_detail;
  EXPECT_THAT(f.libvirt_detail,
              ::testing::ContainsRegex("^libvirt [0-9]+\\.[0-9]+\\.[0-9]+, hypervisor "));
  fs::remove_all(d);
}

// The embedded image is what tests/data/vm/kvm_probe.S assembles to.
TEST(KvmProbeImageReal, ReassemblesFromSource) {
  auto runner = make_real_runner();
  fs::path d = temp_dir("asm");
  std::string src = std::string(ISOLAB_TEST_DATA_DIR) + "/vm/kvm_probe.S";
  auto run = [&](std::vector<std::string> argv) {
    ProcessSpec s;
    s.argv = std::move(argv);
    s.cwd = d;
    s.timeout = std::chrono::seconds(60);
    return runner->run(s);
  };
  ProcessResult r = run({"gcc", "-m32", "-c", src, "-o", "p.o"});
  // build-essential's gcc and binutils assemble 32-bit code (scripts/setup.sh installs them).
  ASSERT_TRUE(r.ok()) << "no 32-bit assembler: " << r.describe() << " " << r.err;
  ASSERT_TRUE(run({"ld", "-m", "elf_i386", "-Ttext=0x100000", "-N", "-o", "p.elf", "p.o"}).ok());
  ASSERT_TRUE(run({"objcopy", "-O", "binary", "p.elf", "p.bin"}).ok());
  EXPECT_EQ(read_file(d / "p.bin"), std::string(kvm_probe_image()));
  fs::remove_all(d);
}

}  // namespace
}  // namespace isolab
