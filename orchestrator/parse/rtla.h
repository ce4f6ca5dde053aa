// rtla (Linux tools/tracing/rtla, Debian package rtla) text output parsers and the
// classification of a failed rtla run. Pure functions over bytes: `isolab import` reuses them on
// text a user pastes, and the workload layer on what the guest sent (untrusted).
//
// Formats (rtla 6.1 src/osnoise_top.c and src/timerlat_hist.c; captures in tests/data/rtla/):
//  - `rtla osnoise top -q`: a title line, "duration:   0 00:00:04 | time is in us", a header
//    "CPU Period       Runtime        Noise  % CPU Aval   Max Noise   Max Single          HW
//    NMI          IRQ      Softirq       Thread", then one row per CPU
//    "  2 #3          3000000        4711   99.84296         812          98     0     0  3012
//    10     2". Header lines carry terminal colour sequences (ESC[...m, and ESC c without -q).
//    Columns are mapped by their header names (several are two or three words), not position.
//  - `rtla timerlat hist`: "# RTLA timerlat histogram", "# Time unit is microseconds (us)" (or
//    nanoseconds (ns) with -n), "# Duration:   0 00:00:04", a header "Index   IRQ-002
//    Thr-002 ..." (Usr-NNN with -u in newer rtla; a CPU without samples has no column), bucket
//    rows (all-zero rows left out), then "over:", "count:", "min:", "avg:", "max:" rows; newer
//    rtla adds an "ALL:" block, which is skipped. "-" is no data (docs/sources.md [r1]), and so is
//    every statistic of a column whose count is 0 (rtla 6.1 prints min as 2^64-1 there).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parse/metrics.h"

namespace isolab {

// One CPU row of `rtla osnoise top`. Times in µs (rtla prints µs; "time is in ns" is scaled).
struct RtlaOsnoiseCpu {
  int cpu = 0;
  long long periods = 0;         // "Period" ("#N": osnoise periods completed)
  double runtime_us = 0;         // "Runtime": sum of the osnoise thread's runtime
  double noise_us = 0;           // "Noise": sum of the noise over that runtime
  double cpu_available_pct = 0;  // "% CPU Aval"
  double max_noise_us = 0;       // "Max Noise": the noisiest period's total noise
  double max_single_us = 0;      // "Max Single": the longest single noise
  // Interference counts by kind: "HW", "NMI", "IRQ", "Softirq", "Thread".
  long long hw = 0, nmi = 0, irq = 0, softirq = 0, thread = 0;
};

struct RtlaOsnoiseTop {
  std::optional<double> duration_s;  // from "duration: D HH:MM:SS"
  std::vector<RtlaOsnoiseCpu> cpus;  // in printed order, CPUs unique
  // False for the table of `rtla hwnoise` (6.2+, "Hardware-related Noise"), which ends after HW
  // and NMI: it counts no IRQ, Softirq or Thread noise, and rtla_osnoise_metrics gives no rate
  // for them (absent, not zero).
  bool task_noise_columns = true;
};

// Throws isolab::Error naming the line (1-based) and quoting it when the header is missing, a
// header word is unknown, a row has a different number of fields than the header or a field is
// not a number, or a CPU appears twice. Text with no CPU row is an error too ("no summary").
RtlaOsnoiseTop parse_rtla_osnoise_top(std::string_view text);

// One column's summary of `rtla timerlat hist`: nullopt is no data ("-", or count 0).
struct RtlaLatencyStats {
  long long count = 0;
  long long over = 0;  // samples beyond the last bucket
  std::optional<double> min_us, avg_us, max_us;
};

// One CPU of an rtla histogram: timerlat hist fills irq, thread (and user); osnoise hist fills
// noise (its "CPU-NNN" column, single noise durations). Absent when the column is not printed.
struct RtlaHistCpu {
  int cpu = 0;
  std::optional<RtlaLatencyStats> irq = {}, thread = {}, user = {}, noise = {};
};

struct RtlaHist {
  std::optional<double> duration_s;  // "# Duration: D HH:MM:SS"
  double unit_us = 1;                // 1 for "(us)", 0.001 for "(ns)"; values are already µs
  std::vector<RtlaHistCpu> cpus;     // in header order
  // Bucket index (as printed, in the time unit) -> count, per column name ("IRQ-002").
  std::map<std::string, std::map<long long, long long>> buckets;
};

// Throws isolab::Error (line number, quoted line) when the "Index" header is missing, a column
// name is neither IRQ-, Thr- nor Usr-NNN, a row has the wrong number of fields or a non-number
// other than "-", or the summary has no "count:" row.
RtlaHist parse_rtla_timerlat_hist(std::string_view text);

// `rtla osnoise hist` text (tools/tracing/rtla/src/osnoise_hist.c; docs/sources.md [r5]): the
// same layout with one "CPU-NNN" column per CPU, the histogram of single noise durations
// (osnoise:sample_threshold events). "Index" is a bucket's lower bound in the stated unit
// (bucket number times -b), and min:/avg:/max: are computed from the bucketed values. The
// same errors as parse_rtla_timerlat_hist, naming "rtla osnoise hist".
RtlaHist parse_rtla_osnoise_hist(std::string_view text);

// rtla text with its terminal control sequences (CSI "ESC [ ... letter", "ESC c") removed.
std::string strip_rtla_escapes(std::string_view text);
// Seconds of rtla's "D HH:MM:SS" (get_duration()); nullopt when text is not that.
std::optional<double> parse_rtla_duration(std::string_view text);

// True when text is an rtla histogram (an "Index" header line) rather than a top table.
bool is_rtla_hist(std::string_view text);

// Metrics of an osnoise histogram, per CPU (bare names, as rtla_osnoise_metrics):
//   osnoise.hist_samples: the count: row, single noises recorded (unit "count", kind
//     "count", aggregate sum); osnoise.hist_over: samples beyond the last bucket (the same);
//   osnoise.hist_max_bucket_us: the max: row, the lower bound of the bucket that held the
//     largest single noise (unit "us", better lower, aggregate max): "30" means [30, 30 + the
//     bucket width); never compare it with osnoise top's max single as if it were exact.
// *notes gets the bucket width, the greatest common divisor of the non-zero Index values
// (rows of zeros are left out), when there are two or more rows.
Metrics rtla_osnoise_hist_metrics(const RtlaHist& hist, std::vector<std::string>* notes);

// The osnoise tracer's per-period lines of a trace (parse/trace.h kOsnoiseSummary: "RUNTIME
// NOISE %AVAIL MAX-SINGLE HW NMI IRQ SIRQ THREAD", µs and counts), summed per CPU as rtla
// osnoise top sums them (tools/tracing/rtla/src/osnoise_top.c): periods = lines, runtime, noise
// and the counters summed, max_noise_us the largest per-period noise, max_single_us the largest
// max single, cpu_available_pct = 100 * (runtime - noise) / runtime. CPUs in first-seen order;
// duration_s unset. Lines of other events are ignored; no summary line gives no CPU.
RtlaOsnoiseTop osnoise_top_of_trace(std::string_view trace_text);

// Metrics (bare names; the workload layer prefixes "<workload>."), per CPU (Metric::per_cpu):
//   osnoise.noise_us (sum over the run, mean over CPUs), osnoise.max_noise_us and
//   osnoise.max_single_us (aggregate max), all unit "us", better lower;
//   osnoise.cpu_available_pct (unit "%", better higher, mean);
//   osnoise.<kind>_per_s for hw, nmi, irq, softirq, thread: unit "1/s", kind "count", each
//   CPU's count over the time the osnoise thread sampled that CPU, its Runtime column
//   (windows_s), not over the run's duration: with a runtime shorter than the period (-r
//   900000 of a 1 s period) the thread samples 90 % of the wall time, and the interrupts of the
//   other 10 % are not counted. A CPU with Runtime 0 has no rate (left out of these metrics).
Metrics rtla_osnoise_metrics(const RtlaOsnoiseTop& top);

//   timerlat.irq_{min,avg,max}_us, timerlat.thread_{min,avg,max}_us (and user_* with -u):
//   unit "us", better lower, aggregate min / mean / max; null slot for a CPU without data.
//   A metric whose every CPU lacks data is omitted (with a note in notes).
Metrics rtla_timerlat_metrics(const RtlaHist& hist, std::vector<std::string>* notes);

// Why an rtla run gave no measurement (docs/sources.md [r2], and crashes), or ok.
struct RtlaRunCheck {
  bool ok = true;
  // "tracer unavailable" (the kernel lacks OSNOISE_TRACER / TIMERLAT_TRACER: a kernel
  // configuration failure), "tool configuration failed" (rtla could not set runtime, period or
  // options), "crashed" (killed by a signal: exit status >= 128, or "Floating point
  // exception"), "exited non-zero", "no output".
  std::string kind;
  std::string reason;  // one line, quoting the guest's text (sanitized)
};

// tracer: "osnoise" or "timerlat". rc: the exit status the guest recorded (the shell's $?).
// available_tracers: the guest's /sys/kernel/tracing/available_tracers, nullopt when not read.
// A missing tracer in available_tracers or "Tracer X not found!" in the output is "tracer
// unavailable" whatever the exit status; "Failed to set runtime and/or period" or "Could not
// apply config" is "tool configuration failed"; then the exit status; then an empty stdout.
RtlaRunCheck check_rtla_run(std::string_view tracer, std::string_view out, std::string_view err,
                            int rc, std::optional<std::string_view> available_tracers);

}  // namespace isolab
