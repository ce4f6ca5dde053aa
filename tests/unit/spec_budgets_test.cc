// A spec's `budgets` (spec/budgets.h): each form of metric read with its kind and unit, and every
// bad field refused naming its JSON pointer and, for a metric, the list of metrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "spec/spec.h"

namespace isolab {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// An oslat and a cyclictest workload on the isolated CPUs 2-3, and `budgets`.
json spec_with(const json& budgets) {
  json d = json::parse(R"({
    "name": "t",
    "variants": [{"name": "a"}],
    "guest": {"cmdline": "isolcpus=2-3 nohz_full=2-3", "vcpus": 4},
    "workloads": [{"name": "noise", "tool": "oslat"},
                  {"name": "wakeup", "tool": "cyclictest", "histogram_us": 100}]
  })");
  d["budgets"] = budgets;
  return d;
}

std::string refusal(const json& budgets) {
  try {
    parse_spec(spec_with(budgets), ISOLAB_SOURCE_DIR);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SpecBudgets, EachFormOfMetric) {
  const Spec s = parse_spec(spec_with(json::parse(R"([
        {"workload": "noise", "metric": "oslat_max_us", "below": 20, "min_runtime_s": 60},
        {"workload": "wakeup", "metric": "p99.999", "below": 30, "cpus": "3"},
        {"metric": "vmstat_update_per_s", "below": 0.1}])")),
                            ISOLAB_SOURCE_DIR);
  ASSERT_EQ(s.budgets.size(), 3u);
  EXPECT_EQ(s.budgets[0].cell_metric, "oslat_max_us");
  EXPECT_EQ(s.budgets[0].kind, BudgetKind::timing);
  EXPECT_EQ(s.budgets[0].unit, "us");
  EXPECT_EQ(s.budgets[0].min_runtime_s, 60);
  EXPECT_EQ(s.budgets[1].percentile, 99.999);
  EXPECT_EQ(s.budgets[1].cpus, "3");
  EXPECT_EQ(s.budgets[1].pointer, "/budgets/1");
  EXPECT_EQ(s.budgets[2].cell_metric, "noise.vmstat_update_per_s");
  EXPECT_EQ(s.budgets[2].kind, BudgetKind::count);
  EXPECT_EQ(s.budgets[2].unit, "1/s");
  EXPECT_TRUE(s.budgets[2].workload.empty());
  EXPECT_EQ(budget_text(s.budgets[0]),
            "oslat_max_us < 20 us on the isolated CPUs of noise, when the step ran at least 60 s "
            "(timing: enforced on KVM and real machines, reported under TCG)");
  EXPECT_EQ(budget_text(s.budgets[1]),
            "p99.999 < 30 us on CPUs 3 of wakeup (timing: enforced on KVM and real machines, "
            "reported under TCG)");
  EXPECT_EQ(budget_text(s.budgets[2]),
            "vmstat_update_per_s < 0.1 /s on the isolated CPUs of every workload that gives it "
            "(count: enforced everywhere)");
}

TEST(SpecBudgets, UnknownMetricNamesThePointerAndTheList) {
  const std::string e = refusal(json::parse(R"([{"metric": "oslat_max_us", "below": 20},
                                                 {"metric": "oslat_p99", "below": 20}])"));
  EXPECT_THAT(e, StartsWith("/budgets/1/metric: unknown metric \"oslat_p99\"; one of "));
  EXPECT_THAT(e, HasSubstr("vmstat_update_per_s"));
  EXPECT_THAT(e, HasSubstr("p<P>"));
}

TEST(SpecBudgets, BadFieldsNameTheirPointer) {
  EXPECT_THAT(refusal(json::object()), StartsWith("/budgets: expected an array"));
  EXPECT_THAT(refusal(json::parse(R"([{"below": 1}])")), StartsWith("/budgets/0/metric: missing"));
  EXPECT_THAT(refusal(json::parse(R"([{"metric": "p100", "below": 1}])")),
              StartsWith("/budgets/0/metric: percentile \"p100\""));
  EXPECT_THAT(refusal(json::parse(R"([{"metric": "p99.9.9", "below": 1}])")),
              StartsWith("/budgets/0/metric: percentile \"p99.9.9\""));
  EXPECT_THAT(refusal(json::parse(R"([{"metric": "oslat_max_us"}])")),
              StartsWith("/budgets/0/below: missing"));
  EXPECT_THAT(refusal(json::parse(R"([{"metric": "oslat_max_us", "below": 0}])")),
              StartsWith("/budgets/0/below: expected a finite number > 0, got 0"));
  EXPECT_THAT(refusal(json::parse(R"([{"metric": "oslat_max_us", "below": "20"}])")),
              StartsWith("/budgets/0/below: expected a finite number > 0"));
  EXPECT_THAT(refusal(json::parse(R"([{"metric": "oslat_max_us", "below": 20, "cpus": "2-x"}])")),
              AllOf(StartsWith("/budgets/0/cpus: "), HasSubstr("'2-x'")));
  EXPECT_THAT(
      refusal(json::parse(R"([{"metric": "oslat_max_us", "below": 20, "min_runtime_s": -1}])")),
      StartsWith("/budgets/0/min_runtime_s: expected a finite number >= 0"));
  EXPECT_THAT(refusal(json::parse(R"([{"metric": "oslat_max_us", "below": 20, "max": 1}])")),
              StartsWith("/budgets/0/max: unknown field"));
}

TEST(SpecBudgets, TheWorkloadMustExistAndGiveTheMetric) {
  EXPECT_THAT(refusal(json::parse(R"([{"workload": "nope", "metric": "p99", "below": 9}])")),
              StartsWith("/budgets/0/workload: no workload named 'nope'"));
  EXPECT_THAT(
      refusal(json::parse(R"([{"workload": "wakeup", "metric": "oslat_max_us", "below": 9}])")),
      StartsWith("/budgets/0/metric: \"oslat_max_us\" is no metric of workload wakeup"));
  EXPECT_EQ(refusal(json::parse(R"([{"workload": "wakeup", "metric": "latency_max_us",
                                     "below": 9}])")),
            "(no error)");
}

}  // namespace
}  // namespace isolab
