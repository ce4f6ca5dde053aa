// What interrupted the traced (isolated) CPUs during a step: per-CPU evidence from tracefs text.
//
// Input of parse_trace(): the concatenation, per traced CPU, of a "# cpu N" line (ours) followed
// by the content of /sys/kernel/tracing/per_cpu/cpuN/trace. Event lines have the default format
// of kernel/trace/trace_output.c trace_print_context():
//   "<task>-<pid> [(<tgid>) ][<cpu>] <flags> <seconds>.<usecs>: <event>: <fields>"
// with the task right-aligned in 16 columns and the flags from trace_print_lat_fmt(). Variants
// accepted (docs/sources.md [n1]): 4 or 5 flag columns or more (RT kernels), no flags at all, no
// space between the flags and the timestamp (trace-cmd report -N), 1 to 9 fraction digits, a hex
// preempt depth; task names holding '-', ':', '/', spaces and brackets ("<idle>", "<...>").
// The CPU comes from "[NNN]" only, the pid from the digits after the last '-' before it.
// Event bodies used (include/trace/events/{irq,workqueue}.h, arch/x86/include/asm/trace/
// irq_vectors.h, 6.1): irq_handler_entry "irq=%d name=%s", irq_handler_exit "irq=%d ret=%s",
// softirq_entry/exit "vec=%u [action=%s]", workqueue_execute_start/end
// "work struct %p: function %ps", irq_vectors *_entry/*_exit "vector=%d".
// Guest output is untrusted: nothing here throws, lines over kMaxTraceLineBytes are malformed,
// and every name kept is cut to 64 bytes of printable ASCII.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parse/metrics.h"

namespace isolab {

inline constexpr std::size_t kMaxTraceLineBytes = 4096;

// One event line, views into the line.
struct TraceLine {
  std::string_view task;  // "<idle>", "kworker/5:1", "<...>"
  long pid = 0;
  int cpu = 0;                   // from "[NNN]", 0-8191
  std::string_view flags;        // "d.h1.", "" when the trace has no irq-info column
  std::optional<int64_t> ts_ns;  // nullopt for a counter clock (no '.' in the timestamp)
  std::string_view event;        // "local_timer_entry"; "<stack trace>" for the header line of a
                                 // kernel stack entry (its frames follow as " => " lines)
  std::string_view body;         // "vector=236"
};

// The event of an osnoise tracer's per-period line (parse_trace() below); its body is the nine
// numbers.
inline constexpr std::string_view kOsnoiseSummary = "<osnoise summary>";

// nullopt when the line is not an event line of the format above.
std::optional<TraceLine> parse_trace_line(std::string_view line);

// The workqueue event bodies (docs/sources.md [n1]): "work struct X: function F"
// (execute_start/end, 6.1), "... function=F workqueue=W req_cpu=R cpu=C" (queue_work), "function=F
// " (activate_work, 2024).
// cpu and req_cpu are -1 for unbound: cpu=-1 or cpu=4294967295 (the field became signed in
// 2022), and req_cpu >= 8192 (WORK_CPU_UNBOUND is NR_CPUS, 8192 on x86 MAXSMP; a kernel with a
// smaller NR_CPUS prints that number, read here as that CPU).
struct WorkqueueFields {
  std::string_view function;  // "" when the body has none
  std::optional<int> req_cpu, cpu;
};
WorkqueueFields parse_workqueue_fields(std::string_view body);

// An interruption: an entry event and the matching exit on the same CPU.
struct Interruption {
  std::string cause;  // local_timer, ipi_reschedule, ipi_call_function, irq, softirq, workqueue
  std::string name;   // irq handler, softirq action or workqueue function ("" for vectors)
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
};

struct CpuTrace {
  std::map<std::string, long> events;               // event name -> count
  std::map<std::string, long> workqueue_functions;  // workqueue_execute_start function -> count
  std::map<std::string, long> irq_handlers;         // irq_handler_entry name -> count
  std::map<std::string, long> softirq_actions;      // softirq_entry action -> count
  std::vector<int64_t> vmstat_update_ns;  // start times of vmstat_update runs, in trace order
  long complete_pairs = 0;                // entry/exit pairs matched
  std::optional<Interruption> longest;
};

struct TraceCounts {
  std::map<int, CpuTrace> per_cpu;  // by the CPU of "[NNN]"
  std::vector<int> traced_cpus;     // from the "# cpu N" headers, first-seen order, no repeats
  long lines = 0, malformed = 0;    // event lines counted; lines that are neither events nor '#'
  long recognised = 0;              // of the event lines, those of an event read here (a cause
                                    // below, its exit, workqueue, the osnoise tracer's)
  long first_malformed_line = 0;    // 1-based line number of the first malformed line, 0: none
  bool lost_events = false;         // "entries-in-buffer/entries-written: a/b" with a < b, or
                                    // "CPU:N [LOST M EVENTS]": the ring buffer overflowed
  bool exit_events = false;         // any *_exit / workqueue_execute_end event was seen
  bool counter_clock = false;       // some timestamp had no '.': no durations or gaps from it
  std::optional<int64_t> first_ns, last_ns;  // earliest and latest timestamp over all CPUs
};

// Kernel stack entries ("<stack trace>" lines and their " => " frames, written by a stacktrace
// trigger) are skipped: neither events nor malformed. The osnoise tracer's per-period lines
// (numbers after the timestamp, no event name) are events named "<osnoise summary>", counted
// but not read. Its noise events (irq_noise, softirq_noise, nmi_noise, thread_noise: "<name>:<n>
// start <s.ns> duration <ns> ns") are whole interruptions: each is a complete pair, and its
// duration can be the CPU's longest interruption (cause local_timer for the irq_noise of
// "local_timer", else irq, softirq, nmi or thread; the name is the part before the colon).
// Never throws. Entry/exit pairing: per CPU and per (event, key) -- irq number, softirq vector,
// workqueue function -- the latest unmatched entry (at most 16 open, the oldest dropped) pairs
// with the next exit; an exit without an entry (the entry was before the trace) is ignored.
TraceCounts parse_trace(std::string_view text);

// The noise causes, in report order: {metric cause, what it counts}.
//   vmstat_update      workqueue_execute_start, function vmstat_update ([v1])
//   workqueue_other    workqueue_execute_start, any other function
//   local_timer        local_timer_entry (the tick and other local APIC timer interrupts), and
//                      the osnoise tracer's irq_noise of "local_timer"
//   ipi_reschedule     reschedule_entry
//   ipi_call_function  call_function_entry + call_function_single_entry
//   irq                irq_handler_entry (device interrupts), and the other irq_noise events
//   softirq            softirq_entry + softirq_noise
//   timer_callbacks    timer_expire_entry + hrtimer_expire_entry
// "interruptions" = local_timer + ipi_reschedule + ipi_call_function + irq + vmstat_update +
// workqueue_other + the osnoise tracer's nmi_noise and thread_noise: each of these takes the CPU
// away from its task (an interrupt, or a kworker or other thread switched in). A trace with both
// the irq_vectors events and the osnoise tracer's noise events of one interrupt counts it twice:
// trace one or the other. softirq and timer_callbacks are left out because they run inside those: a
// softirq on irq exit of the tick or of a device interrupt, a timer callback from the tick's
// hrtimer interrupt or the TIMER softirq; adding them would count one interruption twice.
const std::vector<std::string>& noise_causes();
long cause_count(const CpuTrace& cpu, std::string_view cause);  // also "interruptions"

// The interruption an event line starts, as the cause names of noise_causes() that make up
// "interruptions": "vmstat_update" / "workqueue_other" (workqueue_execute_start by function),
// "local_timer", "ipi_reschedule", "ipi_call_function", "irq"; "" for any other event (exits,
// softirq and timer callbacks, which run inside these). name: the workqueue function or the
// irq handler (printable ASCII, at most 64 bytes), "" for the vectors.
struct InterruptionStart {
  std::string_view cause;
  std::string name;
};
InterruptionStart interruption_start(const TraceLine& line);

// Metrics, details and notes of one step's trace.
struct TraceNoise {
  Metrics metrics;         // bare names ("noise.local_timer_per_s"); the caller prefixes
  nlohmann::json details;  // see trace_noise()
  std::vector<std::string> notes;
};

// window_s: the step window in seconds (from "<wl>.window"); when nullopt or not positive, the
// span of the trace timestamps is used and a note says so; when that is unavailable too (fewer
// than two timestamps), the rate metrics are omitted with a note. cpus: the traced CPUs (a CPU
// without events counts 0), in the order the metrics list them. Metrics:
//   noise.<cause>_per_s, noise.interruptions_per_s: unit "1/s", better lower, aggregate "mean",
//     kind "count", cpus, counts, window_s, values = count / window_s per CPU.
//   noise.vmstat_update_gap_ms: every gap between consecutive vmstat_update starts on the same
//     CPU, all CPUs together (cpus[i] is the CPU of values[i]); unit "ms", better higher (double
//     scheduling shows as gaps near 0), aggregate "min"; omitted when no CPU had two.
//   noise.vmstat_update_gap_{min,median,max}_ms: per traced CPU (one slot each, in cpus order)
//     the smallest, median and largest gap; null for a CPU with fewer than 2 runs (no gap, not
//     a gap of 0); unit "ms", better higher, aggregate min / mean / max; omitted when no CPU had
//     two runs (details then say so per CPU).
//   noise.longest_us: per CPU the longest interruption (entry to matching exit); unit "us",
//     better lower, aggregate "max", null for a CPU without a complete pair; omitted when the
//     trace has no exit events or no CPU has a pair.
// details: {"window_s", "window_source": "step"|"trace span"|null, "lost_events",
//   "malformed_lines", "exit_events", "cpus": [{"cpu", "causes": {cause: {"count", "per_s"}},
//   "events": {event: n}, "workqueue_functions": {fn: n}, "irq_handlers": {name: n},
//   "softirq_actions": {name: n}, "vmstat_update_gap_ms": {"runs", "n", "min", "median", "max",
//   "status": "ok" | "fewer than 2 runs"} (min/median/max null with fewer than 2 runs),
//   "longest": {"cause", "name", "us", "at_s"} | null}]}.
// Never throws.
TraceNoise trace_noise(const TraceCounts& trace, const std::vector<int>& cpus,
                       std::optional<double> window_s);

}  // namespace isolab
