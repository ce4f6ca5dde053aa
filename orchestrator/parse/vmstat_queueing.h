// vmstat_update's queueing on each CPU, read from workqueue trace lines (parse/trace.h): how
// often vmstat_shepherd queued the work again while it was pending or running.
#pragma once

#include <map>
#include <string_view>

namespace isolab {

// How vmstat_update was queued on each CPU (vmstat_shepherd tests only the pending
// bit, which is cleared when the work starts running, so it can queue the work again while it
// runs, and vmstat_update then runs twice in a row).
struct VmstatQueueing {
  long queued = 0;         // workqueue_queue_work function=vmstat_update events for this CPU
  long while_pending = 0;  // queued with no vmstat_update start since the previous queue
  long while_running = 0;  // queued between a vmstat_update start and its end on this CPU
};

// queue_text: workqueue_queue_work lines of any CPU (their target CPU is cpu=, else req_cpu=,
// else the CPU of the line; an unbound target is skipped); run_text: the traced CPUs' trace
// (parse_trace input), whose workqueue_execute_start/end lines with function vmstat_update mark
// the runs on the CPU of the line. Events are ordered by timestamp (the guest traces with
// trace_clock=global); lines without a timestamp are skipped. Queue events in run_text are not
// counted (queue_text holds them all). Result keyed by target CPU. Never throws.
std::map<int, VmstatQueueing> vmstat_queueing(std::string_view queue_text,
                                              std::string_view run_text);

}  // namespace isolab
