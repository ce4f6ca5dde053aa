// The situations in which vanilla 6.1 runs vmstat_update on a nohz_full CPU, as
// docs/examples/vmstat-nohz.md states them, checked on the real 6.1 traces it cites
// (tests/data/guest/README.md): the parsers must read in them what the document says is there.
#include <gtest/gtest.h>

#include <string>

#include "base/files.h"
#include "parse/spin_ticks.h"
#include "parse/trace.h"
#include "parse/vmstat_queueing.h"

namespace isolab {
namespace {

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/guest/" + name);
}

long events(const TraceCounts& t, int cpu, const std::string& event) {
  const auto c = t.per_cpu.find(cpu);
  if (c == t.per_cpu.end()) return 0;
  const auto e = c->second.events.find(event);
  return e == c->second.events.end() ? 0 : e->second;
}

long runs(const TraceCounts& t, int cpu) {
  const auto c = t.per_cpu.find(cpu);
  if (c == t.per_cpu.end()) return 0;
  const auto f = c->second.workqueue_functions.find("vmstat_update");
  return f == c->second.workqueue_functions.end() ? 0 : f->second;
}

// 1. The tick stays stopped (page faults in user space, no tick dependency): nothing at all
// interrupts the CPU, vmstat_update included, for the 150 events of 15 s.
TEST(VmstatWakeups, TickStoppedThroughoutNoVmstatUpdate) {
  const std::string trace = data("trace-spin-fault-vanilla-6.1.txt");
  const SpinTicks s = spin_ticks(trace, 2);
  EXPECT_EQ(s.markers, 150);
  EXPECT_EQ(s.tick_came_back, 0);
  EXPECT_EQ(s.ticks, 0);
  const TraceCounts t = parse_trace(trace);
  EXPECT_EQ(runs(t, 2), 0);
  EXPECT_EQ(events(t, 2, "local_timer_entry"), 0);
  EXPECT_EQ(events(t, 2, "reschedule_entry"), 1);  // the task's own start on the idle CPU
}

// 2. The tick comes back (a POSIX CPU timer): vmstat_work's deferrable timer fires in the TIMER
// softirq of a tick, queues vmstat_update on the CPU itself, about once a second.
TEST(VmstatWakeups, TickBackDeferrableTimerRunsVmstatUpdateEverySecond) {
  const TraceCounts t = parse_trace(data("trace-spin-vanilla-6.1.txt"));
  EXPECT_EQ(runs(t, 2), 10);
  EXPECT_EQ(events(t, 2, "timer_expire_entry"), 10);    // each delayed_work_timer_fn
  EXPECT_EQ(events(t, 2, "workqueue_queue_work"), 10);  // queued from CPU 2's softirq
  // The series: one run of a timer armed at boot, which finds nothing and does not re-arm.
  EXPECT_EQ(runs(parse_trace(data("trace-spin-patched-6.1.txt")), 2), 1);
  // The series when the fault comes with the tick running (timer armed first): re-armed.
  EXPECT_EQ(runs(parse_trace(data("trace-spin-timer-first-patched-6.1.txt")), 3), 4);
}

// 3. vmstat_shepherd, on housekeeping CPU 0, queues vmstat_update on the spinning CPU when its
// work is not pending: the wakeup reaches CPU 2 as IPIs in a quiet stretch, the kworker runs
// with the tick kept for it (SCHED), then the tick stops again.
TEST(VmstatWakeups, ShepherdQueuesFromAHousekeepingCpu) {
  const std::string trace = data("trace-spin-shepherd-vanilla-6.1.txt");
  const TraceCounts t = parse_trace(trace);
  EXPECT_EQ(runs(t, 2), 1);
  EXPECT_EQ(events(t, 2, "workqueue_queue_work"), 0);  // not queued on CPU 2 itself
  EXPECT_EQ(events(t, 2, "reschedule_entry"), 1);
  EXPECT_EQ(events(t, 2, "call_function_single_entry"), 1);
  const auto q = vmstat_queueing(data("vmstat-queue-spin-shepherd-vanilla-6.1.txt"), trace);
  ASSERT_TRUE(q.count(2));
  EXPECT_EQ(q.at(2).queued, 2);  // the second one is after the excerpt's end
  const SpinTicks s = spin_ticks(trace, 2);
  EXPECT_EQ(s.intervals, 7);
  EXPECT_EQ(s.ticking_at_next, 0);
}

}  // namespace
}  // namespace isolab
