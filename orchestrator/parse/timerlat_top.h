// `rtla timerlat top` text and its auto-analysis block (tools/tracing/rtla/src/timerlat_top.c
// and timerlat_aa.c of the 6.12 tree; docs/sources.md [r6]). Pure functions over bytes, for
// `isolab import` (untrusted text).
//
// The table: a title line whose first field is the duration ("0 00:00:12"), a header
// "CPU COUNT | cur min avg max | cur min avg max" (a third block with -u), then one row per CPU
// "  4 #12322     |        1         0         1        17 |       10 ...". COUNT has '#' glued
// to the number; avg is truncated to an integer. Blocks are split at '|', so columns are found by
// block, not position.
//
// The auto-analysis (rtla 6.3 on; aligned with tabs until 2024-05, spaces after: any
// whitespace is accepted), after "## CPU N hit stop tracing, analyzing it ##":
//   parts of the total, each "Label: V us (P %)" or "Label V us (P %)" (IRQ handler delay,
//     Timerlat IRQ duration, Blocking thread, NMI/IRQ/Softirq/Thread interference): their shares
//     are of the total, which is the last "Thread latency: V us (100%)" (or "IRQ latency" when
//     the IRQ hit the threshold);
//   "IRQ latency: V us" without a share: it contains the handler delay, so it is kept apart and
//     never added to the parts;
//   the blocking task "name:pid V us" (split at the last ':'), its stack ("-> fn" lines);
//   "Max timerlat IRQ latency from idle: V us in cpu N": about CPU N, neither the stopping CPU's
//     latency nor the run's maximum.
// Lines naming single IRQs, softirqs or threads under an interference ("name:vector V us") are
// details of that part and are not read as parts.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parse/rtla.h"

namespace isolab {

struct TimerlatAnalysisPart {
  std::string label;  // as printed, without the colon: "IRQ handler delay"
  double us = 0;
  double share_pct = 0;  // of the total, as printed
};

struct TimerlatAutoAnalysis {
  int cpu = 0;                     // the CPU that hit the stop threshold
  std::string total_label;         // "Thread latency" or "IRQ latency"
  std::optional<double> total_us;  // the "(100%)" line
  std::vector<TimerlatAnalysisPart> parts;
  std::optional<double> irq_latency_us;  // "IRQ latency: V us" (contains the handler delay)
  std::string blocking_task;             // "objtool"
  std::optional<long long> blocking_pid;
  std::vector<std::string> blocking_stack;  // innermost first, as printed
  std::optional<double> idle_max_us;        // "Max timerlat IRQ latency from idle"
  std::optional<int> idle_cpu;
};

struct RtlaTimerlatTop {
  std::optional<double> duration_s;  // the title's "D HH:MM:SS"
  // Per CPU: irq and thread (user with -u) stats; count from COUNT, min/avg/max in µs (over 0).
  RtlaHist table;
  bool stopped = false;  // "rtla timerlat hit stop tracing": the run ended early
  std::optional<TimerlatAutoAnalysis> analysis;
};

// Throws isolab::Error naming the line (1-based, quoted) when there is no "CPU COUNT" header, a
// row's block has other than 4 values, a value is not a number, or a CPU appears twice; text
// with no CPU row is an error ("no CPU row").
RtlaTimerlatTop parse_rtla_timerlat_top(std::string_view text);

// One line per fact of the analysis for a cell's notes: what stopped the run, the total and
// each part with its share, the IRQ latency kept apart, the blocking task, the idle line.
std::vector<std::string> timerlat_analysis_notes(const RtlaTimerlatTop& top);

}  // namespace isolab
