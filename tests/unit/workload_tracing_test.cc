// The cyclictest step with latency_tracer / count_calls and a madvise-pressure load: the order
// of the tracefs writes in the guest script, and how the step's records become metrics or a
// failure with its reason (never a silent zero). Records here are built in the test: the
// parsers of the real outputs are tested with captured data elsewhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/files.h"
#include "workload/step.h"
#include "workload/workload.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

CpuPartition partition() {
  CpuPartition p;
  p.all = CpuSet::all(4);
  p.isolated = CpuSet::of(4, {2, 3});
  p.housekeeping = CpuSet::of(4, {0, 1});
  return p;
}

WorkloadSpec traced() {
  WorkloadSpec w;
  w.name = "shared";
  w.tool = "cyclictest";
  w.cpus = "housekeeping";
  w.duration_s = 3;
  w.latency_tracer = "wakeup_rt";
  w.count_calls = {"madvise_cold_or_pageout_pte_range"};
  WorkloadSpec l;
  l.name = "load";
  l.tool = "madvise-pressure";
  l.cpus = "housekeeping";
  l.extra_args = {"--mib", "16"};
  w.load = std::vector<WorkloadSpec>{l};
  return w;
}

std::size_t at(const std::string& s, const std::string& what) {
  std::size_t p = s.find(what);
  EXPECT_NE(p, std::string::npos) << what << " not in\n" << s;
  return p;
}

TEST(WorkloadTracing, ScriptArmsBeforeTheLoadAndResetsTheMaxJustBeforeCyclictest) {
  GuestStep s = guest_step(traced(), partition(), TimeoutSpec{}, true);
  EXPECT_EQ(s.trace_cpus, "");  // the latency tracer replaces the noise trace for this step
  const std::string& sc = s.script;
  EXPECT_LT(at(sc, "function_profile_enabled"), at(sc, "> $T/current_tracer"));
  EXPECT_LT(at(sc, "echo wakeup_rt > $T/current_tracer"), at(sc, "'madvise-pressure'"));
  EXPECT_LT(at(sc, "'madvise-pressure'"), at(sc, "echo 0 > $T/tracing_max_latency"));
  EXPECT_LT(at(sc, "echo 0 > $T/tracing_max_latency"), at(sc, "'cyclictest'"));
  EXPECT_LT(at(sc, "'cyclictest'"), at(sc, "cat $T/tracing_max_latency"));
  EXPECT_LT(at(sc, "cat $T/tracing_max_latency"), at(sc, "echo nop > $T/current_tracer"));
  // The lock contention stack traces stay out of the latency tracer's buffer: the trigger is
  // removed before the tracer is set, and set again (with its event filter) after the reset.
  EXPECT_LT(at(sc, "echo '!stacktrace' > "), at(sc, "echo 'common_pid < 0'"));
  EXPECT_LT(at(sc, "for f in $T/events/*/filter; do echo 0 > $f"),
            at(sc, "echo 'stacktrace if flags == 1 || flags == 8'"));
  EXPECT_THAT(sc, HasSubstr("'taskset' '-c' '0-1' 'madvise-pressure' '--duration-s' '5' "
                            "'--mib' '16'"));
}

ChannelContents records(const std::string& max_latency, const std::string& calls,
                        const std::string& tracing_err = "") {
  ChannelContents c;
  c.records.push_back({"shared.stdout", 0, "", false});
  c.records.push_back({"shared.stderr", 0, "", false});
  c.records.push_back(
      {"shared.json", 0,
       read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/cyclictest/host-2t-hist.json"), false});
  c.records.push_back({"shared.load.json", 0,
                       "{\"tool\":\"madvise-pressure\",\"version\":1,\"advice\":\"pageout\","
                       "\"procs\":2,\"mib\":16,\"calls\":40,\"failed_calls\":0,"
                       "\"max_call_us\":900.5,\"mean_call_us\":300.0,\"elapsed_s\":5.0}\n",
                       false});
  c.records.push_back({"shared.tracing_err", 0, tracing_err, false});
  c.records.push_back({"shared.wakeup_rt.max_latency", 0, max_latency, false});
  c.records.push_back({"shared.wakeup_rt.trace", 0, "# tracer: wakeup_rt\n", false});
  c.records.push_back({"shared.calls", 0, calls, false});
  return c;
}

const char* kProfile =
    "  Function                               Hit\n"
    "  --------                               ---\n"
    "  madvise_cold_or_pageout_pte_ra        120\n"
    "  Function                               Hit\n"
    "  --------                               ---\n"
    "  madvise_cold_or_pageout_pte_ra         80\n";

TEST(WorkloadTracing, RecordsBecomeMetrics) {
  WorkloadOutcome o = parse_workload(traced(), records("1969\n", kProfile));
  ASSERT_FALSE(o.failed) << o.failure;
  EXPECT_EQ(o.metrics.at("shared.wakeup_rt.max_latency_us").values, std::vector<double>{1969});
  EXPECT_EQ(o.metrics.at("shared.wakeup_rt.max_latency_us").unit, "us");
  // Cut to 30 characters by the profiler, summed over the per-CPU files.
  EXPECT_EQ(o.metrics.at("shared.calls.madvise_cold_or_pageout_pte_range").values,
            std::vector<double>{200});
  EXPECT_EQ(o.metrics.at("shared.load.madvise_calls").values, std::vector<double>{40});
  EXPECT_EQ(o.latency_trace["max_latency_us"], 1969);
}

// [w3]: on v6.11-v6.12 before the fix the profiler ignores set_ftrace_filter and lists every
// function (the case's rows: schedule, x64_sys_call): the count asked for is still read, but the
// cell is invalid, naming the first function outside the filter.
TEST(WorkloadTracing, ProfileRowsOutsideTheFilterMakeTheCellInvalid) {
  const std::string unfiltered = std::string(kProfile) +
                                 "  schedule                              838\n"
                                 "  x64_sys_call                          512\n";
  WorkloadOutcome o = parse_workload(traced(), records("1969\n", unfiltered));
  ASSERT_FALSE(o.failed) << o.failure;
  EXPECT_EQ(o.metrics.at("shared.calls.madvise_cold_or_pageout_pte_range").values,
            std::vector<double>{200});
  EXPECT_EQ(o.invalid,
            "the function profile lists 2 function(s) outside set_ftrace_filter (first: "
            "schedule): this kernel ignored the filter and traced every function while the "
            "latency was measured");
  EXPECT_EQ(parse_workload(traced(), records("1969\n", kProfile)).invalid, "");
}

TEST(WorkloadTracing, MissingOrBrokenTracingFailsWithItsReason) {
  WorkloadOutcome o = parse_workload(traced(), records("", kProfile));
  EXPECT_TRUE(o.failed);
  EXPECT_THAT(o.failure, HasSubstr("tracing_max_latency"));
  o = parse_workload(traced(), records("12x", kProfile));
  EXPECT_TRUE(o.failed);
  EXPECT_THAT(o.failure, HasSubstr("not a latency"));
  o = parse_workload(traced(), records("10", ""));
  EXPECT_TRUE(o.failed);
  EXPECT_THAT(o.failure, HasSubstr("no function profile"));
  o = parse_workload(traced(), records("10", kProfile, "sh: write error: No such device\n"));
  EXPECT_TRUE(o.failed);
  EXPECT_THAT(o.failure, HasSubstr("kernel tracing set-up failed"));
}

}  // namespace
}  // namespace isolab
