// Runs the real guest-tools/vmstat-overhead binary (built static by CMake) on this host in both
// modes and parses what it prints.
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
  EXPECT_THAT(help.out, testing::HasSubstr("syscall|idle"));
}

}  // namespace
}  // namespace isolab
