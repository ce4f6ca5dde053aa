#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "base/error.h"
#include "base/files.h"
#include "sys/fake_runner.h"
#include "vm/accel.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string data(const std::string& rel) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/" + rel);
}

std::string arg_after(const std::vector<std::string>& argv, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == flag) return argv[i + 1];
  return {};
}

class AccelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("isolab-vm-accel-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    fake_kvm_ = dir_ / "kvm";
    std::ofstream(fake_kvm_) << "";
    opts_.dev_kvm = fake_kvm_;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Plays QEMU: for each -cpu model, writes the debug console and QEMU's log as given.
  void script(std::map<std::string, std::pair<std::string, ProcessResult>> by_cpu,
              std::string qemu_log_text = {}) {
    runner_.responder = [by_cpu, qemu_log_text](const ProcessSpec& s) {
      std::string cpu = arg_after(s.argv, "-cpu");
      std::string chardev = arg_after(s.argv, "-chardev");
      fs::path dbg = chardev.substr(chardev.find("path=") + 5);
      auto it = by_cpu.find(cpu);
      std::ofstream(dbg) << (it == by_cpu.end() ? "" : it->second.first);
      ProcessResult r = it == by_cpu.end() ? ProcessResult{} : it->second.second;
      std::ofstream(s.stdout_path) << (r.exit_code == 99 ? "" : qemu_log_text);
      return r;
    };
  }

  fs::path dir_, fake_kvm_;
  KvmProbeOptions opts_;
  FakeRunner runner_;
};

ProcessResult exited(int code) {
  ProcessResult r;
  r.exit_code = code;
  return r;
}
ProcessResult aborted() {
  ProcessResult r;
  r.term_signal = 6;
  return r;
}

TEST(KvmProbeLog, RealTcgRunFinished) {
  KvmProbeMarkers m = parse_kvm_probe_log(data("vm/kvm_probe_debugcon_tcg.log"));
  EXPECT_TRUE(m.banner);
  EXPECT_TRUE(m.long_mode);
  EXPECT_EQ(m.mib_touched, 32);
  EXPECT_EQ(m.compute_blocks, 8);
  EXPECT_TRUE(m.done);
}

TEST(KvmProbeLog, RealKvmRunOnThisHostStalledInComputeLoop) {
  // Captured on the development machine (docs/sources.md [o2]): SeaBIOS ran, the image reached long
  // mode and touched its memory, then ran no compute block in ~4.7 s.
  std::string log = data("vm/kvm_probe_debugcon_kvm.log");
  ASSERT_THAT(log, HasSubstr("Running on KVM"));
  KvmProbeMarkers m = parse_kvm_probe_log(log);
  EXPECT_TRUE(m.long_mode);
  EXPECT_EQ(m.mib_touched, 32);
  EXPECT_EQ(m.compute_blocks, 0);
  EXPECT_FALSE(m.done);
}

TEST(KvmProbeLog, FirmwareTextBeforeBannerIsIgnored) {
  KvmProbeMarkers m = parse_kvm_probe_log("SeaBIOS... E.+L\nNo bootable device.");
  EXPECT_FALSE(m.banner);
  EXPECT_EQ(m.mib_touched, 0);
  EXPECT_FALSE(m.done);
}

TEST(KvmProbeImage, IsTheAssembledMultibootImage) {
  std::string_view img = kvm_probe_image();
  ASSERT_EQ(img.size(), 305u);
  EXPECT_EQ(sha256_hex(img), "16b1026e110b7c32b1c38a6b8ec519ce487934e47c1ab52d86ea46c2a03d8570");
  // Multiboot v1 magic 0x1BADB002, little endian, at offset 0.
  EXPECT_EQ(img.substr(0, 4), std::string_view("\x02\xb0\xad\x1b", 4));
}

TEST(KvmProbeArgv, Shape) {
  auto a = kvm_probe_argv(Accel::kvm, "host", "/w/kvm-probe.img", "/w/d,1.log");
  std::vector<std::string> want = {"qemu-system-x86_64",
                                   "-machine",
                                   "q35,acpi=on",
                                   "-accel",
                                   "kvm",
                                   "-cpu",
                                   "host",
                                   "-m",
                                   "128",
                                   "-nodefaults",
                                   "-no-user-config",
                                   "-display",
                                   "none",
                                   "-monitor",
                                   "none",
                                   "-chardev",
                                   "file,id=dbg,path=/w/d,,1.log",
                                   "-device",
                                   "isa-debugcon,iobase=0x402,chardev=dbg",
                                   "-device",
                                   "isa-debug-exit,iobase=0xf4,iosize=0x04",
                                   "-kernel",
                                   "/w/kvm-probe.img",
                                   "-no-reboot"};
  EXPECT_EQ(a, want);
  EXPECT_EQ(arg_after(kvm_probe_argv(Accel::tcg, "max", "i", "d"), "-accel"), "tcg,thread=multi");
}

TEST_F(AccelTest, MissingDevKvmFallsBackWithoutStartingQemu) {
  opts_.dev_kvm = dir_ / "no-such-kvm";
  KvmProbeResult r = probe_kvm(runner_, dir_ / "work", opts_);
  EXPECT_FALSE(r.works);
  EXPECT_THAT(r.reason, HasSubstr("no-such-kvm does not exist"));
  EXPECT_TRUE(runner_.calls.empty());
}

TEST_F(AccelTest, MsrAbortRetriesWithoutArchCapabilities) {
  const std::string ok_log = "SeaBIOS\n\nISOLAB-KVM-PROBE L" + std::string(32, '.') + "++++++++E";
  script({{"host", {"", aborted()}},
          {"host,-arch-capabilities", {ok_log, exited(kKvmProbeSuccessExit)}}},
         data("vm/msr_error_stderr.txt"));
  KvmProbeResult r = probe_kvm(runner_, dir_ / "work", opts_);
  ASSERT_EQ(runner_.calls.size(), 2u);
  EXPECT_EQ(arg_after(runner_.calls[0].argv, "-cpu"), "host");
  EXPECT_EQ(arg_after(runner_.calls[1].argv, "-cpu"), "host,-arch-capabilities");
  EXPECT_TRUE(r.works);
  EXPECT_EQ(r.cpu_model, "host,-arch-capabilities");
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_THAT(r.attempts[0], HasSubstr("MSR"));
  // The probe image was written for QEMU to load.
  EXPECT_EQ(read_file(dir_ / "work" / "kvm-probe.img"), std::string(kvm_probe_image()));
}

TEST_F(AccelTest, MsrAbortOnEveryModelFails) {
  script({}, data("vm/msr_error_stderr.txt"));
  runner_.responder = [inner = runner_.responder](const ProcessSpec& s) {
    inner(s);
    return aborted();
  };
  KvmProbeResult r = probe_kvm(runner_, dir_ / "work", opts_);
  EXPECT_EQ(runner_.calls.size(), 3u);
  EXPECT_EQ(arg_after(runner_.calls[2].argv, "-cpu"), "qemu64");
  EXPECT_FALSE(r.works);
  EXPECT_THAT(r.reason, HasSubstr("every -cpu model"));
}

// Case O8: the entry failure's line is quoted in the attempt and the next model is tried; with
// every model failing, the reason (which a run falling back to TCG records) quotes it too.
TEST_F(AccelTest, KvmEntryFailureOnEveryModelIsQuotedAndFallsBack) {
  script({}, data("vm/kvm_entry_failed_stderr.txt"));
  runner_.responder = [inner = runner_.responder](const ProcessSpec& s) {
    inner(s);
    return exited(1);
  };
  KvmProbeResult r = probe_kvm(runner_, dir_ / "work", opts_);
  EXPECT_EQ(runner_.calls.size(), 3u);
  EXPECT_FALSE(r.works);
  ASSERT_EQ(r.attempts.size(), 3u);
  EXPECT_THAT(r.attempts[0], HasSubstr("host: QEMU exited 1, the accelerator could not run the "
                                       "guest: KVM: entry failed, hardware error 0x80000021"));
  EXPECT_THAT(r.reason, HasSubstr("KVM: entry failed, hardware error 0x80000021"));
  AccelChooser chooser(opts_);
  runner_.calls.clear();
  AccelChoice a = chooser.choose(AccelMode::auto_, runner_, dir_ / "work2");
  EXPECT_EQ(a.accel, Accel::tcg);
  EXPECT_THAT(a.reason, HasSubstr("falling back to TCG"));
  EXPECT_THAT(a.reason, HasSubstr("KVM: entry failed, hardware error 0x80000021"));
}

TEST_F(AccelTest, QemuExitBeforeFinishingIsNotWorking) {
  script({{"host", {"x\n\nISOLAB-KVM-PROBE L....", exited(1)}}},
         "qemu-system-x86_64: something else went wrong\n");
  KvmProbeResult r = probe_kvm(runner_, dir_ / "work", opts_);
  EXPECT_EQ(runner_.calls.size(), 1u);
  EXPECT_FALSE(r.works);
  EXPECT_THAT(r.reason, HasSubstr("exited 1"));
  EXPECT_THAT(r.reason, HasSubstr("touched 4 of 32 MiB"));
  EXPECT_THAT(r.reason, HasSubstr("something else went wrong"));
}

TEST_F(AccelTest, ChooserCachesAndKvmModeThrowsWithReason) {
  script({{"host", {"", exited(1)}}}, "boom\n");
  AccelChooser chooser(opts_);
  AccelChoice a = chooser.choose(AccelMode::auto_, runner_, dir_ / "work");
  EXPECT_EQ(a.accel, Accel::tcg);
  EXPECT_EQ(a.cpu_model, kTcgCpuModel);
  EXPECT_THAT(a.reason, HasSubstr("falling back to TCG: KVM probe failed"));
  EXPECT_THAT([&] { chooser.choose(AccelMode::kvm, runner_, dir_ / "work"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("accelerator kvm requested, but")));
  EXPECT_EQ(runner_.calls.size(), 1u);  // probed once
  AccelChoice t = chooser.choose(AccelMode::tcg, runner_, dir_ / "work");
  EXPECT_EQ(t.accel, Accel::tcg);
  EXPECT_EQ(t.probe_seconds, 0);
}

TEST_F(AccelTest, ChooserPicksKvmWhenProbePasses) {
  script({{"host",
           {"\nISOLAB-KVM-PROBE L" + std::string(32, '.') + "++++++++E",
            exited(kKvmProbeSuccessExit)}}});
  AccelChooser chooser(opts_);
  AccelChoice a = chooser.choose(AccelMode::kvm, runner_, dir_ / "work");
  EXPECT_EQ(a.accel, Accel::kvm);
  EXPECT_EQ(a.cpu_model, "host");
  EXPECT_THAT(a.reason, HasSubstr("passed with -cpu host"));
}

TEST(QemuVersion, ParsesRealOutput) {
  EXPECT_EQ(parse_qemu_version(data("vm/qemu_version.txt")),
            "7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)");
  EXPECT_EQ(parse_qemu_version("QEMU emulator version 8.2.0\r\n"), "8.2.0");
  EXPECT_THAT([] { parse_qemu_version("qemu: \x01 junk\nversion 1"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("no 'version' on the first line")));
}

}  // namespace
}  // namespace isolab
