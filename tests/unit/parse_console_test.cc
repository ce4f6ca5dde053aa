// Console classifier: a real 6.1 panic captured on the development machine (docs/sources.md [o3]),
// logs constructed from the 6.1 printk formats, and hostile input (binary junk, a 100 MB line, NUL
// bytes).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "base/error.h"
#include "base/files.h"
#include "parse/console.h"

namespace isolab {
namespace {

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/console/" + name);
}

// [o3]: booted the default vanilla 6.1 bzImage (TCG, -no-reboot, panic=-1) with an init
// doing `echo c > /proc/sysrq-trigger`; QEMU exited 0, the console is the only witness.
TEST(Console, O3RealSysrqPanic) {
  std::string log = data("panic-sysrq-6.1.txt");
  auto r = classify_console(log);
  ASSERT_TRUE(r.fatal.has_value());
  EXPECT_EQ(r.fatal->klass, "panic");
  EXPECT_EQ(r.fatal->kind, "Kernel panic");
  EXPECT_EQ(r.fatal->line, 205u);
  EXPECT_EQ(r.fatal->summary, "Kernel panic - not syncing: sysrq triggered crash");
  EXPECT_THAT(r.fatal->excerpt, testing::HasSubstr("sysrq: Trigger a crash"));
  EXPECT_THAT(r.fatal->excerpt, testing::HasSubstr("Kernel Offset: disabled"));
  EXPECT_THAT(r.fatal->excerpt, testing::Not(testing::HasSubstr("\x1b")));
  ASSERT_EQ(r.findings.size(), 1u);  // the 200 boot lines before it (rcu:, Warning:) are clean
  EXPECT_EQ(r.findings_total, 1u);
  EXPECT_EQ(r.bytes, log.size());
  // SeaBIOS' escape sequences start the log; the real boot part alone has no finding.
  auto clean = classify_console(log.substr(0, log.find("[    2.121425] sysrq")));
  EXPECT_FALSE(clean.fatal.has_value());
  EXPECT_TRUE(clean.findings.empty());
  auto j = console_report_to_json(r);
  EXPECT_EQ(j["fatal"]["class"], "panic");
  EXPECT_EQ(j["fatal"]["line"], 205);
  EXPECT_EQ(j["findings_total"], 1);
}

TEST(Console, FirstFatalFindingDecides) {
  auto r = classify_console(data("constructed-warning-oops-panic-6.1.txt"));
  ASSERT_EQ(r.findings.size(), 4u);
  EXPECT_EQ(r.findings[0].klass, "warning");
  EXPECT_EQ(r.findings[0].line, 7u);
  EXPECT_EQ(r.findings[0].location, "mm/vmstat.c:1923");
  EXPECT_EQ(r.findings[0].summary,
            "WARNING: CPU: 1 PID: 87 at mm/vmstat.c:1923 vmstat_update+0x4c/0x60");
  EXPECT_EQ(r.findings[1].klass, "oops");
  EXPECT_EQ(r.findings[1].kind, "BUG");
  EXPECT_EQ(r.findings[1].line, 14u);
  EXPECT_EQ(r.findings[2].kind, "Oops");
  EXPECT_EQ(r.findings[2].line, 17u);
  EXPECT_EQ(r.findings[3].klass, "panic");
  EXPECT_EQ(r.findings[3].line, 19u);
  ASSERT_TRUE(r.fatal.has_value());
  EXPECT_EQ(r.fatal->klass, "warning");
  EXPECT_EQ(r.fatal->line, 7u);
  // 3 lines before, the line, 8 after.
  EXPECT_THAT(r.fatal->excerpt, testing::StartsWith("[    0.000000] Command line: console=ttyS0"));
  EXPECT_THAT(r.fatal->excerpt,
              testing::EndsWith("[   13.000020] #PF: supervisor write access in kernel mode"));
}

TEST(Console, StallsLockupsAndHungTasks) {
  auto r = classify_console(data("constructed-stalls-lockups-6.1.txt"));
  ASSERT_EQ(r.findings.size(), 5u);
  EXPECT_EQ(r.findings[0].klass, "hung_task");
  EXPECT_FALSE(r.findings[0].fatal);
  EXPECT_EQ(r.findings[1].klass, "rcu_stall");
  EXPECT_EQ(r.findings[1].line, 7u);
  EXPECT_EQ(r.findings[2].klass, "rcu_stall");
  EXPECT_EQ(r.findings[2].line, 10u);
  EXPECT_EQ(r.findings[3].klass, "lockup");
  EXPECT_EQ(r.findings[3].kind, "soft lockup");
  EXPECT_EQ(r.findings[4].kind, "hard lockup");
  EXPECT_EQ(r.findings[4].line, 12u);
  ASSERT_TRUE(r.fatal.has_value());
  EXPECT_EQ(r.fatal->klass, "rcu_stall");  // the hung task before it is not fatal
  EXPECT_EQ(r.fatal->line, 7u);
}

// Real: the e2e vm test's vanilla boot (6.1, 4 vCPUs under TCG on 2 host CPUs at load 8). The
// stall report at line 216 is followed 9 lines later by the kernel's starved grace-period kthread
// line (runnable, state 0x0); the finding and the fatal copy carry it, and so does the JSON.
TEST(Console, RealStallCarriesTheStarvedGpKthreadLine) {
  auto r = classify_console(data("rcu-stall-gp-kthread-starved-tcg-6.1.log"));
  ASSERT_TRUE(r.fatal.has_value());
  EXPECT_EQ(r.fatal->klass, "rcu_stall");
  EXPECT_EQ(r.fatal->line, 216u);
  EXPECT_THAT(r.fatal->gp_kthread_starved,
              testing::HasSubstr("rcu: rcu_preempt kthread starved for 5254 jiffies!"));
  EXPECT_THAT(r.fatal->gp_kthread_starved, testing::HasSubstr("->state=0x0 ->cpu=1"));
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].gp_kthread_starved, r.fatal->gp_kthread_starved);
  EXPECT_EQ(console_report_to_json(r)["fatal"]["gp_kthread_starved"], r.fatal->gp_kthread_starved);
}

// Real: rtla timerlat arming its tracepoints on a 4-vCPU TCG guest (6.1, rtla-short.json). CPU 1,
// in text_poke_bp_batch, took its timer interrupt and trapped on an int3 at
// __sysvec_apic_timer_interrupt+0x4e, where memory holds the call (e8) restored by an earlier
// patch: a stale translation. The oops's Code: line shows the byte.
TEST(Console, Int3TrapByteIsReadFromTheOopsCodeLine) {
  EXPECT_EQ(int3_trap_byte(data("int3-stale-text-poke-tcg-6.1.log")), "e8");
  EXPECT_EQ(int3_trap_byte("int3: 0000 [#1] SMP\nCode: 90 90 cc <0f> 1f 44\n"), "cc");
  EXPECT_EQ(int3_trap_byte("int3: 0000 [#1] SMP\nCode: Unable to access opcode bytes\n"),
            std::nullopt);
  EXPECT_EQ(int3_trap_byte("general protection fault\nCode: 90 <e8> 00\n"), std::nullopt);
  EXPECT_EQ(int3_trap_byte("int3: 0000 [#1] SMP\nCode: <e8> 00\n"), std::nullopt);
}

// Only a runnable kthread (state 0x0) within 64 lines after a stall counts; a stall without
// such a line (the constructed 6.1 stalls) carries nothing.
TEST(Console, StarvedLineMustBeRunnableAndNearTheStall) {
  const std::string stall = "[   53.0] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n";
  const std::string starved =
      "[   53.0] rcu: rcu_preempt kthread starved for 5254 jiffies! g1465 f0x0 "
      "RCU_GP_WAIT_FQS(5) ->state=0x0 ->cpu=1\n";
  const std::string sleeping =
      "[   53.0] rcu: rcu_preempt kthread starved for 5254 jiffies! g1465 f0x0 "
      "RCU_GP_WAIT_FQS(5) ->state=0x402 ->cpu=1\n";
  std::string filler;
  for (int i = 0; i < 64; ++i) filler += "[   53.0] filler\n";
  EXPECT_FALSE(classify_console(stall + starved).fatal->gp_kthread_starved.empty());
  EXPECT_TRUE(classify_console(stall + sleeping).fatal->gp_kthread_starved.empty());
  EXPECT_TRUE(classify_console(stall + filler + starved).fatal->gp_kthread_starved.empty());
  EXPECT_TRUE(classify_console(starved + stall).fatal->gp_kthread_starved.empty());
  for (const auto& f : classify_console(data("constructed-stalls-lockups-6.1.txt")).findings)
    EXPECT_TRUE(f.gp_kthread_starved.empty()) << f.summary;
}

TEST(Console, MessagesAreAnchoredAndPrefixesStripped) {
  auto r = classify_console(
      "$ grep 'BUG: ' notes.txt\n"                          // userspace mentioning BUG: mid-line
      "Warning: Processor Platform Limit event detected\n"  // not the kernel's WARNING:
      "<4>[   7.1][    T1] WARNING: CPU: 0 PID: 1 at kernel/foo.c:12 f+0x1/0x2\r\n"
      "<2>kernel BUG at mm/slub.c:345!\n"
      "general protection fault, probably for non-canonical address 0xdead: 0000 [#1] SMP\n");
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(r.findings[0].line, 3u);
  EXPECT_EQ(r.findings[0].summary, "WARNING: CPU: 0 PID: 1 at kernel/foo.c:12 f+0x1/0x2");
  EXPECT_EQ(r.findings[1].kind, "kernel BUG");
  EXPECT_EQ(r.findings[1].location, "mm/slub.c:345");
  EXPECT_EQ(r.findings[2].kind, "general protection fault");
}

TEST(Console, BinaryJunkNulAndNanAreSafe) {
  std::mt19937 rng(42);
  std::string junk(1 << 20, '\0');
  for (auto& c : junk) c = static_cast<char>(rng());
  for (std::size_t i = 0; i < junk.size(); ++i)  // no accidental matches
    if (junk[i] == 'K' || junk[i] == 'W' || junk[i] == 'B' || junk[i] == 'O' || junk[i] == 'r')
      junk[i] = 'x';
  auto clean = classify_console(junk);
  EXPECT_FALSE(clean.fatal.has_value());
  using namespace std::string_literals;
  std::string log = junk + "\n\x01\xff\x00 nan -nan inf\n"s +
                    "[ 1.0] Kernel panic - not syncing: \xff\x00\x1b[31mboom\n"s;
  auto r = classify_console(log);
  ASSERT_TRUE(r.fatal.has_value());
  EXPECT_EQ(r.fatal->klass, "panic");
  EXPECT_EQ(r.fatal->summary, "Kernel panic - not syncing: ???[31mboom");
  EXPECT_EQ(r.fatal->line,
            static_cast<std::size_t>(std::count(junk.begin(), junk.end(), '\n')) + 3);
  for (char c : r.fatal->excerpt) {
    unsigned char u = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || c == '\t' || (u >= 0x20 && u < 0x7f)) << int(u);
  }
  EXPECT_FALSE(classify_console("").fatal.has_value());
  EXPECT_EQ(classify_console("").lines, 0u);
}

TEST(Console, FindingsAreCappedButCounted) {
  std::string log;
  for (int i = 0; i < 1000; ++i) log += "WARNING: CPU: 0 PID: 1 at a.c:1 f\n";
  auto r = classify_console(log);
  EXPECT_EQ(r.findings.size(), 64u);
  EXPECT_EQ(r.findings_total, 1000u);
  EXPECT_EQ(r.fatal->line, 1u);
}

long max_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// A 100 MB line (written in 1 MiB pieces, never held whole), then a panic: the file classifier
// stays in bounded memory and time; only the first 4096 bytes of the long line are examined.
TEST(Console, HundredMegabyteLineInBoundedMemory) {
  auto path = std::filesystem::temp_directory_path() /
              ("isolab-console-" + std::to_string(::getpid()) + ".log");
  const std::string tail = "\n[   3.0] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [x:1]\n";
  {
    std::ofstream out(path, std::ios::binary);
    std::string piece(1 << 20, 'a');
    piece.replace(10000, 26, "Kernel panic - not syncing");  // past 4096 bytes: not examined
    for (int i = 0; i < 100; ++i)
      out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    out << tail;
  }
  long before = max_rss_kb();
  auto t0 = std::chrono::steady_clock::now();
  auto r = classify_console_file(path);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  long grew_kb = max_rss_kb() - before;
  std::filesystem::remove(path);
  EXPECT_EQ(r.lines, 2u);
  EXPECT_EQ(r.long_lines, 1u);
  EXPECT_EQ(r.bytes, (100u << 20) + tail.size());
  ASSERT_TRUE(r.fatal.has_value());
  EXPECT_EQ(r.fatal->kind, "soft lockup");
  EXPECT_EQ(r.fatal->line, 2u);
  EXPECT_LT(grew_kb, 16 * 1024) << "peak RSS grew by " << grew_kb << " KiB";
  EXPECT_LT(secs, 20.0);
  EXPECT_LT(r.fatal->excerpt.size(), 2000u);  // the long line is cut in the excerpt
  EXPECT_THROW(classify_console_file("/nonexistent/console.log"), Error);
}

// Real clean 6.1 guest logs (tests/data/guest/, saved by the guest helper): "..MP-BIOS bug:",
// "report a bug", "Warning: Processor Platform Limit" and "nosoftlockup" are not findings.
TEST(Console, RealCleanGuestLogsHaveNoFinding) {
  for (const char* name :
       {"console-isolation-6.1.log", "dmesg-isolation-6.1.txt", "dmesg-no-nohz-full-6.1.txt"}) {
    auto r = classify_console(read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/guest/" + name));
    EXPECT_GT(r.lines, 100u) << name;
    EXPECT_FALSE(r.fatal.has_value()) << name << ": " << (r.fatal ? r.fatal->summary : "");
    EXPECT_TRUE(r.findings.empty()) << name;
  }
}

}  // namespace
}  // namespace isolab
