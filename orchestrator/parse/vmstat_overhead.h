// Parser for the output of guest-tools/vmstat-overhead.c: one JSON object on stdout; in the
// syscall and idle modes
//   {"tool":"vmstat-overhead","version":1,"mode":"syscall"|"idle","cpu":N|null,"pinned":bool,
//    "iterations":N,"warmup":N,"counter":"tsc"|"ns","total":N,"per_iteration":x,
//    "per_syscall":x (syscall mode),"sleep_us":N (idle mode),"min":N,"max":N,
//    "marked_regions":N (optional), "pmu":{...} (optional, VmstatPmu)}
// Counter units: "tsc" -> cycles (TSC ticks), "ns" -> nanoseconds of CLOCK_MONOTONIC.
// The spin mode's object (guest-tools/vmstat-spin.h) is VmstatSpinResult below.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parse/metrics.h"

namespace isolab {

// The tool's "pmu" object: its operations counted with the guest's own instruction counters
// (guest-tools/insn-pmu.h; the layout is documented in guest-tools/vmstat-overhead.c).
// Counts are instructions per region: one timed operation (or one empty region, the
// instrument's own cost) plus the reads around it.
struct VmstatPmu {
  bool available = false;
  std::string reason;  // !available: why (the tool's words, or what was malformed)
  long regions = 0;    // counted regions (operations the group counted whole)
  long unscheduled_regions = 0;
  double insns_median = 0, kernel_insns_median = 0;  // lower medians (user + kernel, kernel)
  double insns_mean = 0, kernel_insns_mean = 0;
  long empty_regions = 0;
  double empty_insns_median = 0, empty_kernel_insns_median = 0;
};

struct VmstatOverheadResult {
  std::string mode;        // "syscall" | "idle"
  std::optional<int> cpu;  // the CPU it ran on (pinned or observed at start)
  bool pinned = false;     // --cpu was given
  long iterations = 0;
  long warmup = 0;
  std::string counter;                // "tsc" | "ns"
  double total = 0;                   // counter units over all timed iterations
  double per_iteration = 0;           // total / iterations (syscall: one mlock+munlock pair)
  std::optional<double> per_syscall;  // syscall mode: per_iteration / 2
  std::optional<long> sleep_us;       // idle mode
  double min = 0, max = 0;            // fastest and slowest single iteration
  // Operations bracketed by instruction-count region markers (guest-tools/insn-marker.h);
  // nullopt for a tool that does not mark them.
  std::optional<long> marked_regions;
  // The "pmu" object; nullopt when absent. A malformed object never fails the parse: it gives
  // available = false with a reason starting "malformed pmu object: " (guest output is
  // untrusted; the cycles above stand on their own).
  std::optional<VmstatPmu> pmu;
  std::string unit() const { return counter == "tsc" ? "cycles" : "ns"; }
};

// Parses the last line of text that starts with '{' (other lines, e.g. shell noise, are
// ignored). Throws isolab::Error quoting the text when there is no such line, it is not JSON,
// "tool" is not "vmstat-overhead", "version" is not 1, or a field is missing or has the wrong
// type or an impossible value (naming the field).
VmstatOverheadResult parse_vmstat_overhead(std::string_view text);

// syscall mode: "cycles_per_syscall" = per_syscall (per single system call, i.e. half a pair,
// as the "cycles per syscall" of the 2022 tick/sched quiet_vmstat() discussion);
// idle mode: "cycles_per_idle_loop" = per_iteration. Unit "cycles" (tsc) or "ns" (the names stay
// the same; the unit tells), lower is better, aggregate "mean", one value per run.
Metrics vmstat_overhead_metrics(const VmstatOverheadResult& result);

// The spin mode (guest-tools/vmstat-spin.h):
//   {"tool":"vmstat-overhead","version":1,"mode":"spin","cpu":N|null,"pinned":bool,
//    "event":"fault"|"fault+cputimer"|"cputimer+fault"|"fault+mlock","rate_hz":N,"duration_s":N,
//    "counter":"tsc"|"ns","events":N,"late_events":N,"elapsed_ns":N,"touched_pages":N,
//    "trace_marker":bool,"marked_events":N,"cpu_timer_fired":N}
struct VmstatSpinResult {
  std::optional<int> cpu;  // the CPU it spun on (pinned, or observed at the end)
  bool pinned = false;
  std::string event;
  long rate_hz = 0;
  long duration_s = 0;
  long events = 0;       // events done; the first has marker number 0
  long late_events = 0;  // events whose time had passed by more than a period
  double elapsed_s = 0;  // from the first period's start to the end, CLOCK_MONOTONIC
  long touched_pages = 0;
  bool trace_marker = false;  // the tool could open tracefs' trace_marker
  long marked_events = 0;     // events whose marker was written (the first ones)
  long cpu_timer_fired = 0;
};

// Parses the last line of text that starts with '{' as the spin mode's object. Throws
// isolab::Error quoting the text when there is no such line, it is not JSON, "tool" or "version"
// is wrong, "mode" is not "spin", or a field is missing, of the wrong type or impossible (a
// count beyond 1e12, marked_events > events, elapsed_ns 0), naming the field.
VmstatSpinResult parse_vmstat_spin(std::string_view text);

// Every line of text that starts with '{' (after leading spaces), each one spinning task's object
// (the step runs one per CPU), in their order. Throws as parse_vmstat_spin() for a bad line, and
// for no such line or two objects of the same CPU.
std::vector<VmstatSpinResult> parse_vmstat_spin_lines(std::string_view text);

}  // namespace isolab
