// The instruction-counting plugin (tcg-plugin/insn-count.c) in the real QEMU, on its multiboot
// test guest (tcg-plugin/test-guest.S, with its symbols test-guest.map): exact counts, rep-string
// executions, the fault correction, wakeup paths, the per-function profile, idle vCPUs,
// unbalanced markers, the floor-cost inline build, the preflight's errors with QEMU's own
// words, and the two VM backends passing the plugin on (libvirt running QEMU as libvirt-qemu
// with dynamic ownership, as qemu:///system does).
//
// Every count asserted here is derived by hand in test-guest.S (begin and end markers are
// counted in; the derivations are in its header comment): steps 1-3 regions 3003, 6 + 1502 and
// the classes 203, 426 (median 23), 631, 2; step 4 110 user (101 rep) + 55 kernel (51 rep);
// step 5 5 user + 4 kernel after the fault correction; step 6 wakeup paths 6 and 7. The
// unbalanced guest adds markers with no region to open or close.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <iostream>

#include "base/files.h"
#include "parse/insn_count.h"
#include "parse/system_map.h"
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

InsnPluginFiles built(const char* guest = ISOLAB_TEST_GUEST,
                      const char* plugin = ISOLAB_INSN_PLUGIN) {
  return {plugin, guest, {}};
}

std::string guest_map() { return read_file(fs::path(ISOLAB_TEST_GUEST).replace_extension(".map")); }

// Runs QEMU as the preflight does, with argv's last element (the -plugin value) extended, or
// replaced by `plugin_value` when given.
ProcessResult run_qemu(const InsnPluginFiles& f, const fs::path& out, int vcpus,
                       const std::string& extra_plugin_args = "",
                       const std::string& plugin_value = "") {
  ProcessSpec spec;
  spec.argv = insn_preflight_argv(f, out, vcpus);
  spec.argv.back() += extra_plugin_args;
  if (!plugin_value.empty()) spec.argv.back() = plugin_value;
  spec.stderr_to_stdout = true;
  spec.timeout = std::chrono::seconds(60);
  return make_real_runner()->run(spec);
}

// The step's profile of vCPU 0 by function name.
std::map<std::string, std::uint64_t> named_profile(const InsnStep& s, const SystemMap& map) {
  std::map<std::string, std::uint64_t> out;
  for (const InsnProfileEntry& e : insn_step_profile(s, 0))
    out[e.in_function ? kernel_function_at(map, e.pc).value_or("?") : "(none)"] += e.insns;
  return out;
}

TEST(InsnPluginReal, ExactCountsOnOneVcpu) {
  Dir d("one");
  ProcessResult r = run_qemu(built(), d.p / "out.txt", 1);
  ASSERT_EQ(r.exit_code, kTestGuestExit) << r.describe() << ": " << r.out;
  InsnCountFile f = parse_insn_count(read_file(d.p / "out.txt"));
  const SystemMap map = parse_system_map(guest_map());
  ASSERT_TRUE(f.complete) << f.truncation;
  EXPECT_EQ(f.version, 3);
  EXPECT_EQ(f.mode, "exact");
  EXPECT_EQ(f.symbols, 8u);
  ASSERT_EQ(f.steps.size(), 6u);
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
  // The three blocks of kernel_loop (4, 1497, 1) are one function.
  EXPECT_EQ(named_profile(f.steps[1], map),
            (std::map<std::string, std::uint64_t>{{"kernel_loop", 1502}}));
  const InsnStep& s3 = f.steps[2];
  EXPECT_EQ(insn_step_deltas(s3)[0], (InsnCounts{635, 0}));
  const InsnPerOperation c1 = insn_per_operation(s3, 0, 2, 1);
  ASSERT_TRUE(c1.valid) << c1.reason;
  EXPECT_EQ(c1.user, 213);  // (403 + 23) / 2
  EXPECT_EQ(c1.median_total, 23);
  EXPECT_EQ(insn_per_operation(s3, 0, 1, 2).user, 631);
  EXPECT_EQ(insn_per_operation(s3, 0, 1, 3).user, 2);
  // Step 4: rep movsb of 100 bytes counts 101, rep stosb of 50 in the kernel 51.
  const InsnPerOperation op4 = insn_per_operation(f.steps[3], 0, 1);
  ASSERT_TRUE(op4.valid) << op4.reason;
  EXPECT_EQ(op4.user, 110);
  EXPECT_EQ(op4.kernel, 55);
  EXPECT_EQ(op4.rep, 152);
  EXPECT_EQ(op4.median_norep, 13);
  EXPECT_EQ(insn_step_rep_deltas(f.steps[3])[0], (InsnCounts{101, 51}));
  EXPECT_EQ(named_profile(f.steps[3], map), (std::map<std::string, std::uint64_t>{{"k_rep", 55}}));
  EXPECT_EQ(insn_step_profile(f.steps[3], 0).at(0).rep, 51u);
  // Step 5: the store's block, left by the page fault, counted once.
  const InsnPerOperation op5 = insn_per_operation(f.steps[4], 0, 1);
  EXPECT_EQ(op5.user, 5);
  EXPECT_EQ(op5.kernel, 4);
  EXPECT_EQ(f.steps[4].end_faults[0].fixed - f.steps[4].begin_faults[0].fixed, 1u);
  // Step 6: the wakeup paths.
  const InsnWakeups* w = insn_step_wakeups(f.steps[5], 0);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->lengths, (std::vector<std::uint64_t>{6, 7}));
  EXPECT_EQ(w->nowake, 1u);
  EXPECT_EQ(w->timer, 2u);
  ASSERT_EQ(w->longest.size(), 3u);
  EXPECT_EQ(kernel_function_at(map, w->longest[0].pc), "asm_sysvec_apic_timer_interrupt");
  EXPECT_EQ(w->longest[0].insns, 4u);
  EXPECT_EQ(w->longest[2].where, InsnWakeFunction::user);
  for (const InsnStep& s : f.steps) EXPECT_EQ(insn_profile_sum_problem(s, 0), "");
  EXPECT_GT(f.exit_boot.at(0), 0u);  // the firmware and the 32-bit setup
}

// Without the kernel's symbols the plugin does not know the fault's entry: the block the fault
// left counts whole, as before the correction (the store, the add and the markers after the
// fault twice), and every kernel instruction is outside every function.
// count=steps with a guest that never arms a step (test-guest.S has no STEP_ARM): each
// STEP_BEGIN finds the gate closed, or closing when it sits in the block of the previous
// STEP_END, asks to open it through QEMU's plugin reset and is written late=1; each STEP_END
// closes it again (QEMU runs the guest to its end through those resets); nothing outside the
// steps is counted, boot code included, and no step counts more than the same step counted
// whole.
TEST(InsnPluginReal, StepsOnlyFlagsEveryUnarmedStepLate) {
  Dir d("steps");
  ProcessResult all = run_qemu(built(), d.p / "all.txt", 1);
  ASSERT_EQ(all.exit_code, kTestGuestExit) << all.describe() << ": " << all.out;
  ProcessResult r = run_qemu(built(), d.p / "out.txt", 1, ",count=steps");
  ASSERT_EQ(r.exit_code, kTestGuestExit) << r.describe() << ": " << r.out;
  const std::string text = read_file(d.p / "out.txt");
  InsnCountFile f = parse_insn_count(text);
  InsnCountFile whole = parse_insn_count(read_file(d.p / "all.txt"));
  ASSERT_TRUE(f.complete) << f.truncation;
  EXPECT_TRUE(f.steps_only);
  EXPECT_FALSE(whole.steps_only);
  ASSERT_EQ(f.steps.size(), whole.steps.size());
  for (std::size_t i = 0; i < f.steps.size(); ++i) {
    EXPECT_TRUE(f.steps[i].late) << "step " << i + 1;
    EXPECT_FALSE(whole.steps[i].late) << "step " << i + 1;
    EXPECT_LE(insn_step_deltas(f.steps[i])[0].total(), insn_step_deltas(whole.steps[i])[0].total())
        << "step " << i + 1;
  }
  // The opens took effect: the steps' blocks after each open were counted.
  std::uint64_t counted = 0;
  for (const InsnStep& s : f.steps) counted += insn_step_deltas(s)[0].total();
  EXPECT_GT(counted, 3000u);
  EXPECT_EQ(f.exit_boot, std::vector<std::uint64_t>{0});
  EXPECT_GT(whole.exit_boot.at(0), 0u);
  EXPECT_THAT(text, HasSubstr(" late_steps=6 refused_resets="));
}

TEST(InsnPluginReal, WithoutSymbolsTheFaultedBlockCountsWhole) {
  Dir d("nosym");
  const fs::path out = d.p / "out.txt";
  ProcessResult r = run_qemu(
      built(), out, 1, "",
      "file=" + std::string(ISOLAB_INSN_PLUGIN) + ",out=" + out.string() + ",profile_cpus=0");
  ASSERT_EQ(r.exit_code, kTestGuestExit) << r.describe() << ": " << r.out;
  InsnCountFile f = parse_insn_count(read_file(out));
  EXPECT_EQ(f.symbols, 0u);
  const InsnPerOperation op5 = insn_per_operation(f.steps.at(4), 0, 1);
  EXPECT_GT(op5.user, 5);
  EXPECT_EQ(op5.kernel, 4);
  EXPECT_EQ(insn_step_profile(f.steps[1], 0).at(0).in_function, false);
  EXPECT_EQ(insn_profile_sum_problem(f.steps[1], 0), "");
  EXPECT_TRUE(f.steps[5].wakeups.empty() || f.steps[5].wakeups[0].lengths.empty());
  EXPECT_NE(check_test_guest_counts(read_file(out), guest_map()), "");
}

// The floor-cost build counts with inline adds shared by the vCPUs: exact with one vCPU
// running, no fault correction, no profile; the preflight holds it to what it can do.
TEST(InsnPluginReal, InlineBuildCountsOneVcpuAndPassesItsPreflight) {
  Dir d("inline");
  InsnPluginPreflight p = preflight_insn_plugin(
      *make_real_runner(), built(ISOLAB_TEST_GUEST, ISOLAB_INSN_PLUGIN_INLINE), d.p);
  EXPECT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.mode, "inline");
  InsnCountFile f = parse_insn_count(read_file(d.p / "insn-count.txt"));
  EXPECT_EQ(f.mode, "inline");
  EXPECT_EQ(insn_step_deltas(f.steps.at(3))[0], (InsnCounts{112, 55}));
  EXPECT_TRUE(f.steps[1].profile.empty());
}

// A second, halted vCPU (multithreaded TCG: its own host thread) changes nothing.
TEST(InsnPluginReal, IdleSecondVcpuDoesNotDisturbTheCounts) {
  Dir d("two");
  InsnPluginPreflight p = preflight_insn_plugin(*make_real_runner(), built(), d.p, 2);
  EXPECT_TRUE(p.ok) << p.error;
  const std::string out = read_file(d.p / "insn-count.txt");
  EXPECT_EQ(check_test_guest_counts(out, guest_map()), "");
  InsnCountFile f = parse_insn_count(out);
  EXPECT_EQ(f.vcpus, 2u);
  for (const InsnStep& s : f.steps) {
    EXPECT_EQ(insn_step_deltas(s)[1], (InsnCounts{0, 0}));
    EXPECT_EQ(insn_profile_sum_problem(s, 1), "");
  }
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
  ASSERT_EQ(f.steps.size(), 6u);
  EXPECT_EQ(insn_step_deltas(f.steps[2])[0], (InsnCounts{636, 0}));
  EXPECT_TRUE(insn_per_operation(f.steps[2], 0, 1, 0).valid);
  InsnPerOperation c1 = insn_per_operation(f.steps[2], 0, 2, 1);
  EXPECT_FALSE(c1.valid);
  EXPECT_EQ(c1.reason, "1 unbalanced class-1 markers on vCPU 0");
  EXPECT_NE(check_test_guest_counts(read_file(d.p / "out.txt"), guest_map()), "");
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
      preflight_insn_plugin(*runner, {ISOLAB_BAD_PLUGIN_VERSION, ISOLAB_TEST_GUEST, {}}, d.p);
  EXPECT_FALSE(v.ok);
  EXPECT_THAT(v.error,
              HasSubstr(std::string("QEMU insn-count plugin ") + ISOLAB_BAD_PLUGIN_VERSION +
                        ": QEMU "
                        "exited 1"));
  EXPECT_THAT(v.error, HasSubstr("plugin requires API version 99, but this QEMU supports only up "
                                 "to version 1"));
  InsnPluginPreflight n =
      preflight_insn_plugin(*runner, {ISOLAB_BAD_PLUGIN_NO_VERSION, ISOLAB_TEST_GUEST, {}}, d.p);
  EXPECT_FALSE(n.ok);
  EXPECT_THAT(n.error, HasSubstr(ISOLAB_BAD_PLUGIN_NO_VERSION));
  EXPECT_THAT(n.error, HasSubstr("does not declare API version"));
  InsnPluginPreflight m =
      preflight_insn_plugin(*runner, {d.p / "nope.so", ISOLAB_TEST_GUEST, {}}, d.p);
  EXPECT_FALSE(m.ok);
  EXPECT_THAT(m.error, HasSubstr("the plugin " + (d.p / "nope.so").string() + " does not exist"));
  // Not a shared object at all: QEMU's dlopen message.
  InsnPluginPreflight e =
      preflight_insn_plugin(*runner, {ISOLAB_TEST_GUEST, ISOLAB_TEST_GUEST, {}}, d.p);
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
  c.insn_plugin = InsnPluginConfig{
      plugin, dir / "out" / "insn-count.txt", {0, 1}, fs::path(kernel).replace_extension(".map")};
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
  EXPECT_EQ(check_test_guest_counts(read_file(c.insn_plugin->output), guest_map()), "");
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
  fs::copy_file(fs::path(ISOLAB_TEST_GUEST).replace_extension(".map"), d.p / "guest.map");
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
  EXPECT_EQ(check_test_guest_counts(read_file(c.insn_plugin->output), guest_map()), "")
      << log << read_file(c.insn_plugin->output) << "console: " << read_file(c.console_log);
  struct stat st {};
  ASSERT_EQ(::stat(c.insn_plugin->output.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
}

}  // namespace
}  // namespace isolab
