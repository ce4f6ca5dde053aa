#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "base/error.h"
#include "base/files.h"
#include "vm/qemu.h"
#include "vm/watch.h"

namespace isolab {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

VmConfig tcg_config() {
  VmConfig c;
  c.name = "isolab-cell-a-0";
  c.kernel = "/cache/k/bzImage";
  c.initrd = "/run/x/initramfs.cpio";
  c.cmdline = "  isolcpus=nohz,domain,managed_irq,3 nohz_full=3  ";
  c.vcpus = 4;
  c.memory_mib = 1024;
  c.accel = Accel::tcg;
  c.console_log = "/run/x/console.log";
  c.result_channel = "/run/x/result.bin";
  return c;
}

TEST(QemuArgv, TcgConfigExactArgv) {
  std::vector<std::string> want = {
      "qemu-system-x86_64",
      "-name",
      "isolab-cell-a-0",
      "-machine",
      "q35,acpi=on",
      "-accel",
      "tcg,thread=multi",
      "-cpu",
      "max",
      "-smp",
      "4",
      "-m",
      "1024",
      "-nodefaults",
      "-no-user-config",
      "-display",
      "none",
      "-monitor",
      "none",
      "-chardev",
      "file,id=con,path=/run/x/console.log",
      "-serial",
      "chardev:con",
      "-chardev",
      "file,id=res,path=/run/x/result.bin",
      "-serial",
      "chardev:res",
      "-kernel",
      "/cache/k/bzImage",
      "-initrd",
      "/run/x/initramfs.cpio",
      "-append",
      "isolcpus=nohz,domain,managed_irq,3 nohz_full=3 console=ttyS0 panic=-1",
      "-no-reboot"};
  EXPECT_THAT(qemu_argv(tcg_config()), ElementsAreArray(want));
}

TEST(QemuArgv, KvmConfigUsesHostCpuAndNoInitrdWhenEmpty) {
  VmConfig c = tcg_config();
  c.accel = Accel::kvm;
  c.vcpus = 8;
  c.memory_mib = 2048;
  c.initrd.clear();
  c.cmdline = "";
  std::vector<std::string> want = {"qemu-system-x86_64",
                                   "-name",
                                   "isolab-cell-a-0",
                                   "-machine",
                                   "q35,acpi=on",
                                   "-accel",
                                   "kvm",
                                   "-cpu",
                                   "host",
                                   "-smp",
                                   "8",
                                   "-m",
                                   "2048",
                                   "-nodefaults",
                                   "-no-user-config",
                                   "-display",
                                   "none",
                                   "-monitor",
                                   "none",
                                   "-chardev",
                                   "file,id=con,path=/run/x/console.log",
                                   "-serial",
                                   "chardev:con",
                                   "-chardev",
                                   "file,id=res,path=/run/x/result.bin",
                                   "-serial",
                                   "chardev:res",
                                   "-kernel",
                                   "/cache/k/bzImage",
                                   "-append",
                                   "console=ttyS0 panic=-1",
                                   "-no-reboot"};
  EXPECT_THAT(qemu_argv(c), ElementsAreArray(want));
}

TEST(QemuArgv, ExplicitCpuModelAfterMsrRetry) {
  VmConfig c = tcg_config();
  c.accel = Accel::kvm;
  c.cpu_model = "host,-arch-capabilities";
  auto a = qemu_argv(c);
  auto it = std::find(a.begin(), a.end(), "-cpu");
  ASSERT_NE(it, a.end());
  EXPECT_EQ(*(it + 1), "host,-arch-capabilities");
}

TEST(QemuArgv, CommasInChardevPathsAreDoubled) {
  VmConfig c = tcg_config();
  c.console_log = "/tmp/a,b/console.log";
  c.result_channel = "/tmp/x,,y/r";
  auto a = qemu_argv(c);
  EXPECT_NE(std::find(a.begin(), a.end(), "file,id=con,path=/tmp/a,,b/console.log"), a.end());
  EXPECT_NE(std::find(a.begin(), a.end(), "file,id=res,path=/tmp/x,,,,y/r"), a.end());
  // -kernel takes the path as a whole argument: no escaping there.
  c.kernel = "/k,1/bzImage";
  a = qemu_argv(c);
  EXPECT_NE(std::find(a.begin(), a.end(), "/k,1/bzImage"), a.end());
}

TEST(QemuArgv, InvalidConfigsNameTheField) {
  VmConfig c = tcg_config();
  c.vcpus = 0;
  EXPECT_THAT([&] { qemu_argv(c); },
              ::testing::ThrowsMessage<Error>(HasSubstr("vcpus: 0 is outside 1..255")));
  c = tcg_config();
  c.memory_mib = 32;
  EXPECT_THAT([&] { qemu_argv(c); }, ::testing::ThrowsMessage<Error>(HasSubstr("memory_mib")));
  c = tcg_config();
  c.name = "a b";
  EXPECT_THAT([&] { qemu_argv(c); },
              ::testing::ThrowsMessage<Error>(HasSubstr("name: character ' '")));
  c = tcg_config();
  c.result_channel.clear();
  EXPECT_THAT([&] { qemu_argv(c); }, ::testing::ThrowsMessage<Error>(HasSubstr("result_channel")));
}

TEST(QemuQuirks, X86MsrRetryOrder) {
  const auto& q = x86_64_quirks();
  EXPECT_EQ(q.kvm_cpu_fallbacks,
            (std::vector<std::string>{"host", "host,-arch-capabilities", "qemu64"}));
  EXPECT_EQ(q.machine, "q35,acpi=on");
  EXPECT_EQ(q.console_tty, "ttyS0");
  EXPECT_EQ(q.result_tty, "ttyS1");
}

TEST(QemuMsrError, DetectsCaseO1Stderr) {
  std::string err = read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/vm/msr_error_stderr.txt");
  EXPECT_TRUE(is_host_cpu_msr_error(err));
  EXPECT_FALSE(is_host_cpu_msr_error(
      "qemu-system-x86_64: could not open kernel file '/nope': No such file or directory"));
}

TEST(FullCmdline, AppendsConsoleAndPanicOnce) {
  VmConfig c = tcg_config();
  c.cmdline = "\tnohz_full=1\n";
  EXPECT_EQ(full_kernel_cmdline(c), "nohz_full=1 console=ttyS0 panic=-1");
  EXPECT_EQ(effective_cpu_model(c), "max");
}

TEST(ConsoleWatch, TimeoutPrecedence) {
  VmConfig c = tcg_config();
  c.wall_timeout = std::chrono::seconds(100);
  c.boot_timeout = std::chrono::seconds(10);
  c.silence_timeout = std::chrono::seconds(20);
  ConsoleProgress p;
  observe_console(p, 0, 5);
  EXPECT_FALSE(expired_timeout(c, p, 9.9));
  EXPECT_EQ(expired_timeout(c, p, 10.0), VmOutcome::boot_timeout);
  observe_console(p, 120, 3.5);  // first output at 3.5 s
  EXPECT_EQ(p.first_output, 3.5);
  EXPECT_FALSE(expired_timeout(c, p, 23.4));
  EXPECT_EQ(expired_timeout(c, p, 23.5), VmOutcome::silence_timeout);
  observe_console(p, 120, 23.0);  // no growth: last_growth stays
  EXPECT_EQ(p.last_growth, 3.5);
  observe_console(p, 500, 90);
  EXPECT_FALSE(expired_timeout(c, p, 99));
  EXPECT_EQ(expired_timeout(c, p, 100), VmOutcome::wall_timeout);
  c.wall_timeout = std::chrono::seconds(0);
  c.silence_timeout = std::chrono::seconds(0);
  EXPECT_FALSE(expired_timeout(c, p, 100000));
  EXPECT_THAT(describe_timeout(VmOutcome::silence_timeout, tcg_config(), p),
              HasSubstr("last output at 90.0 s, 500 bytes"));
}

TEST(AccelNames, RoundTrip) {
  EXPECT_EQ(parse_accel_mode("auto"), AccelMode::auto_);
  EXPECT_EQ(to_string(AccelMode::kvm), "kvm");
  EXPECT_EQ(to_string(Accel::tcg), "tcg");
  EXPECT_THAT([] { parse_accel_mode("hvf"); }, ::testing::ThrowsMessage<Error>(HasSubstr("'hvf'")));
  EXPECT_EQ(to_string(VmOutcome::host_cpu_msr_error), "host_cpu_msr_error");
}

TEST(QemuArgv, NumaNodesUseMemoryBackendsAndOneSocketPerVcpu) {
  VmConfig c = tcg_config();
  c.memory_mib = 1024;
  c.numa_nodes = {{{0, 1, 3}, 768}, {{2}, 256}};
  auto a = qemu_argv(c);
  auto at = [&](const std::string& opt) { return std::find(a.begin(), a.end(), opt) - a.begin(); };
  ASSERT_LT(at("-smp") + 1, static_cast<long>(a.size()));
  EXPECT_EQ(a[at("-smp") + 1], "4,sockets=4,cores=1,threads=1");
  EXPECT_EQ(a[at("-m") + 1], "1024");
  std::vector<std::string> numa(a.begin() + at("-object"), a.begin() + at("-initrd"));
  EXPECT_THAT(numa, ElementsAreArray(std::vector<std::string>{
                        "-object", "memory-backend-ram,id=numa-mem0,size=768M", "-numa",
                        "node,nodeid=0,memdev=numa-mem0", "-object",
                        "memory-backend-ram,id=numa-mem1,size=256M", "-numa",
                        "node,nodeid=1,memdev=numa-mem1", "-numa", "cpu,node-id=0,socket-id=0",
                        "-numa", "cpu,node-id=0,socket-id=1", "-numa", "cpu,node-id=0,socket-id=3",
                        "-numa", "cpu,node-id=1,socket-id=2"}));
}

TEST(QemuArgv, BadNumaLayoutsAreRejected) {
  VmConfig c = tcg_config();
  c.numa_nodes = {{{0, 1}, 512}, {{2, 3}, 256}};  // 768 MiB against memory_mib 1024
  EXPECT_THAT([&] { qemu_argv(c); }, ThrowsMessage<Error>(HasSubstr("the nodes hold 768 MiB")));
  c.numa_nodes = {{{0, 1}, 512}, {{1, 2, 3}, 512}};
  EXPECT_THAT([&] { qemu_argv(c); }, ThrowsMessage<Error>(HasSubstr("vCPU 1 is on two nodes")));
  c.numa_nodes = {{{0, 1}, 512}, {{2}, 512}};
  EXPECT_THAT([&] { qemu_argv(c); }, ThrowsMessage<Error>(HasSubstr("vCPU 3 is on no node")));
  c.numa_nodes = {{{0, 1, 2, 3, 4}, 1024}};
  EXPECT_THAT([&] { qemu_argv(c); }, ThrowsMessage<Error>(HasSubstr("vCPU 4 does not exist")));
}

TEST(QemuArgv, CpuListText) {
  EXPECT_EQ(vm_cpu_list({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(vm_cpu_list({3}), "3");
  EXPECT_EQ(vm_cpu_list({}), "");
}

}  // namespace
}  // namespace isolab
