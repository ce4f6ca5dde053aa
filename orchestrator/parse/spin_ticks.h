// The tick of one CPU between the events of vmstat-overhead's spin mode
// (guest-tools/vmstat-spin.h), read from the step's trace: did the tick stop in user space
// between the events, as the customer's case needs?
//
// Input: the "<wl>.trace" record (parse/trace.h: per traced CPU a "# cpu N" line and that
// CPU's /sys/kernel/tracing/per_cpu/cpuN/trace), read in buffer order; the timestamps are not
// used (with an unstable sched_clock, as under TCG, they stand still on a CPU whose tick is
// stopped). Lines read on the CPU asked for (include/trace/events/timer.h, 6.1):
//   tracing_mark_write: isolab-spin event <n>   the task's marker before event n
//   tick_stop: success=1 dependency=NONE        the tick stopped (first stop after a restart)
//   tick_stop: success=0 dependency=<BIT>       the tick was kept for <BIT> (POSIX_TIMER,
//                                               SCHED, RCU, ...)
//   hrtimer_expire_entry: ... function=tick_sched_timer   a tick
// An interval is the stretch from one marker to the next (the last marker's stretch, cut by
// the step's end, is not one). Its quiet part is what follows its last tick_stop success=1, or
// the whole interval when it has none. The tick was stopped when the next event came when the
// quiet part holds no tick and no success=0: the event's own tick (if it brought one back)
// stopped again, and nothing restarted it for long enough to tick before the next event.
// Never throws; guest text is untrusted (parse/trace.h's line rules).
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace isolab {

struct SpinTicks {
  long markers = 0;              // event markers on the CPU, in buffer order
  bool markers_in_order = true;  // marker numbers 0, 1, 2, ... without a gap or repeat
  long intervals = 0;            // markers - 1
  long tick_came_back = 0;       // intervals with a tick or a success=0 after the marker
  long stopped_again = 0;        // intervals with a tick_stop success=1
  long ticking_at_next = 0;      // intervals whose quiet part has a tick or a success=0
  long ticks = 0;                // ticks in the intervals
  long quiet_ticks = 0;          // of them, in the quiet parts
  // success=0 dependencies in the quiet parts, by name ("RCU": 3): what kept the tick on.
  std::map<std::string, long> kept_by;
  bool lost_events = false;  // the buffer overflowed (parse/trace.h's rule): counts are partial
};

// The spin step's tick on `cpu`, from the trace record text.
SpinTicks spin_ticks(std::string_view trace_text, int cpu);

}  // namespace isolab
