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

// The "pmu" object (guest PMU counts): parsed when present, an unavailable one keeps its
// reason, and a malformed one is unavailable with what was wrong, never an exception.
std::string with_pmu(const std::string& pmu) {
  return R"({"tool":"vmstat-overhead","version":1,"mode":"syscall","cpu":1,"pinned":true,)"
         R"("iterations":2,"warmup":0,"counter":"tsc","total":10,"per_iteration":5,)"
         R"("per_syscall":2.5,"min":4,"max":6,"marked_regions":2)" +
         pmu + "}";
}

TEST(VmstatOverhead, PmuObjectAvailable) {
  const auto r = parse_vmstat_overhead(
      with_pmu(R"(,"pmu":{"available":true,"method":"read","regions":2,"unscheduled_regions":0,)"
               R"("insns_median":5000,"kernel_insns_median":4200,"insns_mean":6000.5,)"
               R"("kernel_insns_mean":5100,"empty_regions":1000,"empty_insns_median":1000,)"
               R"("empty_kernel_insns_median":800})"));
  ASSERT_TRUE(r.pmu);
  EXPECT_TRUE(r.pmu->available);
  EXPECT_EQ(r.pmu->regions, 2);
  EXPECT_DOUBLE_EQ(r.pmu->insns_median, 5000);
  EXPECT_DOUBLE_EQ(r.pmu->kernel_insns_median, 4200);
  EXPECT_DOUBLE_EQ(r.pmu->insns_mean, 6000.5);
  EXPECT_DOUBLE_EQ(r.pmu->empty_kernel_insns_median, 800);
  EXPECT_EQ(r.pmu->empty_regions, 1000);
  // Without the object there is none; the cycles do not depend on it.
  EXPECT_FALSE(parse_vmstat_overhead(with_pmu("")).pmu);
}

TEST(VmstatOverhead, PmuObjectUnavailableKeepsTheReason) {
  const auto r = parse_vmstat_overhead(with_pmu(
      R"(,"pmu":{"available":false,"reason":"perf_event_open: No such file or directory"})"));
  ASSERT_TRUE(r.pmu);
  EXPECT_FALSE(r.pmu->available);
  EXPECT_EQ(r.pmu->reason, "perf_event_open: No such file or directory");
}

TEST(VmstatOverhead, PmuObjectMalformedIsUnavailableNotAnError) {
  const std::string good =
      R"(,"pmu":{"available":true,"regions":2,"unscheduled_regions":0,"insns_median":50,)"
      R"("kernel_insns_median":42,"insns_mean":60,"kernel_insns_mean":51,"empty_regions":9,)"
      R"("empty_insns_median":10,"empty_kernel_insns_median":8})";
  ASSERT_TRUE(parse_vmstat_overhead(with_pmu(good)).pmu->available);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  for (const auto& [pmu, why] : std::vector<std::pair<std::string, std::string>>{
           {R"(,"pmu":null)", "not an object"},
           {R"(,"pmu":[1])", "not an object"},
           {R"(,"pmu":{})", "\"available\""},
           {with("true", "1"), "\"available\""},
           {with("\"insns_median\":50", "\"insns_median\":-50"), "\"insns_median\""},
           {with("\"insns_median\":50", "\"insns_median\":\"50\""), "\"insns_median\""},
           {with("\"regions\":2", "\"regions\":1e300"), "\"regions\""},
           {with("\"regions\":2,", ""), "\"regions\""},
           {with("\"regions\":2", "\"regions\":0"), "no region counted"},
           {with("\"kernel_insns_median\":42", "\"kernel_insns_median\":51"), "kernel median"},
       }) {
    VmstatOverheadResult r;
    ASSERT_NO_THROW(r = parse_vmstat_overhead(with_pmu(pmu))) << pmu;
    ASSERT_TRUE(r.pmu) << pmu;
    EXPECT_FALSE(r.pmu->available) << pmu;
    EXPECT_THAT(r.pmu->reason, testing::HasSubstr("malformed pmu object: ")) << pmu;
    EXPECT_THAT(r.pmu->reason, testing::HasSubstr(why)) << pmu;
  }
  // An unavailable object's reason is the guest's text: control bytes are not kept, and a
  // missing reason is said.
  const auto r = parse_vmstat_overhead(
      with_pmu(R"(,"pmu":{"available":false,"reason":"a\u001b[31m\u0000b"})"));
  EXPECT_EQ(r.pmu->reason.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.pmu->reason.find('\0'), std::string::npos);
  EXPECT_EQ(parse_vmstat_overhead(with_pmu(R"(,"pmu":{"available":false})")).pmu->reason,
            "the tool gave no reason");
}

}  // namespace
}  // namespace isolab
