// vmstat-overhead output parser against captures of guest-tools/vmstat-overhead.c run on the
// build host (tests/data/vmstat-overhead/host-*).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "base/files.h"
#include "parse/vmstat_overhead.h"

namespace isolab {
namespace {

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/vmstat-overhead/" + name);
}

TEST(VmstatOverhead, RealSyscallRun) {
  auto r = parse_vmstat_overhead(data("host-syscall-cpu1.json"));
  EXPECT_EQ(r.mode, "syscall");
  EXPECT_EQ(r.cpu, 1);
  EXPECT_TRUE(r.pinned);
  EXPECT_EQ(r.iterations, 30000);
  EXPECT_EQ(r.warmup, 1000);
  EXPECT_EQ(r.counter, "tsc");
  EXPECT_DOUBLE_EQ(r.total, 489220882);
  EXPECT_DOUBLE_EQ(r.per_iteration, 16307.363);
  EXPECT_DOUBLE_EQ(*r.per_syscall, 8153.681);
  EXPECT_DOUBLE_EQ(r.min, 5010);
  auto m = vmstat_overhead_metrics(r);
  ASSERT_EQ(m.size(), 1u);
  const Metric& c = m.at("cycles_per_syscall");
  EXPECT_EQ(c.unit, "cycles");
  EXPECT_TRUE(c.lower_is_better);
  EXPECT_EQ(c.aggregate, "mean");
  EXPECT_EQ(c.values, std::vector<double>{8153.681});
}

TEST(VmstatOverhead, RealIdleAndNsRuns) {
  auto idle = parse_vmstat_overhead(data("host-idle-cpu1.json"));
  EXPECT_EQ(idle.mode, "idle");
  EXPECT_EQ(idle.sleep_us, 10);
  EXPECT_FALSE(idle.per_syscall.has_value());
  EXPECT_EQ(vmstat_overhead_metrics(idle).at("cycles_per_idle_loop").values,
            std::vector<double>{239492.652});
  auto ns = parse_vmstat_overhead(data("host-syscall-ns.json"));
  EXPECT_FALSE(ns.pinned);
  EXPECT_EQ(ns.cpu, 0);
  EXPECT_EQ(vmstat_overhead_metrics(ns).at("cycles_per_syscall").unit, "ns");
}

TEST(VmstatOverhead, NoiseAroundTheJsonLineIsIgnored) {
  auto r = parse_vmstat_overhead(
      "+ vmstat-overhead syscall\r\n"
      "{\"tool\":\"vmstat-overhead\",\"version\":1,\"mode\":\"syscall\",\"cpu\":null,\"pinned\":"
      "false,"
      "\"iterations\":2,\"warmup\":0,\"counter\":\"tsc\",\"total\":10,\"per_iteration\":5.000,"
      "\"per_syscall\":2.500,\"min\":4,\"max\":6}\r\n");
  EXPECT_FALSE(r.cpu.has_value());
  EXPECT_DOUBLE_EQ(*r.per_syscall, 2.5);
}

TEST(VmstatOverhead, ErrorsNameTheField) {
  const std::string good =
      R"({"tool":"vmstat-overhead","version":1,"mode":"idle","cpu":1,"pinned":true,"iterations":2,)"
      R"("warmup":0,"counter":"tsc","total":10,"per_iteration":5,"sleep_us":10,"min":4,"max":6})";
  EXPECT_NO_THROW(parse_vmstat_overhead(good));
  auto expect_error = [](std::string text, const char* what) {
    try {
      parse_vmstat_overhead(text);
      ADD_FAILURE() << "no error for " << text;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), testing::HasSubstr(what)) << text;
    }
  };
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  expect_error(data("host-bad-mode.stderr.txt"), "no JSON line");
  expect_error(with("\"vmstat-overhead\"", "\"other\""), "tool");
  expect_error(with("\"version\":1", "\"version\":2"), "version");
  expect_error(with("\"mode\":\"idle\"", "\"mode\":\"busy\""), "mode");
  expect_error(with("\"total\":10", "\"total\":\"10\""), "\"total\"");
  expect_error(with("\"min\":4", "\"min\":-4"), "\"min\"");
  expect_error(with("\"per_iteration\":5", "\"per_iteration\":9"), "per_iteration");
  expect_error(with("\"iterations\":2", "\"iterations\":0"), "iterations");
  expect_error(with("\"max\":6}", "\"max\":nan}"), "not valid JSON");
  expect_error(std::string("{\x01\xff", 3), "not valid JSON");
}

}  // namespace
}  // namespace isolab
