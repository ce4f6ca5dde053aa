// The guest's /init as rendered for fixed plans, compared byte for byte with the golden files
// tests/data/guest/init-*-plan.sh. After an intended change of the script, regenerate them with
//   ISOLAB_UPDATE_GOLDEN=1 build/tests/unit_guest_init_script_test
// and review the diff. `process.InitScriptSyntax.*` checks the rendered scripts with busybox sh -n.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "guest/init_script.h"

namespace fs = std::filesystem;

namespace isolab {
namespace {

const fs::path kGolden = fs::path(ISOLAB_TEST_DATA_DIR) / "guest";

// Every optional part of the script: the busy window on nohz_full CPUs, the nohz_full
// precheck, sysctls, an injected fragment, a traced step with extra outputs and an untraced one.
GuestPlan full_plan() {
  GuestPlan p;
  p.nonce = "G0ldenN0nce4Init";
  p.vcpus = 8;
  p.expect_isolated = "5-7";
  p.expect_nohz_full = "5-7";
  p.skip_on_mismatch = true;
  p.busy_cpus = "5-7";
  p.busy_window_s = 3;
  p.before_steps = "echo injected";
  p.sysctls = {{"vm.numa_stat", "0"}, {"kernel.timer_migration", "1"}};
  p.steps.push_back({"latency",
                     "cyclictest -q --json=cyclictest.json",
                     {{"json", "cyclictest.json"}, {"load.yaml", "load.yaml"}},
                     40,
                     "5-7"});
  p.steps.push_back({"vmstat-idle", "vmstat-overhead --mode idle", {}, 60, ""});
  return p;
}

// Nothing optional: no busy window, no nohz_full expected, no skip, no sysctls, no trace.
GuestPlan minimal_plan() {
  GuestPlan p;
  p.nonce = "M1nimalN0nce";
  p.vcpus = 2;
  p.skip_on_mismatch = false;
  p.busy_cpus = "";
  p.steps.push_back({"only", "true", {}, 10, ""});
  return p;
}

void expect_golden(const std::string& rendered, const fs::path& golden) {
  if (const char* u = std::getenv("ISOLAB_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    write_file_atomic(golden, rendered);
    GTEST_SUCCEED() << "rewrote " << golden;
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing (ISOLAB_UPDATE_GOLDEN=1 writes it)";
  EXPECT_EQ(rendered, read_file(golden)) << "the /init differs from " << golden;
}

TEST(InitScriptGolden, FullPlanInitIsByteForByteTheGolden) {
  const auto files = render_plan_files(full_plan());
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].first, "/init");
  EXPECT_EQ(files[1].first, "/isolab/steps/latency.sh");
  EXPECT_EQ(files[1].second, "#!/bin/sh\ncyclictest -q --json=cyclictest.json\n");
  EXPECT_EQ(files[2].first, "/isolab/steps/vmstat-idle.sh");
  expect_golden(files[0].second, kGolden / "init-full-plan.sh");
}

TEST(InitScriptGolden, MinimalPlanInitIsByteForByteTheGolden) {
  const auto files = render_plan_files(minimal_plan());
  ASSERT_EQ(files.size(), 2u);
  expect_golden(files[0].second, kGolden / "init-minimal-plan.sh");
}

TEST(Plan, InitSendsFactsRunsStepsAndPowersOff) {
  GuestPlan p;
  p.nonce = "abcdef123456";
  p.vcpus = 8;
  p.expect_isolated = "5-7";
  p.expect_nohz_full = "5-7";
  p.busy_cpus = "5-7";
  p.steps.push_back({"lat", "cyclictest -q", {{"json", "cyclictest.json"}}, 40, "5-7"});
  auto files = render_plan_files(p);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].first, "/init");
  const std::string& init = files[0].second;
  EXPECT_NE(init.find("NONCE=abcdef123456"), std::string::npos);
  EXPECT_NE(init.find("rec uname_r"), std::string::npos);
  EXPECT_NE(init.find("timeout -s KILL 40 sh /isolab/steps/lat.sh"), std::string::npos);
  EXPECT_NE(init.find("rec lat.json $rc cyclictest.json"), std::string::npos);
  EXPECT_NE(init.find("poweroff -f"), std::string::npos);
  EXPECT_NE(init.find("expected '5-7'"), std::string::npos);
  EXPECT_EQ(files[1].first, "/isolab/steps/lat.sh");
  // The busy loops start on each listed CPU, and what a step left behind ends in one process.
  EXPECT_NE(init.find("for c in 5 6 7; do taskset -c $c sh -c 'while :; do :; done' &"),
            std::string::npos)
      << init;
  EXPECT_NE(init.find("killall -q -KILL stress-ng cyclictest vmstat-overhead rtla "
                      "page-fault-bench\n"),
            std::string::npos);
}

// A CPU list the guest would loop over is N or N-M with N <= M, each part; anything else is
// refused with the list named, before a guest boots.
TEST(Plan, RejectsCpuListsItCannotExpand) {
  for (const char* bad : {"7-5", "5-", "-", "1,,2", "1--2", "99999"}) {
    GuestPlan p;
    p.nonce = "abcdef123456";
    p.steps.push_back({"s", "true", {}, 10, bad});
    try {
      render_plan_files(p);
      ADD_FAILURE() << "trace cpulist '" << bad << "' was taken";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), std::string("guest plan: bad trace cpulist '") + bad + "'");
    }
    GuestPlan q;
    q.nonce = "abcdef123456";
    q.busy_cpus = bad;
    EXPECT_THROW(render_plan_files(q), Error) << bad;
  }
}

TEST(Plan, RejectsUnsafeNames) {
  GuestPlan p;
  p.nonce = "abcdef123456";
  p.steps.push_back({"a;reboot", "true", {}, 10, ""});
  EXPECT_THROW(render_plan_files(p), std::exception);
  GuestPlan q;
  q.nonce = "abc def 1234";
  EXPECT_THROW(render_plan_files(q), std::exception);
}

TEST(Plan, SysctlsAreWrittenAndReadBackBeforeTheSteps) {
  GuestPlan p;
  p.nonce = "abcdef123456";
  p.sysctls = {{"vm.numa_stat", "0"}, {"net.core.x-y", "1 2"}};
  p.steps.push_back({"pf", "page-fault-bench", {}, 30, ""});
  std::string init = render_plan_files(p)[0].second;
  auto w = init.find("echo '0' > /proc/sys/vm/numa_stat; w=$?");
  ASSERT_NE(w, std::string::npos) << init;
  EXPECT_NE(init.find("echo '1 2' > /proc/sys/net/core/x-y; w=$?"), std::string::npos);
  EXPECT_NE(init.find("printf '%s\\t%s\\t%s\\n' vm.numa_stat $w \"$(cat /proc/sys/vm/numa_stat"),
            std::string::npos);
  auto rec = init.find("rec sysctls 0 /tmp/sysctls");
  EXPECT_LT(w, rec);
  EXPECT_LT(rec, init.find("sh /isolab/steps/pf.sh"));
  EXPECT_NE(init.find("fact node_online /sys/devices/system/node/online"), std::string::npos);
  p.sysctls = {{"vm.numa_stat", "0; reboot"}};
  EXPECT_THROW(render_plan_files(p), std::exception);
  p.sysctls = {{"../x", "0"}};
  EXPECT_THROW(render_plan_files(p), std::exception);
}

// The customer's runtime settings move the IRQs to the housekeeping CPUs; where each IRQ is
// delivered is read after that, so that the gate sees the placement the steps run with.
TEST(Plan, IrqPlacementIsReadAfterTheRuntimeSettingsMoveTheIrqs) {
  GuestPlan p;
  p.nonce = "abcdef123456";
  p.runtime.housekeeping = "0-1";
  p.runtime.housekeeping_mask = "3";
  p.steps.push_back({"pf", "page-fault-bench", {}, 30, ""});
  const std::string init = render_plan_files(p)[0].second;
  const auto move = init.find("> $d/smp_affinity_list");
  const auto read = init.find("rec irq_affinity 0 /tmp/fact");
  ASSERT_NE(move, std::string::npos) << init;
  ASSERT_NE(read, std::string::npos) << init;
  EXPECT_LT(move, read);
  EXPECT_LT(read, init.find("sh /isolab/steps/pf.sh"));
}

// A traced step arms the lock contention trigger once, before the steps, sends what
// the trigger file says, and sends the contention lines of every CPU; an untraced plan does not.
TEST(Plan, LockContentionIsArmedOnceAndSentPerTracedStep) {
  GuestPlan p;
  p.nonce = "abcdef123456";
  p.steps.push_back({"a", "true", {}, 10, "2-3"});
  p.steps.push_back({"b", "true", {}, 10, "2-3"});
  const std::string init = render_plan_files(p)[0].second;
  const std::string arm_cmd = "echo 'stacktrace if flags == 1 || flags == 8' > $L/trigger";
  const auto arm = init.find(arm_cmd);
  ASSERT_NE(arm, std::string::npos) << init;
  EXPECT_EQ(init.find(arm_cmd, arm + 1), std::string::npos);  // once
  EXPECT_LT(init.find("echo 'flags == 1 || flags == 8' > $L/filter"), arm);
  EXPECT_LT(init.find("if [ \"$(cat $L/enable 2>/dev/null)\" = 1 ]; then"), arm);
  EXPECT_LT(arm, init.find("fact lock_contention_trigger $L/trigger"));
  EXPECT_LT(init.find("fact lock_contention_trigger"), init.find("sh /isolab/steps/a.sh"));
  for (const char* st : {"a", "b"})
    EXPECT_NE(init.find(std::string("rec ") + st + ".lock_contention 0 " + st + ".lock_contention"),
              std::string::npos)
        << st;
  // grep reads the copies itself, each line prefixed with its file: no cat per CPU.
  EXPECT_NE(init.find("'function=vmstat_update' /tmp/trace.* 2>/dev/null | awk -v q="),
            std::string::npos)
      << init;
  EXPECT_EQ(init.find("cat $f"), std::string::npos);
  // The traced CPUs 2-3 are the loop's words, no tr or seq in the guest.
  EXPECT_NE(init.find("for c in 2 3; do echo \"# cpu $c\"; cat /tmp/trace.$c 2>/dev/null; done > "
                      "a.trace\n"),
            std::string::npos)
      << init;
  EXPECT_EQ(init.find("seq "), std::string::npos);
  // Each traced step reads every CPU's buffer once (the kernel formats it on every read), and
  // the trace, the vmstat_update queue events and the lock contention are cut from the copies.
  std::size_t reads = 0;
  for (auto at = init.find("$T/per_cpu/"); at != std::string::npos;
       at = init.find("$T/per_cpu/", at + 1))
    ++reads;
  EXPECT_EQ(reads, 2u) << init;  // steps a and b
  // One pass over the copies gives the queue events and the lock contention.
  for (const char* st : {"a", "b"})
    EXPECT_NE(init.find(std::string("| awk -v q=") + st + ".vmstat_queue '"), std::string::npos)
        << st;
  EXPECT_EQ(init.find("cat /tmp/trace.* 2>/dev/null | grep"), std::string::npos);
  EXPECT_NE(trace_event_boot_param().find("lock:contention_begin,lock:contention_end,"),
            std::string::npos);

  GuestPlan q;
  q.nonce = "abcdef123456";
  q.steps.push_back({"a", "true", {}, 10, ""});
  const std::string untraced = render_plan_files(q)[0].second;
  EXPECT_EQ(untraced.find("contention"), std::string::npos);
}

TEST(Plan, ShQuote) { EXPECT_EQ(sh_quote("it's"), "'it'\\''s'"); }

}  // namespace
}  // namespace isolab
