#include <gtest/gtest.h>

#include "base/files.h"
#include "parse/trace.h"

namespace isolab {
namespace {

// Real per-CPU trace of CPUs 5-7 during a 4 s cyclictest with stress-ng on 0-4, captured from
// a vanilla 6.1 guest under TCG (8 vCPUs, isolcpus=managed_irq,domain,5-7 nohz_full=5-7).
// Expected counts were taken with grep over the same file.
TEST(Trace, CountsRealGuestTrace) {
  std::string text =
      read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/trace/guest-6.1-tcg-cpus5-7.txt");
  TraceCounts t = parse_trace(text);
  EXPECT_EQ(t.per_cpu[5]["local_timer_entry"], 97);
  EXPECT_EQ(t.per_cpu[6]["local_timer_entry"], 39);
  EXPECT_EQ(t.per_cpu[7]["local_timer_entry"], 34);
  EXPECT_EQ(t.workqueue_functions[6]["vmstat_update"],
            1);  // case V1: vmstat_update on an isolated CPU
  EXPECT_FALSE(t.lost_events);
  EXPECT_EQ(t.malformed, 0);

  Metrics m = trace_metrics(t, {5, 6, 7});
  ASSERT_TRUE(m.count("noise.vmstat_update"));
  EXPECT_EQ(m["noise.vmstat_update"].values, (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(m["noise.ipi"].values, (std::vector<double>{83, 74, 69}));
  EXPECT_EQ(m["noise.local_timer"].unit, "count");
  EXPECT_EQ(m["noise.local_timer"].aggregate, "sum");
}

TEST(Trace, LostEventsAndJunk) {
  std::string text =
      "# entries-in-buffer/entries-written: 10/250   #P:8\n"
      "garbage line without brackets\n"
      "  x-1 [00a] d.h1. 1.0: local_timer_entry: vector=236\n"
      "  x-1 [003] d.h1. 1.0: local_timer_entry: vector=236\n"
      "\x01\x02\xff [3\n";
  TraceCounts t = parse_trace(text);
  EXPECT_TRUE(t.lost_events);
  EXPECT_EQ(t.per_cpu[3]["local_timer_entry"], 1);
  EXPECT_EQ(t.malformed, 3);
}

}  // namespace
}  // namespace isolab
