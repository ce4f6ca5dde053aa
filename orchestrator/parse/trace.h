// What interrupted the traced CPUs: counts from tracefs text output.
//
// Input: the concatenation, per traced CPU, of a "# cpu N" line (ours) followed by the
// content of /sys/kernel/tracing/per_cpu/cpuN/trace, whose event lines have the default
// format of kernel/trace/trace_output.c:
//   "<task>-<pid> [<cpu>] <flags> <seconds>.<usecs>: <event>: <fields>"
// The events are the ones enabled by guest/plan.h trace_event_boot_param().
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "parse/metrics.h"

namespace isolab {

struct TraceCounts {
  // cpu -> event name -> count
  std::map<int, std::map<std::string, long>> per_cpu;
  // cpu -> workqueue function -> count (workqueue_execute_start "function=<fn>")
  std::map<int, std::map<std::string, long>> workqueue_functions;
  // cpu -> irq handler name -> count (irq_handler_entry "name=<name>")
  std::map<int, std::map<std::string, long>> irq_handlers;
  long lines = 0, malformed = 0;
  bool lost_events =
      false;  // the ring buffer overflowed ("entries-in-buffer/entries-written: a/b", a < b)
};

// Never throws; lines that are not events are skipped (and counted as malformed when they
// look like neither an event nor a comment). Bounded: lines longer than 4096 bytes are skipped.
TraceCounts parse_trace(std::string_view text);

// Metrics, unit "count", lower is better, aggregate "sum" over the traced CPUs (one value per
// CPU, in CPU order):
//   noise.local_timer      irq_vectors:local_timer_entry (the tick and other local APIC timers)
//   noise.irq              irq:irq_handler_entry (device interrupts)
//   noise.softirq          irq:softirq_entry
//   noise.ipi              reschedule + call_function + call_function_single
//   noise.workqueue        workqueue:workqueue_execute_start (kworkers running on the CPU)
//   noise.vmstat_update    workqueue_execute_start with function=vmstat_update (case V1)
//   noise.timer            timer:timer_expire_entry + timer:hrtimer_expire_entry
// traced_cpus lists the CPUs (a CPU with no event gets 0).
Metrics trace_metrics(const TraceCounts& counts, const std::vector<int>& traced_cpus);

}  // namespace isolab
