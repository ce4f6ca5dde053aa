#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>

#include "base/error.h"
#include "base/files.h"
#include "vm/qemu.h"
#include "vm/qmp.h"
#include "vm/watch.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
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

// The whole argv of tcg_config().
std::vector<std::string> tcg_argv() {
  return {"qemu-system-x86_64",
          "-name",
          "isolab-cell-a-0",
          "-machine",
          "q35,acpi=on",
          "-accel",
          "tcg,thread=multi",
          "-cpu",
          "IvyBridge-v1,-x2apic,-tsc-deadline",
          "-smp",
          "4,sockets=1,cores=4,threads=1",
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
          "isolcpus=nohz,domain,managed_irq,3 nohz_full=3 console=ttyS0 panic=-1 no_timer_check",
          "-no-reboot"};
}

TEST(QemuArgv, TcgConfigExactArgv) {
  EXPECT_THAT(qemu_argv(tcg_config()), ElementsAreArray(tcg_argv()));
}

// The same argv as tcg_config()'s but for the values of -accel, -cpu, -smp, -m and -append,
// and without -initrd.
TEST(QemuArgv, KvmConfigUsesHostCpuAndNoInitrdWhenEmpty) {
  VmConfig c = tcg_config();
  c.accel = Accel::kvm;
  c.vcpus = 8;
  c.memory_mib = 2048;
  c.initrd.clear();
  c.cmdline = "";
  const std::map<std::string, std::string> values = {{"-accel", "kvm"},
                                                     {"-cpu", "host"},
                                                     {"-smp", "8,sockets=1,cores=8,threads=1"},
                                                     {"-m", "2048"},
                                                     {"-append", "console=ttyS0 panic=-1"}};
  std::vector<std::string> want = tcg_argv();
  for (std::size_t i = 0; i + 1 < want.size(); ++i)
    if (values.count(want[i])) want[i + 1] = values.at(want[i]);
  auto initrd = std::find(want.begin(), want.end(), "-initrd");
  want.erase(initrd, initrd + 2);
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
  // One field of tcg_config() made invalid, and a part of the error.
  const std::vector<std::pair<std::function<void(VmConfig&)>, std::string>> cases = {
      {[](VmConfig& c) { c.vcpus = 0; }, "vcpus: 0 is outside 1..255"},
      {[](VmConfig& c) { c.memory_mib = 32; }, "memory_mib"},
      {[](VmConfig& c) { c.name = "a b"; }, "name: character ' '"},
      {[](VmConfig& c) { c.result_channel.clear(); }, "result_channel"}};
  for (const auto& [spoil, error] : cases) {
    VmConfig c = tcg_config();
    spoil(c);
    EXPECT_THAT([&] { qemu_argv(c); }, ThrowsMessage<Error>(HasSubstr(error)));
  }
}

TEST(QemuQuirks, X86MsrRetryOrder) {
  const auto& q = x86_64_quirks();
  EXPECT_EQ(q.kvm_cpu_fallbacks,
            (std::vector<std::string>{"host", "host,-arch-capabilities", "qemu64"}));
  EXPECT_EQ(q.machine, "q35,acpi=on");
  EXPECT_EQ(q.console_tty, "ttyS0");
  EXPECT_EQ(q.result_tty, "ttyS1");
}

TEST(AcceleratorFailure, QuotesTheLineOfCasesO1AndO8) {
  const std::string dir = std::string(ISOLAB_TEST_DATA_DIR) + "/vm/";
  EXPECT_EQ(accelerator_failure(read_file(dir + "msr_error_stderr.txt")),
            "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69");
  // QEMU's register dump after the line is QEMU's, not a guest oops; the line itself is quoted.
  EXPECT_EQ(accelerator_failure(read_file(dir + "kvm_entry_failed_stderr.txt")),
            "KVM: entry failed, hardware error 0x80000021");
  EXPECT_EQ(accelerator_failure("boot\nKVM: entry failed, hardware error 0x0\nRAX=0"),
            "KVM: entry failed, hardware error 0x0");
  EXPECT_EQ(accelerator_failure("kvm: enabling virtualization on CPU7 failed"),
            "kvm: enabling virtualization on CPU7 failed");
  EXPECT_EQ(accelerator_failure("qemu-system-x86_64: -accel kvm: failed to initialize kvm: "
                                "Permission denied"),
            "qemu-system-x86_64: -accel kvm: failed to initialize kvm: Permission denied");
  EXPECT_EQ(
      accelerator_failure(
          "qemu-system-x86_64: could not open kernel file '/nope': No such file or directory"),
      std::nullopt);
  EXPECT_EQ(accelerator_failure("Invalid CPU topology: product of the hierarchy must match"),
            std::nullopt);
}

TEST(FullCmdline, AppendsConsoleAndPanicOnce) {
  VmConfig c = tcg_config();
  c.cmdline = "\tnohz_full=1\n";
  EXPECT_EQ(full_kernel_cmdline(c), "nohz_full=1 console=ttyS0 panic=-1 no_timer_check");
  EXPECT_EQ(effective_cpu_model(c), "IvyBridge-v1,-x2apic,-tsc-deadline");
  c.accel = Accel::kvm;
  EXPECT_EQ(full_kernel_cmdline(c), "nohz_full=1 console=ttyS0 panic=-1")
      << "a KVM guest kernel sets no_timer_check itself";
}

// A boot the plugin counts: nokaslr, and the TSC as clocksource unless the line picks one.
TEST(FullCmdline, InsnCountingAddsNokaslrAndPinsTheClocksource) {
  VmConfig c = tcg_config();
  c.cmdline = "nohz_full=1";
  c.insn_plugin = InsnPluginConfig{"/b/p.so", "/run/x/insn.txt", {}, ""};
  EXPECT_EQ(full_kernel_cmdline(c),
            "nohz_full=1 console=ttyS0 panic=-1 no_timer_check nokaslr clocksource=tsc "
            "tsc=reliable");
  c.cmdline = "clocksource=hpet nohz_full=1";
  EXPECT_EQ(insn_count_cmdline(c), " nokaslr tsc=reliable");
  c.cmdline = "nohz_full=1 xclocksource=hpet";  // not the parameter
  EXPECT_EQ(insn_count_cmdline(c), " nokaslr clocksource=tsc tsc=reliable");
  c.accel = Accel::kvm;  // no plugin under KVM: nothing added
  EXPECT_EQ(insn_count_cmdline(c), "");
  EXPECT_EQ(full_kernel_cmdline(c), "nohz_full=1 xclocksource=hpet console=ttyS0 panic=-1");
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
  EXPECT_EQ(to_string(VmOutcome::accelerator_failed), "accelerator_failed");
}

TEST(QemuArgv, NumaNodesUseMemoryBackendsAndOneSocketPerVcpu) {
  VmConfig c = tcg_config();
  c.memory_mib = 1024;
  c.sockets = 4;  // what pipeline/run_plan gives a NUMA guest by default
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
                        "node,nodeid=1,memdev=numa-mem1", "-numa",
                        "cpu,node-id=0,socket-id=0,core-id=0,thread-id=0", "-numa",
                        "cpu,node-id=0,socket-id=1,core-id=0,thread-id=0", "-numa",
                        "cpu,node-id=0,socket-id=3,core-id=0,thread-id=0", "-numa",
                        "cpu,node-id=1,socket-id=2,core-id=0,thread-id=0"}));
}

// With a given topology each vCPU is placed by socket, core and thread as QEMU numbers them
// (threads innermost): 2 sockets x 1 core x 2 threads, one socket per node.
TEST(QemuArgv, NumaCpusFollowTheTopology) {
  VmConfig c = tcg_config();
  c.sockets = 2;
  c.cores = 1;
  c.threads = 2;
  c.numa_nodes = {{{0, 1}, 512}, {{2, 3}, 512}};
  auto a = qemu_argv(c);
  std::vector<std::string> cpus;
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == "-numa" && a[i + 1].rfind("cpu,", 0) == 0) cpus.push_back(a[i + 1]);
  EXPECT_THAT(cpus, ElementsAreArray(std::vector<std::string>{
                        "cpu,node-id=0,socket-id=0,core-id=0,thread-id=0",
                        "cpu,node-id=0,socket-id=0,core-id=0,thread-id=1",
                        "cpu,node-id=1,socket-id=1,core-id=0,thread-id=0",
                        "cpu,node-id=1,socket-id=1,core-id=0,thread-id=1"}));
  EXPECT_EQ(vcpu_topology_ids(c, 3).socket, 1);
  c.sockets = 1;
  c.cores = 2;
  EXPECT_EQ(vcpu_topology_ids(c, 3).core, 1);
  EXPECT_EQ(vcpu_topology_ids(c, 3).thread, 1);
}

TEST(QemuArgv, BadNumaLayoutsAreRejected) {
  // Layouts for tcg_config()'s 4 vCPUs and 1024 MiB, and a part of the error.
  const std::vector<std::pair<decltype(VmConfig::numa_nodes), std::string>> cases = {
      {{{{0, 1}, 512}, {{2, 3}, 256}}, "the nodes hold 768 MiB"},
      {{{{0, 1}, 512}, {{1, 2, 3}, 512}}, "vCPU 1 is on two nodes"},
      {{{{0, 1}, 512}, {{2}, 512}}, "vCPU 3 is on no node"},
      {{{{0, 1, 2, 3, 4}, 1024}}, "vCPU 4 does not exist"}};
  for (const auto& [nodes, error] : cases) {
    VmConfig c = tcg_config();
    c.numa_nodes = nodes;
    EXPECT_THAT([&] { qemu_argv(c); }, ThrowsMessage<Error>(HasSubstr(error)));
  }
}

TEST(QemuArgv, CpuListText) {
  EXPECT_EQ(vm_cpu_list({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(vm_cpu_list({3}), "3");
  EXPECT_EQ(vm_cpu_list({}), "");
}

// docs/sources.md [q1]: every -smp level is given; a product other than the vCPUs is refused with
// QEMU's own words before QEMU runs, and QEMU's topology messages are recognised.
TEST(QemuArgv, FullTopologyAndPinning) {
  VmConfig c = tcg_config();
  c.vcpus = 8;
  c.sockets = 2;
  c.cores = 2;
  c.threads = 2;
  auto argv = qemu_argv(c);
  auto smp = std::find(argv.begin(), argv.end(), "-smp");
  ASSERT_NE(smp, argv.end());
  EXPECT_EQ(*(smp + 1), "8,sockets=2,cores=2,threads=2");
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "-qmp"), argv.end()) << "no QMP without pinning";
  c.cores = 4;
  EXPECT_THAT([&] { qemu_argv(c); },
              ::testing::ThrowsMessage<Error>(HasSubstr(
                  "product of the hierarchy must match maxcpus: sockets (2) * cores (4) * "
                  "threads (2) != maxcpus (8)")));
  c.cores = 2;
  c.threads = 0;
  EXPECT_THAT([&] { qemu_argv(c); },
              ::testing::ThrowsMessage<Error>(HasSubstr("parameters must be greater than zero")));
  c.threads = 2;
  c.vcpu_pin = {"1", "2", "3", "4", "5", "6", "7", "8"};
  c.emulator_pin = "0";
  argv = qemu_argv(c);
  auto qmp = std::find(argv.begin(), argv.end(), "-qmp");
  ASSERT_NE(qmp, argv.end());
  EXPECT_EQ(*(qmp + 1), "unix:" + qmp_socket_path(c).string() + ",server=on,wait=off");
  EXPECT_EQ(argv.back(), "-S") << "the guest waits for the pinning";
  c.vcpu_pin.pop_back();
  EXPECT_THAT([&] { qemu_argv(c); },
              ::testing::ThrowsMessage<Error>(HasSubstr("7 CPU lists for 8 vCPUs")));
}

TEST(QemuErrors, TopologyMessagesAreConfigurationErrors) {
  EXPECT_TRUE(is_qemu_topology_error(
      "qemu-system-x86_64: Invalid CPU topology: product of the hierarchy must match maxcpus: "
      "sockets (2) * cores (4) * threads (2) != maxcpus (8)"));
  EXPECT_TRUE(is_qemu_topology_error(
      "qemu-system-x86_64: Invalid CPU topology: maxcpus must be equal to or greater than smp: "
      "sockets (1) * cores (2) * threads (1) == maxcpus (2) < smp_cpus (4)"));
  EXPECT_TRUE(is_qemu_topology_error(
      "qemu-system-x86_64: CPU topology parameters must be greater than zero"));
  EXPECT_FALSE(is_qemu_topology_error("qemu-system-x86_64: error: failed to set MSR 0x10a"));
}

TEST(Qmp, VcpuThreadsFromQueryCpusFast) {
  // The shape of QEMU 7.2's reply (x86 TCG guest, 2 vCPUs).
  auto reply = nlohmann::json::parse(R"([
    {"thread-id": 4242, "props": {"core-id": 1, "thread-id": 0, "socket-id": 0}, "qom-path":
     "/machine/unattached/device[1]", "cpu-index": 1, "target": "x86_64"},
    {"thread-id": 4241, "props": {"core-id": 0, "thread-id": 0, "socket-id": 0}, "qom-path":
     "/machine/unattached/device[0]", "cpu-index": 0, "target": "x86_64"}])");
  EXPECT_EQ(qmp_vcpu_threads(reply), (std::vector<std::pair<int, int>>{{0, 4241}, {1, 4242}}));
  EXPECT_THAT([] { qmp_vcpu_threads(nlohmann::json::parse(R"([{"cpu-index": 0}])")); },
              ::testing::ThrowsMessage<Error>(HasSubstr("without cpu-index/thread-id")));
}

// This test's own thread: /proc's Cpus_allowed_list is what the kernel reports.
TEST(Qmp, ReadsCpusAllowedList) {
  const std::string l = read_cpus_allowed_list(::getpid(), ::getpid());
  EXPECT_FALSE(l.empty());
  EXPECT_EQ(l.find_first_not_of("0123456789,-"), std::string::npos) << l;
  EXPECT_EQ(read_cpus_allowed_list(::getpid(), 999999999), "");
}

// The instruction-counting plugin: the -plugin option's exact value, last in the argv.
TEST(QemuArgv, InsnPluginUnderTcgIsTheLastOption) {
  VmConfig c = tcg_config();
  c.insn_plugin =
      InsnPluginConfig{"/b/libisolab-insn-count.so", "/run/x/insn,count.txt", {1, 2, 3}, ""};
  std::vector<std::string> want = tcg_argv();
  *(std::find(want.begin(), want.end(), "-append") + 1) += " nokaslr clocksource=tsc tsc=reliable";
  want.push_back("-plugin");
  want.push_back("file=/b/libisolab-insn-count.so,out=/run/x/insn,,count.txt,profile_cpus=1-3");
  EXPECT_EQ(qemu_argv(c), want);
  // Commas of a cpulist are doubled too, so QEMU hands the plugin "profile_cpus=0,,2" as
  // "profile_cpus=0,2"; symbols (the kernel's System.map) only when set.
  c.insn_plugin->profile_cpus = {0, 2};
  c.insn_plugin->symbols = "/cache/k,1/System.map";
  EXPECT_EQ(qemu_argv(c).back(),
            "file=/b/libisolab-insn-count.so,out=/run/x/insn,,count.txt,profile_cpus=0,,2,"
            "symbols=/cache/k,,1/System.map");
  c.insn_plugin->profile_cpus.clear();
  c.insn_plugin->symbols.clear();
  EXPECT_EQ(insn_plugin_qemu_option(*c.insn_plugin),
            "file=/b/libisolab-insn-count.so,out=/run/x/insn,,count.txt");
  // Counting only inside steps is the plugin's count=steps, last.
  c.insn_plugin->steps_only = true;
  EXPECT_EQ(insn_plugin_qemu_option(*c.insn_plugin),
            "file=/b/libisolab-insn-count.so,out=/run/x/insn,,count.txt,count=steps");
  EXPECT_TRUE(insn_plugin_active(c));
}

TEST(QemuArgv, InsnPluginIsIgnoredUnderKvm) {
  VmConfig c = tcg_config();
  c.accel = Accel::kvm;
  std::vector<std::string> without = qemu_argv(c);
  c.insn_plugin = InsnPluginConfig{"/b/p.so", "/run/x/insn.txt", {}, ""};
  EXPECT_FALSE(insn_plugin_active(c));
  EXPECT_EQ(qemu_argv(c), without);
  EXPECT_EQ(std::count(without.begin(), without.end(), "-plugin"), 0);
}

TEST(QemuArgv, InsnPluginConfigIsValidated) {
  VmConfig c = tcg_config();
  c.insn_plugin = InsnPluginConfig{"", "/run/x/insn.txt", {}, ""};
  EXPECT_THAT([&] { qemu_argv(c); }, ThrowsMessage<Error>(HasSubstr("insn_plugin: empty plugin")));
  c.insn_plugin = InsnPluginConfig{"/b/p.so", "", {}, ""};
  EXPECT_THAT([&] { qemu_argv(c); }, ThrowsMessage<Error>(HasSubstr("insn_plugin: empty output")));
  c.insn_plugin = InsnPluginConfig{"/b/p.so", "/run/x/insn.txt", {3, 4}, ""};
  EXPECT_THAT([&] { qemu_argv(c); },
              ThrowsMessage<Error>(HasSubstr("insn_plugin: profile vCPU 4 does not exist")));
}

// The plugin's output file is created empty and writable by every user (QEMU under libvirt
// runs as libvirt's own user); under KVM it is not created at all.
TEST(PrepareOutputFiles, InsnPluginOutputIsCreatedWorldWritable) {
  const fs::path d = fs::temp_directory_path() / ("isolab-insnout-" + std::to_string(::getpid()));
  fs::remove_all(d);
  VmConfig c = tcg_config();
  c.console_log = d / "console.log";
  c.result_channel = d / "result.bin";
  c.insn_plugin = InsnPluginConfig{"/b/p.so", d / "sub" / "insn.txt", {}, ""};
  write_file_atomic(d / "sub" / "insn.txt", "old");
  prepare_output_files(c);
  EXPECT_EQ(fs::file_size(d / "sub" / "insn.txt"), 0u);
  EXPECT_EQ(fs::status(d / "sub" / "insn.txt").permissions() & fs::perms::all, fs::perms(0666));
  c.accel = Accel::kvm;
  fs::remove(d / "sub" / "insn.txt");
  prepare_output_files(c);
  EXPECT_FALSE(fs::exists(d / "sub" / "insn.txt"));
  fs::remove_all(d);
}

}  // namespace
}  // namespace isolab
