// The checks of a guest's sysctls and NUMA layout against what the spec asked, on records as
// the guest init sends them (the numa_nodes/node_online text is what a two-node 6.1 guest of
// examples/vmstat-numa-stat.json sent here).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "guest/setup_check.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

TEST(SysctlCheck, ReadBackMatches) {
  std::string rec = "vm.numa_stat\t0\t0 \nkernel.x\t0\t1  2\t3 \n";
  auto r = parse_sysctl_record(rec);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].value, "1 2 3");
  EXPECT_EQ(sysctl_mismatch({{"vm.numa_stat", "0"}, {"kernel.x", "1 2  3"}}, &rec), "");
  EXPECT_EQ(sysctl_mismatch({}, nullptr), "");
}

TEST(SysctlCheck, MismatchesNameTheSysctl) {
  std::string rec = "vm.numa_stat\t0\t1 \nvm.bad\t1\t\n";
  EXPECT_EQ(sysctl_mismatch({{"vm.numa_stat", "0"}}, &rec),
            "sysctl vm.numa_stat: wanted '0', read back '1'");
  EXPECT_THAT(sysctl_mismatch({{"vm.bad", "1"}}, &rec),
              HasSubstr("sysctl vm.bad: could not be written (exit status 1"));
  EXPECT_THAT(sysctl_mismatch({{"vm.other", "1"}}, &rec), HasSubstr("not in the guest's report"));
  EXPECT_THAT(sysctl_mismatch({{"vm.numa_stat", "0"}}, nullptr), HasSubstr("sent no report"));
  std::string junk = "vm.numa_stat 0 0\n";
  EXPECT_THAT(sysctl_mismatch({{"vm.numa_stat", "0"}}, &junk),
              HasSubstr("sysctl report: sysctls line 1: expected name, status and value"));
  std::string badrc = "vm.numa_stat\tx\t0\n";
  EXPECT_THAT([&] { parse_sysctl_record(badrc); },
              testing::ThrowsMessage<Error>(HasSubstr("status is not an integer")));
}

TEST(NumaCheck, TwoNodeGuest) {
  std::string online = "0-1\n";
  std::string nodes = "node0 0-1 250344\nnode1 2-3 257660\n";
  EXPECT_EQ(numa_layout_mismatch({"0-1", "2-3"}, &online, &nodes), "");
  EXPECT_EQ(numa_layout_mismatch({}, nullptr, nullptr), "");
  EXPECT_EQ(numa_layout_mismatch({"0-2", "3"}, &online, &nodes),
            "NUMA: node0 has CPUs '0-1', wanted '0-2'");
  std::string one = "0\n";
  EXPECT_THAT(numa_layout_mismatch({"0-1", "2-3"}, &one, &nodes),
              HasSubstr("nodes '0' online, wanted '0-1'"));
  EXPECT_THAT(numa_layout_mismatch({"0-1", "2-3"}, nullptr, nullptr),
              HasSubstr("without CONFIG_NUMA"));
  std::string three = "0-2\n";
  EXPECT_THAT(numa_layout_mismatch({"0-1", "2-3", "4"}, &three, &nodes),
              HasSubstr("node2 has CPUs '(absent)'"));
}

}  // namespace
}  // namespace isolab
