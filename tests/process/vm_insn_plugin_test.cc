// The instruction-counting plugin (tcg-plugin/insn-count.c) in the real QEMU, on its multiboot
// test guest (tcg-plugin/test-guest.S): exact counts, idle vCPUs, unbalanced markers, the
// preflight's errors with QEMU's own words, and the two VM backends passing the plugin on
// (libvirt running QEMU as libvirt-qemu with dynamic ownership, as qemu:///system does).
//
// The counts, derived by hand from test-guest.S (begin and end markers are counted in):
//   step 1 (32-bit code, all "user"): region = REGION_BEGIN 1 + mov 1 + 1000 x (add, dec, jnz)
//     + REGION_END 1 = 3003; step = STEP_BEGIN 1 + 3003 + STEP_END 1 = 3005.
//   step 2 (long mode): region user = REGION_BEGIN + lea + movabs + add + call + REGION_END = 6,
//     region kernel = the function at the kernel alias: mov 1 + 500 x 3 + ret 1 = 1502;
//     step = 8 user + 1502 kernel.
//   step 3 (long mode, all "user", region classes; a marker inside a region of another class
//     counts as one of its instructions): class 0 = REGION_BEGIN + mov + 100 x (dec, jnz) +
//     REGION_END = 203; class 1, two regions after it: 1 + 1 + 200 x 2 + 1 = 403 and
//     1 + 1 + 10 x 2 + 1 = 23 (n = 2, sum 426, lower median 23); class 2 around those three:
//     1 + 203 + 403 + 23 + 1 = 631; class 3 empty: 2; step = 1 + 631 + 2 + 1 = 635.
//     The unbalanced guest adds a REGION1_END with no class-1 region open: class 1 unbalanced 1,
//     class 0 untouched, step 636.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <iostream>

#include "base/files.h"
#include "parse/insn_count.h"
#include "vm/insn_plugin.h"
#include "vm/libvirt.h"
#include "vm/qemu.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Dir {
  fs::path p;
  explicit Dir(const std::string& tag)
      : p(fs::temp_directory_path() / ("isolab-insn-" + tag + "-" + std::to_string(::getpid()))) {
    fs::remove_all(p);
    fs::create_directories(p);
  }
  ~Dir() { fs::remove_all(p); }
};

InsnPluginFiles built(const char* guest = ISOLAB_TEST_GUEST) { return {ISOLAB_INSN_PLUGIN, guest}; }

// Runs QEMU as the preflight does, with argv's last element (the -plugin value) extended.
ProcessResult run_qemu(const InsnPluginFiles& f, const fs::path& out, int vcpus,
                       const std::string& extra_plugin_args = "") {
  ProcessSpec spec;
  spec.argv = insn_preflight_argv(f, out, vcpus);
  spec.argv.back() += extra_plugin_args;
  spec.stderr_to_stdout = true;
  spec.timeout = std::chrono::seconds(60);
  return make_real_runner()->run(spec);
}

TEST(InsnPluginReal, ExactCountsOnOneVcpu) {
  Dir d("one");
  ProcessResult r = run_qemu(built(), d.p / "out.txt", 1);
  ASSERT_EQ(r.exit_code, kTestGuestExit) << r.describe() << ": " << r.out;
  InsnCountFile f = parse_insn_count(read_file(d.p / "out.txt"));
  ASSERT_TRUE(f.complete) << f.truncation;
  ASSERT_EQ(f.steps.size(), 3u);
  InsnPerOperation op1 = insn_per_operation(f.steps[0], 0, 1);
  ASSERT_TRUE(op1.valid) << op1.reason;
  EXPECT_EQ(op1.user, 3003);
  EXPECT_EQ(op1.kernel, 0);
  EXPECT_EQ(insn_step_deltas(f.steps[0])[0], (InsnCounts{3005, 0}));
  InsnPerOperation op2 = insn_per_operation(f.steps[1], 0, 1);
  ASSERT_TRUE(op2.valid) << op2.reason;
  EXPECT_EQ(op2.user, 6);
  EXPECT_EQ(op2.kernel, 1502);
  EXPECT_EQ(insn_step_deltas(f.steps[1])[0], (InsnCounts{8, 1502}));
  std::vector<InsnProfileEntry> p = insn_step_profile(f.steps[1], 0);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].insns, 1497u);
  EXPECT_EQ(p[1].insns, 4u);
  EXPECT_EQ(p[2].insns, 1u);
  const InsnStep& s3 = f.steps[2];
  EXPECT_EQ(insn_step_deltas(s3)[0], (InsnCounts{635, 0}));
  const InsnPerOperation c0 = insn_per_operation(s3, 0, 1, 0);
  ASSERT_TRUE(c0.valid) << c0.reason;
  EXPECT_EQ(c0.user, 203);
  EXPECT_EQ(c0.median_total, 203);
  const InsnPerOperation c1 = insn_per_operation(s3, 0, 2, 1);
  ASSERT_TRUE(c1.valid) << c1.reason;
  EXPECT_EQ(c1.user, 213);  // (403 + 23) / 2
  EXPECT_EQ(c1.kernel, 0);
  EXPECT_EQ(c1.median_total, 23);
  EXPECT_EQ(c1.median_kernel, 0);
  EXPECT_EQ(insn_per_operation(s3, 0, 1, 2).user, 631);
  EXPECT_EQ(insn_per_operation(s3, 0, 1, 3).user, 2);
  const InsnPerOperationByVcpu by = insn_per_operation_by_vcpu(s3, {{0, 2}}, 1);
  ASSERT_TRUE(by.valid) << by.reason;
  EXPECT_EQ(by.per_vcpu.at(0).median_total, 23);
}

// A second, halted vCPU (multithreaded TCG: its own host thread) changes nothing.
TEST(InsnPluginReal, IdleSecondVcpuDoesNotDisturbTheCounts) {
  Dir d("two");
  InsnPluginPreflight p = preflight_insn_plugin(*make_real_runner(), built(), d.p, 2);
  EXPECT_TRUE(p.ok) << p.error;
  const std::string out = read_file(d.p / "insn-count.txt");
  EXPECT_EQ(check_test_guest_counts(out), "");
  InsnCountFile f = parse_insn_count(out);
  EXPECT_EQ(f.vcpus, 2u);
  EXPECT_EQ(insn_step_deltas(f.steps[0])[1], (InsnCounts{0, 0}));
  EXPECT_EQ(insn_step_deltas(f.steps[1])[1], (InsnCounts{0, 0}));
}

TEST(InsnPluginReal, UnbalancedMarkersAreReported) {
  Dir d("unbal");
  ProcessResult r = run_qemu(built(ISOLAB_TEST_GUEST_UNBALANCED), d.p / "out.txt", 1);
  ASSERT_EQ(r.exit_code, kTestGuestExit) << r.describe() << ": " << r.out;
  InsnCountFile f = parse_insn_count(read_file(d.p / "out.txt"));
  InsnPerOperation op = insn_per_operation(f.steps.at(0), 0, 1);
  EXPECT_FALSE(op.valid);
  EXPECT_EQ(op.reason, "2 unbalanced markers on vCPU 0");
  EXPECT_EQ(insn_step_deltas(f.steps[0])[0], (InsnCounts{3007, 0}));
  // Step 3: a stray class-1 end counts against class 1 only.
  ASSERT_EQ(f.steps.size(), 3u);
  EXPECT_EQ(insn_step_deltas(f.steps[2])[0], (InsnCounts{636, 0}));
  EXPECT_TRUE(insn_per_operation(f.steps[2], 0, 1, 0).valid);
  InsnPerOperation c1 = insn_per_operation(f.steps[2], 0, 2, 1);
  EXPECT_FALSE(c1.valid);
  EXPECT_EQ(c1.reason, "1 unbalanced class-1 markers on vCPU 0");
  EXPECT_NE(check_test_guest_counts(read_file(d.p / "out.txt")), "");
}

TEST(InsnPluginReal, PreflightPassesAndReportsTheApiRange) {
  Dir d("pre");
  const auto t0 = std::chrono::steady_clock::now();
  InsnPluginPreflight p = preflight_insn_plugin(*make_real_runner(), built(), d.p);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.error, "");
  EXPECT_EQ(p.plugin_api, 1);
  EXPECT_LE(p.qemu_api_min, 1);
  EXPECT_GE(p.qemu_api_max, 1);
  EXPECT_GT(p.seconds, 0);
  RecordProperty("preflight_seconds", std::to_string(wall));
  std::cout << "preflight wall time: " << wall << " s (QEMU run " << p.seconds << " s)\n";
}

// QEMU refuses these before the plugin runs; the error names the plugin and quotes QEMU.
TEST(InsnPluginReal, PreflightQuotesQemuWhenItRefusesThePlugin) {
  Dir d("refuse");
  auto runner = make_real_runner();
  InsnPluginPreflight v =
      preflight_insn_plugin(*runner, {ISOLAB_BAD_PLUGIN_VERSION, ISOLAB_TEST_GUEST}, d.p);
  EXPECT_FALSE(v.ok);
  EXPECT_THAT(v.error,
              HasSubstr(std::string("QEMU insn-count plugin ") + ISOLAB_BAD_PLUGIN_VERSION +
                        ": QEMU "
                        "exited 1"));
  EXPECT_THAT(v.error, HasSubstr("plugin requires API version 99, but this QEMU supports only up "
                                 "to version 1"));
  InsnPluginPreflight n =
      preflight_insn_plugin(*runner, {ISOLAB_BAD_PLUGIN_NO_VERSION, ISOLAB_TEST_GUEST}, d.p);
  EXPECT_FALSE(n.ok);
  EXPECT_THAT(n.error, HasSubstr(ISOLAB_BAD_PLUGIN_NO_VERSION));
  EXPECT_THAT(n.error, HasSubstr("does not declare API version"));
  InsnPluginPreflight m = preflight_insn_plugin(*runner, {d.p / "nope.so", ISOLAB_TEST_GUEST}, d.p);
  EXPECT_FALSE(m.ok);
  EXPECT_THAT(m.error, HasSubstr("the plugin " + (d.p / "nope.so").string() + " does not exist"));
  // Not a shared object at all: QEMU's dlopen message.
  InsnPluginPreflight e =
      preflight_insn_plugin(*runner, {ISOLAB_TEST_GUEST, ISOLAB_TEST_GUEST}, d.p);
  EXPECT_FALSE(e.ok);
  EXPECT_THAT(e.error, HasSubstr(std::string("Could not load plugin ") + ISOLAB_TEST_GUEST));
}

// The plugin's own refusals: QEMU prints them and does not start.
TEST(InsnPluginReal, PluginRefusesBadArgumentsAndUnwritableOutput) {
  Dir d("args");
  ProcessResult r = run_qemu(built(), d.p / "out.txt", 1, ",bogus=1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("isolab-insn-count: unknown argument 'bogus=1'"));
  r = run_qemu(built(), d.p / "out.txt", 2, ",profile_cpus=2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("bad profile_cpus '2' (a cpulist of vCPUs 0-1)"));
  r = run_qemu(built(), d.p / "no-such-dir" / "out.txt", 1);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("cannot open out=" + (d.p / "no-such-dir" / "out.txt").string()));
  EXPECT_THAT(r.out, HasSubstr("Could not load plugin"));
}

// What scripts/setup.sh runs after the build: exit 0 with the plugin as built, 1 with QEMU's
// words for a plugin it refuses.
TEST(InsnPluginReal, DoctorInsnPluginExitStatus) {
  auto runner = make_real_runner();
  ProcessSpec ok;
  ok.argv = {ISOLAB_BINARY, "doctor", "--insn-plugin"};
  ok.timeout = std::chrono::seconds(60);
  ProcessResult r = runner->run(ok);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out,
              HasSubstr(std::string("ok       QEMU insn-count plugin: ") + ISOLAB_INSN_PLUGIN));
  ProcessSpec bad = ok;
  bad.env = {{"ISOLAB_INSN_PLUGIN", ISOLAB_BAD_PLUGIN_VERSION}};
  r = runner->run(bad);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(std::string("FAILED   QEMU insn-count plugin ") +
                               ISOLAB_BAD_PLUGIN_VERSION));
  EXPECT_THAT(r.out, HasSubstr("plugin requires API version 99"));
}

VmConfig guest_config(const fs::path& dir, const fs::path& kernel, const fs::path& plugin) {
  VmConfig c;
  c.name = "isolab-insn-" + std::to_string(::getpid());
  c.kernel = kernel;
  c.vcpus = 2;
  c.memory_mib = 64;
  c.accel = Accel::tcg;
  c.console_log = dir / "console.log";
  c.result_channel = dir / "result.bin";
  c.wall_timeout = std::chrono::seconds(60);
  c.boot_timeout = std::chrono::seconds(30);
  c.insn_plugin = InsnPluginConfig{plugin, dir / "out" / "insn-count.txt", {0, 1}, 0};
  return c;
}

// QemuBackend: the guest ends in a triple fault (no isa-debug-exit device), which -no-reboot
// makes QEMU's exit 0.
TEST(InsnPluginReal, QemuBackendPassesThePluginOn) {
  Dir d("qemub");
  auto runner = make_real_runner();
  QemuBackend qb(*runner);
  VmConfig c = guest_config(d.p, ISOLAB_TEST_GUEST, ISOLAB_INSN_PLUGIN);
  VmOutcome o = qb.run(c);
  EXPECT_EQ(o.end, VmOutcome::powered_off) << o.detail << ": " << o.qemu_stderr_excerpt;
  EXPECT_EQ(read_file(c.console_log), "G");
  EXPECT_EQ(check_test_guest_counts(read_file(c.insn_plugin->output)), "");
}

// libvirt as qemu:///system runs it: QEMU as the unprivileged libvirt-qemu, dynamic ownership
// on. Here on isolab's embedded driver with that configuration (a root of its own; libvirt
// allows one embedded root per process, and ctest runs each test in its own process).
TEST(InsnPluginReal, LibvirtRunsThePluginAsLibvirtQemu) {
  Dir d("lv");
  ::chmod(d.p.c_str(), 0755);
  // The guest and plugin are copied in: the user libvirt-qemu must reach them.
  fs::copy_file(ISOLAB_TEST_GUEST, d.p / "guest.elf");
  fs::copy_file(ISOLAB_INSN_PLUGIN, d.p / "plugin.so");
  std::string conf = private_qemu_conf(host_allows_mount_namespace());
  auto replace = [&](const std::string& from, const std::string& to) {
    auto at = conf.find(from);
    if (at != std::string::npos) conf.replace(at, from.size(), to);
  };
  replace("user = \"root\"\ngroup = \"root\"\n", "");
  replace("dynamic_ownership = 0\nremember_owner = 0\n", "dynamic_ownership = 1\n");
  conf += "user = \"libvirt-qemu\"\ngroup = \"libvirt-qemu\"\n";
  write_file_atomic(d.p / "libvirt" / "etc" / "qemu.conf", conf);
  const std::string uri = "qemu:///embed?root=" + (d.p / "libvirt").string();

  VmConfig c = guest_config(d.p, d.p / "guest.elf", d.p / "plugin.so");
  LibvirtBackend lb(uri);
  VmOutcome o = lb.run(c);
  EXPECT_EQ(o.end, VmOutcome::powered_off) << o.detail << ": " << o.qemu_stderr_excerpt;
  const std::string log = read_file(libvirt_domain_log_dir(uri) / (c.name + ".log"));
  EXPECT_THAT(log, HasSubstr("-plugin"));
  EXPECT_EQ(check_test_guest_counts(read_file(c.insn_plugin->output)), "") << log;
  struct stat st {};
  ASSERT_EQ(::stat(c.insn_plugin->output.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
}

}  // namespace
}  // namespace isolab
