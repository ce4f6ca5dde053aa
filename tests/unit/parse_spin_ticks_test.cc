// The tick of a spinning CPU between its events (parse/spin_ticks.h), on real traces of
// vmstat-overhead's spin mode in 6.1 guests (tests/data/guest/README.md) and on small traces
// written in the same format.
#include <gtest/gtest.h>

#include <string>

#include "base/files.h"
#include "parse/spin_ticks.h"

namespace isolab {
namespace {

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/guest/" + name);
}

// One trace line of CPU 2 by the spinning task.
std::string line(const std::string& event) {
  return "  vmstat-overhead-150     [002] d.... 12.000000: " + event + "\n";
}
std::string marker(int n) {
  return line("tracing_mark_write: isolab-spin event " + std::to_string(n));
}
std::string tick() {
  return line("local_timer_entry: vector=236") +
         line(
             "hrtimer_expire_entry: hrtimer=(____ptrval____) function=tick_sched_timer "
             "now=12000000000") +
         line("local_timer_exit: vector=236");
}
std::string kept(const std::string& dep) { return line("tick_stop: success=0 dependency=" + dep); }
std::string stopped() { return line("tick_stop: success=1 dependency=NONE"); }

// Vanilla, 10 s at 10 Hz of fault+cputimer on CPU 2: every event brought the tick back (the
// timer's POSIX_TIMER dependency) and it stopped again before the next one.
TEST(SpinTicks, RealVanillaTraceTheTickStopsAfterEveryEvent) {
  const SpinTicks s = spin_ticks(data("trace-spin-vanilla-6.1.txt"), 2);
  EXPECT_EQ(s.markers, 99);
  EXPECT_TRUE(s.markers_in_order);
  EXPECT_EQ(s.intervals, 98);
  EXPECT_EQ(s.tick_came_back, 98);
  EXPECT_EQ(s.stopped_again, 98);
  EXPECT_EQ(s.ticking_at_next, 0);
  EXPECT_EQ(s.quiet_ticks, 0);
  EXPECT_FALSE(s.lost_events);
  EXPECT_EQ(spin_ticks(data("trace-spin-vanilla-6.1.txt"), 3).markers, 0);  // idle CPU 3
}

// The series and the planted patch on the same step (the first 40 events kept): the tick
// stops between events in both, but for one interval of the planted boot in which the next
// event came before the first tick of the last one (the emulation fell behind): the tick was
// still kept for the timer (POSIX_TIMER), within the step's allowance.
TEST(SpinTicks, RealPatchedAndPlantedTraces) {
  const SpinTicks p = spin_ticks(data("trace-spin-patched-6.1.txt"), 2);
  EXPECT_EQ(p.markers, 40);
  EXPECT_EQ(p.intervals, 39);
  EXPECT_EQ(p.stopped_again, 39);
  EXPECT_EQ(p.ticking_at_next, 0);
  const SpinTicks q = spin_ticks(data("trace-spin-planted-6.1.txt"), 2);
  EXPECT_EQ(q.markers, 40);
  EXPECT_EQ(q.ticking_at_next, 1);
}

// 250 events a second: each event's timer keeps the tick on past the next event (4 ms apart),
// so it stops in a few intervals only (the first 100 events kept).
TEST(SpinTicks, RealTraceOfEventsFasterThanTheTickCanStop) {
  const SpinTicks s = spin_ticks(data("trace-spin-250hz-vanilla-6.1.txt"), 2);
  EXPECT_EQ(s.markers, 100);
  EXPECT_EQ(s.intervals, 99);
  EXPECT_EQ(s.stopped_again, 8);
  EXPECT_EQ(s.ticking_at_next, 90);
  EXPECT_GT(s.kept_by.at("POSIX_TIMER"), 90);
}

TEST(SpinTicks, EventThatBringsTheTickBackAndStopsAgain) {
  // Event 0 and 1: timer armed, two ticks, stop. Event 2: its stretch is cut by the step end.
  const std::string t = "# cpu 2\n" + marker(0) + kept("POSIX_TIMER") + tick() + tick() +
                        stopped() + marker(1) + kept("POSIX_TIMER") + tick() + stopped() +
                        marker(2) + kept("POSIX_TIMER") + tick();
  const SpinTicks s = spin_ticks(t, 2);
  EXPECT_EQ(s.markers, 3);
  EXPECT_TRUE(s.markers_in_order);
  EXPECT_EQ(s.intervals, 2);
  EXPECT_EQ(s.tick_came_back, 2);
  EXPECT_EQ(s.stopped_again, 2);
  EXPECT_EQ(s.ticking_at_next, 0);
  EXPECT_EQ(s.ticks, 3);  // the third interval is not one
  EXPECT_EQ(s.quiet_ticks, 0);
  EXPECT_TRUE(s.kept_by.empty());
  EXPECT_FALSE(s.lost_events);
}

TEST(SpinTicks, TickStillRunningAtTheNextEventAndWhatKeptIt) {
  // Interval 0: never stopped (RCU kept it). Interval 1: stopped, then a kworker restarted it
  // and it stopped again: quiet. Interval 2: stopped, then a tick in the quiet part.
  const std::string t = "# cpu 2\n" + marker(0) + kept("RCU") + tick() + kept("RCU") + marker(1) +
                        tick() + stopped() + kept("SCHED") + tick() + stopped() + marker(2) +
                        stopped() + tick() + marker(3);
  const SpinTicks s = spin_ticks(t, 2);
  EXPECT_EQ(s.intervals, 3);
  EXPECT_EQ(s.ticking_at_next, 2);
  EXPECT_EQ(s.stopped_again, 2);
  EXPECT_EQ(s.quiet_ticks, 2);
  EXPECT_EQ(s.kept_by, (std::map<std::string, long>{{"RCU", 2}}));
}

TEST(SpinTicks, OtherCpusOrderAndLostEvents) {
  // CPU 3's section and a CPU 3 line inside CPU 2's section do not count; a gap in the marker
  // numbers is "out of order"; a lost-events line marks the trace partial.
  const std::string t = "# cpu 3\n" + marker(0) + marker(1) + "# cpu 2\n" + marker(0) +
                        "  other-1 [003] d.... 12.0: tick_stop: success=0 dependency=RCU\n" +
                        marker(2) + "CPU:2 [LOST 12 EVENTS]\n";
  const SpinTicks s = spin_ticks(t, 2);
  EXPECT_EQ(s.markers, 2);
  EXPECT_FALSE(s.markers_in_order);
  EXPECT_EQ(s.ticking_at_next, 0);
  EXPECT_TRUE(s.lost_events);
  EXPECT_EQ(spin_ticks(t, 5).markers, 0);
  EXPECT_EQ(spin_ticks("", 2).intervals, 0);
  EXPECT_EQ(spin_ticks("# cpu 2\n" + std::string(5000, 'x') + "\n" + marker(0), 2).markers, 1);
}

}  // namespace
}  // namespace isolab
