// Runs the real guest-tools/vmstat-overhead binary (built static by CMake) on this host in each
// mode and parses what it prints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

#include "parse/vmstat_overhead.h"
#include "sys/process.h"

namespace isolab {
namespace {

ProcessResult run(std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {ISOLAB_VMSTAT_OVERHEAD};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.timeout = std::chrono::milliseconds(60000);
  return make_real_runner()->run(spec);
}

TEST(VmstatOverheadBinary, SyscallModePinned) {
  auto p = run({"syscall", "--iterations", "2000", "--warmup", "100", "--cpu", "0"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = parse_vmstat_overhead(p.out);
  EXPECT_EQ(r.mode, "syscall");
  EXPECT_EQ(r.iterations, 2000);
  EXPECT_EQ(r.warmup, 100);
  EXPECT_EQ(r.cpu, 0);
  EXPECT_TRUE(r.pinned);
  EXPECT_EQ(r.counter, "tsc");
  // Two system calls cost more than 100 TSC ticks on any machine, and per_syscall is half a pair.
  EXPECT_GT(r.min, 100);
  EXPECT_NEAR(*r.per_syscall, r.per_iteration / 2, 0.001);  // both printed with 3 decimals
  EXPECT_GT(vmstat_overhead_metrics(r).at("cycles_per_syscall").values.at(0), 50);
}

TEST(VmstatOverheadBinary, IdleModeSleepsAtLeastTheRequestedTime) {
  auto p = run({"idle", "--iterations", "200", "--warmup", "10", "--counter", "ns"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto r = parse_vmstat_overhead(p.out);
  EXPECT_EQ(r.mode, "idle");
  EXPECT_EQ(r.counter, "ns");
  EXPECT_EQ(r.sleep_us, 10);
  EXPECT_GE(r.min, 10'000);  // usleep(10) sleeps at least 10 us
  EXPECT_EQ(vmstat_overhead_metrics(r).at("cycles_per_idle_loop").unit, "ns");
}

TEST(VmstatOverheadBinary, BadUsageExitsTwoWithAMessage) {
  for (auto args : std::vector<std::vector<std::string>>{{"bogus"},
                                                         {"syscall", "--iterations", "0"},
                                                         {"idle", "--frob"},
                                                         {},
                                                         {"syscall", "--cpu", "x"}}) {
    auto p = run(args);
    EXPECT_EQ(p.exit_code, 2);
    EXPECT_THAT(p.err, testing::HasSubstr("vmstat-overhead"));
    EXPECT_EQ(p.out, "");
  }
  auto help = run({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, testing::HasSubstr("syscall|idle|spin"));
}

// Spin mode: every event kind runs its events at the rate asked for (within what a loaded host
// allows), faults in one page per event, and the CPU timer fires where there is one. This host has
// no tracefs mounted for the test, or it has one: either way the markers written are all the events
// or none.
TEST(VmstatOverheadBinary, SpinModeDoesItsEventsAtTheRate) {
  for (const std::string event : {"fault", "fault+cputimer", "cputimer+fault", "fault+mlock"}) {
    auto p = run({"spin", "--cpu", "0", "--duration-s", "1", "--rate-hz", "50", "--event", event});
    ASSERT_EQ(p.exit_code, 0) << event << ": " << p.err;
    auto runs = parse_vmstat_spin_lines(p.out);
    ASSERT_EQ(runs.size(), 1u);
    const VmstatSpinResult& r = runs[0];
    EXPECT_EQ(r.event, event);
    EXPECT_EQ(r.cpu, 0);
    EXPECT_TRUE(r.pinned);
    EXPECT_EQ(r.rate_hz, 50);
    // 50 periods in the second; the last may fall after the deadline, a late one is skipped.
    EXPECT_GE(r.events + r.late_events, 40) << p.out;
    EXPECT_LE(r.events, 50) << p.out;
    EXPECT_GE(r.elapsed_s, 1.0);
    EXPECT_EQ(r.touched_pages, r.events);
    // The timer fires at a tick of the host's kernel once the task has run for 1 ns: a host
    // that keeps the task waiting can see it re-armed before it fired.
    if (event.find("cputimer") == std::string::npos) {
      EXPECT_EQ(r.cpu_timer_fired, 0) << p.out;
    } else {
      EXPECT_GT(r.cpu_timer_fired, 0) << p.out;
      EXPECT_LE(r.cpu_timer_fired, r.events) << p.out;
    }
    EXPECT_EQ(r.marked_events, r.trace_marker ? r.events : 0) << p.out;
  }
}

TEST(VmstatOverheadBinary, SpinModeBadUsageExitsTwo) {
  for (auto args : std::vector<std::vector<std::string>>{{"spin", "--event", "fault+frob"},
                                                         {"spin", "--rate-hz", "0"},
                                                         {"spin", "--rate-hz", "100001"}}) {
    auto p = run(args);
    EXPECT_EQ(p.exit_code, 2);
    EXPECT_THAT(p.err, testing::HasSubstr("vmstat-overhead: --"));
    EXPECT_EQ(p.out, "");
  }
}

}  // namespace
}  // namespace isolab
