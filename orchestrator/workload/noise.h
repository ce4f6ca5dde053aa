// Per-step noise evidence on the traced (isolated) CPUs: the trace metrics of parse/trace.h over
// the step window, cross-checked against the /proc/interrupts deltas of the same step.
//
// Records of a step named <wl> (sent by the guest, untrusted):
//   "<wl>.trace"               per traced CPU "# cpu N" + /sys/kernel/tracing/per_cpu/cpuN/trace
//   "<wl>.window"              "<start> <end>\n": /proc/uptime's first field (seconds) just
//                              before and just after the step
//   "<wl>.interrupts_before"   /proc/interrupts just before the step
//   "<wl>.interrupts_after"    /proc/interrupts just after it
//   "<wl>.vmstat_queue"        workqueue_queue_work lines with function=vmstat_update of every
//                              CPU (the shepherd queues from a housekeeping CPU)
//   "<wl>.lock_contention"     lock:contention_begin/end lines of every CPU, each begin with its
//                              stack trace (guest/init_script.h)
// and the boot's facts "trace_events" and "lock_contention_trigger".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gate/gate.h"
#include "guest/channel.h"
#include "parse/lock_contention.h"
#include "parse/metrics.h"
#include "parse/trace.h"
#include "parse/vmstat_queueing.h"

namespace isolab {

// The step window in seconds: end - start of "<start> <end>" (two finite, non-negative decimal
// numbers, end > start, surrounding whitespace allowed). nullopt with problem set ("expected
// '<start> <end>' ...", naming the bad text) otherwise.
std::optional<double> parse_step_window(std::string_view text, std::string& problem);

// The increase of a /proc/interrupts counter. The kernel prints unsigned int: an after below
// before, both below 2^32, is one wrap (after + 2^32 - before); any other decrease is nullopt.
std::optional<uint64_t> counter_delta(uint64_t before, uint64_t after);

// Allowed difference between a /proc/interrupts delta and the trace's count on one CPU:
// 2 + 5% of the larger. The two do not cover the same instants: the guest's shell switches
// tracing on, reads /proc/interrupts, runs the step, reads /proc/interrupts again, ends leftover
// tools and only then switches tracing off (guest/init_script.cc), so an event in either edge gap
// is in the trace only. On an isolated CPU with the tick stopped each gap of a few shell commands
// holds at most one event (the 2); on a CPU whose tick runs, the events in the gaps grow with the
// rate, and 5% covers gaps adding up to 5% of the step (250 ms of a 5 s step), which a few
// shell commands can take under TCG on a loaded host.
uint64_t cross_check_tolerance(uint64_t proc_delta, uint64_t trace_count);

// The x86 rows compared (arch/x86/kernel/irq.c arch_show_interrupts()) and the trace events
// they count (arch/x86/kernel/apic/apic.c, smp.c: each handler increments the counter between
// its *_entry and *_exit tracepoints):
//   LOC  apic_timer_irqs  vs local_timer_entry
//   RES  irq_resched_count vs reschedule_entry
//   CAL  irq_call_count    vs call_function_entry + call_function_single_entry
// Adds per CPU details["cpus"][i]["interrupts"] = {"LOC": {"delta", "trace", "tolerance",
// "agree"}, ...} and, for each disagreement beyond the tolerance, a note "trace and
// /proc/interrupts disagree on CPU 5: LOC +12, local_timer_entry 3". When the trace lost events
// a trace count below the delta is expected (lower bound): recorded, not noted. A row or CPU
// column absent from either snapshot (arm64 has no LOC) is listed in
// details["interrupts_unchecked"].
void cross_check_interrupts(const TraceCounts& trace, const std::vector<int>& cpus,
                            const InterruptsSnapshot& before, const InterruptsSnapshot& after,
                            nlohmann::json& details, std::vector<std::string>& notes);

struct StepNoise {
  // bare names (noise.*), see trace_noise(); plus noise.vmstat_queued_while_pending_per_s and
  // noise.vmstat_queued_while_running_per_s (parse/trace.h vmstat_queueing(); unit "1/s", kind
  // "count", per traced CPU over the step window) when "<wl>.vmstat_queue" was sent and
  // workqueue_queue_work was traced; details cpus[i].vmstat_queueing = {"queued",
  // "while_pending", "while_running"}. Zone and pcp lock contention
  // (docs/examples/vmstat-shepherd-locks.md; parse/trace.h lock_contention(), when
  // lock:contention_begin was traced with its stacktrace trigger):
  //   noise.{zone,pcp}_lock_contentions_per_s  1/s per traced CPU, kind "count", mean
  //   noise.{zone,pcp}_lock_wait_us             µs per traced CPU (summed waits, begin to end
  //                                             on that CPU), aggregate "sum"
  //   noise.{zone,pcp}_lock_contentions_all_cpus_per_s, noise.{zone,pcp}_lock_wait_all_cpus_us
  //                                             the same per CPU of the guest (the record's
  //                                             "# cpu N" headers), aggregate "sum": the total
  // details.lock_contention = {"status": "ok" or why there are no such metrics, "lost_events",
  // "malformed_lines", "all_cpus": C, "per_cpu": {"<cpu>": C}} and details.cpus[i].
  // lock_contention = C, where C = {"zone"|"pcp"|"other": {"count", "ended", "wait_us",
  // "max_wait_us"}, "no_stack"}.
  Metrics metrics;
  nlohmann::json details;  // trace_noise() details + "interrupts"; null when there is no trace
  std::vector<std::string> notes;
};

// Everything from the records of step wl. Never throws: a missing or malformed window record,
// unparsable /proc/interrupts or a trace without "# cpu N" headers becomes a note.
StepNoise step_noise(const ChannelContents& records, const std::string& wl);

}  // namespace isolab
