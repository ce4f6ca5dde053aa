// Per-step noise evidence: step window, /proc/interrupts cross-check, and the records of a step
// going through parse_workload() into metrics, details and notes.
#include <gtest/gtest.h>

#include <cmath>

#include "base/files.h"
#include "workload/noise.h"
#include "workload/step.h"
#include "workload/workload.h"

namespace isolab {
namespace {

std::string data(const std::string& rel) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/" + rel);
}

bool has_note(const std::vector<std::string>& notes, const std::string& part) {
  for (const auto& n : notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

std::string ticks(int cpu, int n, double t0 = 16.0) {
  std::string out;
  char buf[160];
  for (int i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "  <idle>-0 [%03d] d.h1. %.6f: local_timer_entry: vector=236\n",
                  cpu, t0 + 0.01 * i);
    out += buf;
  }
  return out;
}

std::string interrupts(unsigned loc5, unsigned res5, unsigned cal5) {
  return "           CPU0       CPU5\n"
         "LOC:       1000 " +
         std::to_string(loc5) +
         "   Local timer interrupts\n"
         "RES:          1 " +
         std::to_string(res5) +
         "   Rescheduling interrupts\n"
         "CAL:          1 " +
         std::to_string(cal5) + "   Function call interrupts\nERR:          0\n";
}

TEST(StepWindow, ParsesUptimePairs) {
  std::string problem;
  EXPECT_NEAR(*parse_step_window("15.30 20.31\n", problem), 5.01, 1e-9);
  EXPECT_NEAR(*parse_step_window("  0.00\t3.5  ", problem), 3.5, 1e-9);
  for (const char* bad : {"", "15.30", "a b", "15.30 20.31 7", "nan 3", "-1 3", "1e999 2"}) {
    problem.clear();
    EXPECT_FALSE(parse_step_window(bad, problem).has_value()) << bad;
    EXPECT_NE(problem.find("expected '<start> <end>'"), std::string::npos) << problem;
  }
  EXPECT_FALSE(parse_step_window("20.31 15.30", problem).has_value());
  EXPECT_EQ(problem, "the step ends (15.30) no later than it starts (20.31)");
  EXPECT_FALSE(parse_step_window("20.31 20.31", problem).has_value());
}

TEST(InterruptCounters, DeltaAllowsOneWrapOfUnsignedInt) {
  EXPECT_EQ(counter_delta(839, 841), 2u);
  EXPECT_EQ(counter_delta(4294967290u, 5), 11u);
  EXPECT_EQ(counter_delta(uint64_t{5} << 32, 3), std::nullopt);
  EXPECT_EQ(cross_check_tolerance(12, 3), 2u);
  EXPECT_EQ(cross_check_tolerance(0, 100), 7u);
  EXPECT_EQ(cross_check_tolerance(1000, 990), 52u);
}

TEST(InterruptCrossCheck, DisagreementIsANote) {
  TraceCounts t = parse_trace("# cpu 5\n" + ticks(5, 3));
  TraceNoise n = trace_noise(t, {5}, 5.0);
  std::vector<std::string> notes;
  cross_check_interrupts(t, {5}, parse_proc_interrupts(interrupts(100, 4, 9)),
                         parse_proc_interrupts(interrupts(112, 4, 9)), n.details, notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "trace and /proc/interrupts disagree on CPU 5: LOC +12, local_timer_entry 3");
  const auto& loc = n.details["cpus"][0]["interrupts"]["LOC"];
  EXPECT_EQ(loc["delta"], 12);
  EXPECT_EQ(loc["trace"], 3);
  EXPECT_EQ(loc["tolerance"], 2);
  EXPECT_EQ(loc["agree"], false);
  EXPECT_EQ(n.details["cpus"][0]["interrupts"]["RES"]["agree"], true);
  EXPECT_TRUE(n.details["interrupts_unchecked"].empty());

  // Within the tolerance (2 events at the window edges): no note.
  notes.clear();
  cross_check_interrupts(t, {5}, parse_proc_interrupts(interrupts(100, 4, 9)),
                         parse_proc_interrupts(interrupts(105, 4, 9)), n.details, notes);
  EXPECT_TRUE(notes.empty());
}

TEST(InterruptCrossCheck, LostEventsMakeALowTraceCountExpected) {
  TraceCounts t = parse_trace("# cpu 5\nCPU:5 [LOST 40 EVENTS]\n" + ticks(5, 3));
  TraceNoise n = trace_noise(t, {5}, 5.0);
  std::vector<std::string> notes;
  cross_check_interrupts(t, {5}, parse_proc_interrupts(interrupts(100, 4, 9)),
                         parse_proc_interrupts(interrupts(150, 4, 9)), n.details, notes);
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(n.details["cpus"][0]["interrupts"]["LOC"]["agree"], false);
  EXPECT_TRUE(has_note(n.notes, "ring buffer overflowed"));
}

// Real /proc/interrupts around a 3 s busy loop pinned on each of CPUs 5-7 (6.1 guest, TCG):
// LOC +2/+2/+2, RES +3/+3/+3, CAL +0/+0/+0. A trace with the same counts agrees.
TEST(InterruptCrossCheck, RealSnapshotsAgreeWithAMatchingTrace) {
  std::string text = "# cpu 5\n# cpu 6\n# cpu 7\n";
  for (int cpu : {5, 6, 7}) {
    text += ticks(cpu, 2);
    for (int i = 0; i < 3; ++i)
      text +=
          "  <idle>-0 [00" + std::to_string(cpu) + "] dnh1. 17.0: reschedule_entry: vector=253\n";
  }
  TraceCounts t = parse_trace(text);
  TraceNoise n = trace_noise(t, {5, 6, 7}, 9.0);
  std::vector<std::string> notes;
  cross_check_interrupts(
      t, {5, 6, 7}, parse_proc_interrupts(data("guest/interrupts-isolation-6.1-before.txt")),
      parse_proc_interrupts(data("guest/interrupts-isolation-6.1-after.txt")), n.details, notes);
  EXPECT_TRUE(notes.empty());
  for (int i = 0; i < 3; ++i) {
    const auto& rows = n.details["cpus"][i]["interrupts"];
    EXPECT_EQ(rows["LOC"]["delta"], 2);
    EXPECT_EQ(rows["RES"]["delta"], 3);
    EXPECT_EQ(rows["CAL"]["delta"], 0);
    EXPECT_EQ(rows["LOC"]["agree"], true);
  }
}

TEST(InterruptCrossCheck, Arm64HasNoRowsToCompare) {
  TraceCounts t = parse_trace("# cpu 1\n" + ticks(1, 2));
  TraceNoise n = trace_noise(t, {1}, 1.0);
  std::vector<std::string> notes;
  InterruptsSnapshot arm = parse_proc_interrupts(data("interrupts/arm64-ipi-no-loc.txt"));
  cross_check_interrupts(t, {1}, arm, arm, n.details, notes);
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(n.details["interrupts_unchecked"],
            nlohmann::json({"LOC on CPU 1", "RES on CPU 1", "CAL on CPU 1"}));
}

ChannelContents step_records(const std::string& window) {
  ChannelContents ch;
  ch.records.push_back({"trace_events", 0, "irq_vectors:local_timer_entry\n", false});
  ch.records.push_back({"wl.stdout", 0, "", false});
  ch.records.push_back({"wl.trace", 0,
                        "# cpu 5\n# cpu 6\n" + ticks(5, 9) +
                            "  kworker/6:1-71 [006] ..... 17.0: workqueue_execute_start: work "
                            "struct (____ptrval____): function vmstat_update\n",
                        false});
  if (!window.empty()) ch.records.push_back({"wl.window", 0, window, false});
  ch.records.push_back({"wl.interrupts_before", 0, interrupts(100, 4, 9), false});
  ch.records.push_back({"wl.interrupts_after", 0, interrupts(109, 4, 9), false});
  return ch;
}

TEST(ParseWorkloadNoise, StepRecordsBecomeMetricsDetailsAndNotes) {
  WorkloadSpec w;
  w.name = "wl";
  w.tool = "vmstat-overhead";
  WorkloadOutcome o = parse_workload(w, step_records("15.30 20.31\n"));
  ASSERT_TRUE(o.metrics.count("wl.noise.local_timer_per_s"));
  nlohmann::json j = o.metrics.at("wl.noise.local_timer_per_s");
  EXPECT_EQ(j["cpus"], nlohmann::json({5, 6}));
  EXPECT_EQ(j["counts"], nlohmann::json({9, 0}));
  EXPECT_NEAR(j["window_s"].get<double>(), 5.01, 1e-9);
  EXPECT_NEAR(j["values"][0].get<double>(), 9 / 5.01, 1e-9);
  EXPECT_EQ(o.metrics.at("wl.noise.vmstat_update_per_s").per_cpu->counts,
            (std::vector<long long>{0, 1}));
  EXPECT_EQ(o.noise["window_source"], "step");
  EXPECT_EQ(o.noise["cpus"][0]["interrupts"]["LOC"]["delta"], 9);
  EXPECT_EQ(o.noise["cpus"][0]["interrupts"]["LOC"]["agree"], true);
  EXPECT_FALSE(has_note(o.notes, "disagree"));
  EXPECT_FALSE(has_note(o.notes, "wl.window"));

  WorkloadOutcome no_window = parse_workload(w, step_records(""));
  EXPECT_TRUE(has_note(no_window.notes, "wl.window: missing"));
  EXPECT_TRUE(has_note(no_window.notes, "span of the trace timestamps"));
  EXPECT_EQ(no_window.noise["window_source"], "trace span");
  WorkloadOutcome bad_window = parse_workload(w, step_records("soon later"));
  EXPECT_TRUE(has_note(bad_window.notes, "wl.window: expected '<start> <end>'"));

  ChannelContents untraced = step_records("1 2");
  untraced.records.erase(untraced.records.begin());  // no trace_events: tracing was off
  WorkloadOutcome off = parse_workload(w, untraced);
  EXPECT_TRUE(off.noise.is_null());
  EXPECT_EQ(off.metrics.count("wl.noise.local_timer_per_s"), 0u);
  EXPECT_TRUE(has_note(off.notes, "trace events were not enabled"));
}

TEST(ParseWorkloadNoise, BadInterruptsRecordIsANote) {
  WorkloadSpec w;
  w.name = "wl";
  w.tool = "vmstat-overhead";
  ChannelContents ch = step_records("1 2");
  ch.records.push_back({"wl.interrupts_after", 0, "garbage\n", false});
  WorkloadOutcome o = parse_workload(w, ch);
  EXPECT_TRUE(has_note(o.notes, "wl.interrupts_after: /proc/interrupts line 1: expected a header"));
  EXPECT_FALSE(o.noise.contains("interrupts_unchecked"));
  EXPECT_TRUE(o.metrics.count("wl.noise.interruptions_per_s"));
}

// Lock contention from the real alloc capture, traced CPUs 2-3 of the 4, and the
// reasons for no metrics (never a 0 for a kernel that cannot tell).
ChannelContents lock_records(const std::string& set_event, const std::string& trigger) {
  ChannelContents ch;
  ch.records.push_back({"trace_events", 0, set_event, false});
  if (!trigger.empty()) ch.records.push_back({"lock_contention_trigger", 0, trigger, false});
  ch.records.push_back({"wl.stdout", 0, "", false});
  ch.records.push_back({"wl.trace", 0, "# cpu 2\n# cpu 3\n" + ticks(2, 3), false});
  ch.records.push_back({"wl.window", 0, "10 12", false});
  ch.records.push_back(
      {"wl.lock_contention", 0, data("trace/guest-6.1-tcg-lock-contention-alloc.txt"), false});
  return ch;
}

TEST(ParseWorkloadNoise, LockContentionPerIsolatedCpuAndInTotal) {
  WorkloadSpec w;
  w.name = "wl";
  w.tool = "vmstat-overhead";
  const std::string events =
      "irq_vectors:local_timer_entry\nlock:contention_begin\nlock:contention_end\n";
  const std::string trigger = "stacktrace:unlimited if flags == 1 || flags == 8\n";
  WorkloadOutcome o = parse_workload(w, lock_records(events, trigger));
  const Metric& zone = o.metrics.at("wl.noise.zone_lock_contentions_per_s");
  EXPECT_EQ(zone.per_cpu->cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(zone.per_cpu->counts, (std::vector<long long>{46, 16}));
  EXPECT_EQ(zone.per_cpu->kind, "count");
  EXPECT_NEAR(zone.values[0], 46 / 2.0, 1e-9);
  EXPECT_EQ(o.metrics.at("wl.noise.pcp_lock_contentions_per_s").per_cpu->counts,
            (std::vector<long long>{0, 0}));
  // All four CPUs (the capture has no "# cpu N" headers: the CPUs with events): 51 + 38 + 46 +
  // 16 zone-lock contentions over the 2 s window, summed per cell.
  const Metric& all = o.metrics.at("wl.noise.zone_lock_contentions_all_cpus_per_s");
  EXPECT_EQ(all.per_cpu->cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(all.per_cpu->counts, (std::vector<long long>{51, 38, 46, 16}));
  EXPECT_EQ(all.aggregate, "sum");
  EXPECT_NEAR(reduce_metric(all), 151 / 2.0, 1e-9);
  EXPECT_GT(reduce_metric(o.metrics.at("wl.noise.zone_lock_wait_us")), 0.0);
  EXPECT_GT(reduce_metric(o.metrics.at("wl.noise.zone_lock_wait_all_cpus_us")),
            reduce_metric(o.metrics.at("wl.noise.zone_lock_wait_us")));
  EXPECT_EQ(o.noise["lock_contention"]["status"], "ok");
  EXPECT_EQ(o.noise["lock_contention"]["all_cpus"]["zone"]["count"], 151);
  EXPECT_EQ(o.noise["cpus"][0]["lock_contention"]["zone"]["count"], 46);

  struct NoCase {
    std::string events, trigger, status;
  };
  for (const NoCase& c :
       {NoCase{"irq_vectors:local_timer_entry\n", trigger, "lock:contention_begin was not traced"},
        NoCase{events, "# Available triggers:\n# traceon traceoff snapshot stacktrace\n",
               "no stacktrace trigger"},
        NoCase{events, "", "no stacktrace trigger"}}) {
    WorkloadOutcome n = parse_workload(w, lock_records(c.events, c.trigger));
    EXPECT_EQ(n.metrics.count("wl.noise.zone_lock_contentions_per_s"), 0u) << c.status;
    EXPECT_EQ(n.metrics.count("wl.noise.pcp_lock_contentions_all_cpus_per_s"), 0u) << c.status;
    EXPECT_NE(n.noise["lock_contention"]["status"].get<std::string>().find(c.status),
              std::string::npos)
        << n.noise["lock_contention"].dump();
    EXPECT_TRUE(has_note(n.notes, "no lock contention metrics: " + c.status)) << c.status;
    EXPECT_TRUE(n.metrics.count("wl.noise.local_timer_per_s"));  // the rest is unaffected
  }
}

}  // namespace
}  // namespace isolab
