// vmstat-overhead's spin mode in a spec: its fields, their errors (by JSON pointer), and the
// guest step it becomes (one spinning task per CPU of the workload, all at once).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cmdline/cpulist.h"
#include "spec/spec.h"
#include "workload/step.h"
#include "workload/workload.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

TEST(SpecSpin, FieldsErrorsAndGuestStep) {
  auto parse = [](const std::string& w) {
    return parse_spec(nlohmann::json::parse(R"({"name":"s","variants":[{"name":"a"}],
      "guest":{"cmdline":"nohz_full=2-3 isolcpus=2-3","vcpus":4},"workloads":[)" +
                                            w + "]}"),
                      ISOLAB_SOURCE_DIR);
  };
  const Spec s = parse(
      R"({"name":"spin","tool":"vmstat-overhead","mode":"spin","cpus":"2-3","duration_s":20,
          "rate_hz":5,"event":"fault"})");
  EXPECT_EQ(s.workloads[0].rate_hz, 5);
  EXPECT_EQ(s.workloads[0].event, "fault");
  auto error = [&](const std::string& w) {
    try {
      parse(w);
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_THAT(error(R"({"name":"s","tool":"vmstat-overhead","mode":"spin","event":"fork"})"),
              HasSubstr("/workloads/0/event: expected fault, fault+cputimer, cputimer+fault or "
                        "fault+mlock"));
  EXPECT_THAT(error(R"({"name":"s","tool":"vmstat-overhead","mode":"spin"})"),
              HasSubstr("/workloads/0/duration_s: spin mode needs duration_s >= 1"));
  EXPECT_THAT(error(R"({"name":"s","tool":"vmstat-overhead","mode":"spin","duration_s":5,
                        "iterations":3})"),
              HasSubstr("/workloads/0/iterations: spin mode does not take this field"));
  EXPECT_THAT(error(R"({"name":"s","tool":"vmstat-overhead","mode":"idle","rate_hz":3})"),
              HasSubstr("/workloads/0/rate_hz: only spin mode takes this field"));
  EXPECT_THAT(error(R"({"name":"s","tool":"cyclictest","event":"fault"})"),
              HasSubstr("/workloads/0/event: only a vmstat-overhead workload takes this field"));

  CpuPartition p;
  p.all = parse_cpulist("0-3", 4);
  p.isolated = parse_cpulist("2-3", 4);
  p.housekeeping = parse_cpulist("0-1", 4);
  const GuestStep g = guest_step(s.workloads[0], p, TimeoutSpec{}, true);
  EXPECT_EQ(g.script,
            "pids=\n"
            "'vmstat-overhead' 'spin' '--cpu' '2' '--duration-s' '20' '--rate-hz' '5' '--event' "
            "'fault' &\npids=\"$pids $!\"\n"
            "'vmstat-overhead' 'spin' '--cpu' '3' '--duration-s' '20' '--rate-hz' '5' '--event' "
            "'fault' &\npids=\"$pids $!\"\n"
            "rc=0\nfor p in $pids; do wait $p || rc=$?; done\nexit $rc\n");
  EXPECT_EQ(g.timeout_s, 20 + 1 + TimeoutSpec{}.workload_margin_s);
  EXPECT_EQ(g.trace_cpus, "2-3");
}

}  // namespace
}  // namespace isolab
