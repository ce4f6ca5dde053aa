// Parser for the output of guest-tools/vmstat-overhead.c: one JSON object on stdout,
//   {"tool":"vmstat-overhead","version":1,"mode":"syscall"|"idle","cpu":N|null,"pinned":bool,
//    "iterations":N,"warmup":N,"counter":"tsc"|"ns","total":N,"per_iteration":x,
//    "per_syscall":x (syscall mode),"sleep_us":N (idle mode),"min":N,"max":N,
//    "marked_regions":N (optional), "pmu":{...} (optional, VmstatPmu)}
// Counter units: "tsc" -> cycles (TSC ticks), "ns" -> nanoseconds of CLOCK_MONOTONIC.
#pragma once

#include <optional>
#include <string>
#include <string_view>

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

}  // namespace isolab
