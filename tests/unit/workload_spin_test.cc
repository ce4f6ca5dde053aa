// vmstat-overhead's spin mode through parse_workload(): the premise check on the real records
// of 6.1 guests (tests/data/guest/README.md): the step
// is valid when the tick stopped between the events, and invalid, with the reason, when it did
// not or when the trace cannot show it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "base/files.h"
#include "parse/vmstat_overhead.h"
#include "workload/step.h"
#include "workload/workload.h"

namespace isolab {
namespace {

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/guest/" + name);
}

WorkloadSpec spin_workload() {
  WorkloadSpec w;
  w.name = "spin";
  w.tool = "vmstat-overhead";
  w.mode = "spin";
  w.cpus = "2";
  w.duration_s = 10;
  w.event = "fault+cputimer";
  return w;
}

// The records a spin step sends (guest/init_script.cc), from one real boot.
ChannelContents records(const std::string& stdout_file, const std::string& trace_file,
                        const std::string& window) {
  ChannelContents ch;
  ch.records.push_back({"trace_events", 0,
                        "irq_vectors:local_timer_entry\ntimer:tick_stop\n"
                        "workqueue:workqueue_execute_start\n",
                        false});
  ch.records.push_back({"spin.stdout", 0, data(stdout_file), false});
  ch.records.push_back({"spin.trace", 0, data(trace_file), false});
  ch.records.push_back({"spin.window", 0, window, false});
  return ch;
}

TEST(WorkloadSpin, RealVanillaStepIsValidAndCountsVmstatUpdate) {
  const WorkloadOutcome o = parse_workload(
      spin_workload(),
      records("spin-vanilla-6.1.stdout", "trace-spin-vanilla-6.1.txt", "9.38 19.59\n"));
  EXPECT_FALSE(o.failed) << o.failure;
  EXPECT_EQ(o.invalid, "");
  const Metric& m = o.metrics.at("spin.noise.vmstat_update_per_s");
  EXPECT_EQ(m.per_cpu->cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(m.per_cpu->counts, (std::vector<long long>{10, 0}));
  EXPECT_THAT(o.notes, ::testing::Contains(
                           "spin: 99 events (fault+cputimer, 0 late) on CPU 2; the tick came back "
                           "after 98 and stopped again after 98 of 98; running when the next "
                           "event came in 0"));
}

TEST(WorkloadSpin, RealStepWhoseTickNeverStoppedIsInvalid) {
  WorkloadSpec w = spin_workload();
  w.rate_hz = 250;
  // The trace keeps the first 100 of 1246 events: the markers no longer match the tool's count,
  // so the tool's line is cut to what the trace holds (the premise is the subject here).
  std::string out = data("spin-250hz-vanilla-6.1.stdout");
  const std::size_t at = out.find("\"marked_events\":1246");
  ASSERT_NE(at, std::string::npos) << out;
  out.replace(at, 20, "\"marked_events\":100");
  ChannelContents ch =
      records("spin-250hz-vanilla-6.1.stdout", "trace-spin-250hz-vanilla-6.1.txt", "8.46 13.69\n");
  ch.records[1].data = out;
  const WorkloadOutcome o = parse_workload(w, ch);
  EXPECT_EQ(o.invalid,
            "premise failed: the tick of CPU 2 was running when the next event came in 90 of 99 "
            "intervals (allowed: 9); kept on by POSIX_TIMER x168, SCHED x2");
  EXPECT_TRUE(o.metrics.count("spin.noise.local_timer_per_s"));  // measured all the same
}

TEST(WorkloadSpin, TraceThatCannotShowThePremiseMakesTheStepInvalid) {
  const ChannelContents good =
      records("spin-vanilla-6.1.stdout", "trace-spin-vanilla-6.1.txt", "9.38 19.59\n");
  auto invalid_with = [&](ChannelContents ch) {
    return parse_workload(spin_workload(), ch).invalid;
  };

  ChannelContents no_trace = good;
  no_trace.records.erase(no_trace.records.begin() + 2);
  EXPECT_EQ(invalid_with(no_trace),
            "premise failed: no trace of the step: the tick between the events cannot be "
            "checked");

  ChannelContents fewer = good;  // a marker lost: the trace and the tool disagree
  const std::size_t at = fewer.records[2].data.find("isolab-spin event 50\n");
  ASSERT_NE(at, std::string::npos);
  fewer.records[2].data.replace(at, 21, "isolab-spin event X\n");
  EXPECT_EQ(invalid_with(fewer),
            "premise failed: the trace holds 99 event markers of CPU 2 (out of order), the tool "
            "wrote 99");

  ChannelContents lost = good;
  lost.records[2].data += "CPU:2 [LOST 7 EVENTS]\n";
  EXPECT_EQ(invalid_with(lost), "premise failed: the trace lost events: its counts are partial");

  ChannelContents unmarked = good;  // no tracefs in the guest
  std::string& out = unmarked.records[1].data;
  out.replace(out.find("\"trace_marker\":true"), 19, "\"trace_marker\":false");
  EXPECT_EQ(invalid_with(unmarked),
            "premise failed: the tool could not write trace markers (no tracefs?)");

  ChannelContents no_tick_back =  // a real trace whose events left the tick stopped
      records("spin-fault-vanilla-6.1.stdout", "trace-spin-fault-vanilla-6.1.txt", "10.27 26.25\n");
  std::string& f = no_tick_back.records[1].data;
  f.replace(f.find("\"event\":\"fault\""), 15, "\"event\":\"fault+cputimer\"");
  EXPECT_EQ(parse_workload(spin_workload(), no_tick_back).invalid,
            "premise failed: the CPU timer brought the tick of CPU 2 back after 0 of 149 events "
            "(needed: 74)");
  no_tick_back.records[1].data = data("spin-fault-vanilla-6.1.stdout");  // as it ran: valid
  EXPECT_EQ(parse_workload(spin_workload(), no_tick_back).invalid, "");

  ChannelContents unpinned = good;
  std::string& u = unpinned.records[1].data;
  u.replace(u.find("\"pinned\":true"), 13, "\"pinned\":false");
  EXPECT_EQ(invalid_with(unpinned), "premise failed: the tool was not pinned to a CPU");
}

TEST(WorkloadSpin, TwoSpinningTasksAreReadLineByLine) {
  const auto runs = parse_vmstat_spin_lines(data("spin-two-cpus-6.1.stdout"));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].cpu, 2);
  EXPECT_EQ(runs[1].cpu, 3);
  EXPECT_EQ(runs[0].events, 299);
  EXPECT_EQ(runs[0].cpu_timer_fired, 298);
  EXPECT_DOUBLE_EQ(runs[1].elapsed_s, 30.00570616);
  const std::string line = data("spin-vanilla-6.1.stdout");
  EXPECT_THROW(parse_vmstat_spin_lines(line + line), Error);  // the same CPU twice
  EXPECT_THROW(parse_vmstat_spin_lines("spin: no output\n"), Error);
}

}  // namespace
}  // namespace isolab
