// Parsers for the kernel tracing outputs of a cyclictest step with latency_tracer / count_calls
// (workload/workload.cc tracing_start_script()), and for guest-tools/madvise-pressure.c.
//
// Formats (Linux Documentation/trace/ftrace.rst, kernel/trace/trace_sched_wakeup.c and
// kernel/trace/ftrace.c, checked against 6.12 output captured in tests/data/trace/):
// - tracing_max_latency: one decimal number, microseconds.
// - the latency tracer's `trace` file: a header with
//     "# latency: 1969 us, #6/6, CPU#1 | (M:preempt_rt VP:0, KP:0, SP:0 HP:0 #P:4)"
//     "#    | task: cyclictest-250 (uid:0 nice:0 policy:1 rt_prio:99)"
//   then entries; "<stack trace>" entries are followed by frame lines " => <function>".
//   wakeup_rt writes one stack trace at the wakeup and one at the switch to the woken task;
//   the last one shows what the CPU was doing when it finally switched (the max-latency path).
// - trace_stat/function<N> (function profiler) concatenated over CPUs: a header
//   "  Function   Hit" (+ "Time Avg s^2" with the graph tracer), a dashes line, then
//   "  <function>   <hits> ..." rows; the name is cut to 30 characters ("%-30.30s" in
//   function_stat_show()), so madvise_cold_or_pageout_pte_range appears as
//   "madvise_cold_or_pageout_pte_ra".
// - madvise-pressure: one JSON object, see guest-tools/madvise-pressure.c.
// Guest output is untrusted: every number is range-checked, text is sanitized by the caller.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parse/metrics.h"

namespace isolab {

// tracing_max_latency. Throws isolab::Error quoting the text unless it is one non-negative
// decimal integer (surrounding whitespace allowed) below 1e12.
double parse_max_latency_us(std::string_view text);

struct WakeupTraceSummary {
  // The tracer of "# wakeup_rt latency trace v1.1.5 on ..." ("" when absent). A file can start
  // "# tracer: wakeup" and name wakeup_rt here: this line decides (docs/sources.md [w2]).
  std::string tracer;
  std::optional<double> latency_us;  // from "# latency: N us"; nullopt: no header (empty trace)
  std::optional<long> entries;       // "#12/12": the entries shown
  std::string task;                  // "cyclictest-250" ("" when absent)
  std::optional<int> policy;         // "policy:1" of the task line (1 FIFO, 2 RR)
  std::optional<int> rt_prio;        // "rt_prio:5": the user priority (kernel prio 99 - 5)
  std::optional<int> cpu;            // "CPU#N" of the header
  std::vector<std::string> wakeup_frames;  // first stack trace, tracing frames removed
  std::vector<std::string> switch_frames;  // last stack trace, tracing frames removed
};

// Parses a wakeup/wakeup_rt/wakeup_dl `trace` file. The frames of the tracer itself
// (__ftrace_trace_stack, __trace_stack, probe_wakeup, probe_wakeup_sched_switch) are dropped,
// so a frame list starts with the first kernel function outside the tracer. Never throws; an
// empty or header-only trace gives empty frame lists.
WakeupTraceSummary parse_wakeup_trace(std::string_view text);

// One function of the function profiler, summed over the CPU files (docs/sources.md [w3]).
struct FunctionProfileRow {
  long long hits = 0;
  // With CONFIG_FUNCTION_GRAPH_TRACER: "Time" summed over the files, in µs (the number before
  // " us", whatever its precision); it includes children and, by default, sleep inside.
  std::optional<double> time_us;
  // time_us / hits; nullopt without a time. The files' own Avg and s^2 (a variance in µs²
  // though printed "us") are not combined across CPUs.
  std::optional<double> avg_us() const {
    if (!time_us || hits == 0) return std::nullopt;
    return *time_us / static_cast<double>(hits);
  }
};

// Function profiler output: function name as printed (at most 30 characters: "%-30.30s", so
// rcu_preempt_deferred_qs_handler is "rcu_preempt_deferred_qs_handle") -> its row summed over
// the CPU files. Throws isolab::Error naming the line for a row whose hit column is not a
// non-negative integer or whose time is not a number.
std::map<std::string, FunctionProfileRow> parse_function_profile_rows(std::string_view text);

// The hits of parse_function_profile_rows.
std::map<std::string, long long> parse_function_profile(std::string_view text);

struct MadvisePressureResult {
  std::string advice;  // "pageout" | "cold" | "both"
  long procs = 0, mib = 0;
  long long calls = 0, failed_calls = 0;
  double max_call_us = 0, mean_call_us = 0, elapsed_s = 0;
};

// The last line starting with '{'. Throws isolab::Error quoting the text when there is none,
// it is not JSON, "tool" is not "madvise-pressure", "version" is not 1, or a field is missing,
// of the wrong type or negative (naming the field).
MadvisePressureResult parse_madvise_pressure(std::string_view text);

// "madvise_calls" (count, higher is better: more pressure per second of load is more load),
// "madvise_call_max_us" and "madvise_call_mean_us" (us, lower is better). One value each.
Metrics madvise_pressure_metrics(const MadvisePressureResult& r);

}  // namespace isolab
