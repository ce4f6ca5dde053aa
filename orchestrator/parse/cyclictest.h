// cyclictest (rt-tests 2.x) output parsers: the --json file, the -q text summary, the redrawn
// non-quiet text and the -h histogram text. Pure functions over bytes.
//
// Formats as emitted by rt-tests 2.4 (src/cyclictest/cyclictest.c print_stat(), write_stats(),
// print_hist(); checked against captures in tests/data/cyclictest/):
//  - JSON: top-level keys "cmdline:" and "rt_test_version:" really end with a colon;
//    "return_code"; "resolution_in_ns" is the -N flag (0/1), not a resolution; "thread" is an
//    object keyed "0","1",... with "cycles", "min", "max", "avg" (float), "cpu", "node" and
//    "histogram" (non-zero bins, string keys; empty object without -h). A thread with 0 cycles
//    has min 1000000, max 0 and avg printed as "nan"/"-nan" (invalid JSON).
//    The JSON has no tid, priority, interval, Act or overflow count.
//  - Text: "T: 0 ( 4774) P:80 I:1000 C:   3000 Min:     15 Act:   23 Avg:   20 Max:      86";
//    past 999999 cycles there is no space after "C:"; Avg is truncated to an integer. Without
//    -q the block is redrawn with ESC[<n>A, and only the block after the last ESC byte is final.
//  - Histogram text (-h): "# Histogram", rows "BBBBBB c0<TAB>c1...", "# Total:", "# Min
//    Latencies:", "# Avg Latencies:", "# Max Latencies:", "# Histogram Overflows:" (one column
//    per thread). With -q and -h cyclictest prints no "T:" lines. rt-tests 2.7 (docs/sources.md
//    [t5]) prints no "# Total:" line (a thread's cycles are then its bucket sum plus overflows) and
//    leaves out buckets that are zero in every thread (missing buckets count 0).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parse/metrics.h"

namespace isolab {

struct CyclictestThread {
  int index = 0;                    // thread number N of "T: N" / JSON key "N"
  std::optional<long> tid;          // text only
  std::optional<int> prio;          // text only (P:)
  std::optional<long> interval_us;  // text only (I:), always microseconds
  long cycles = 0;                  // loops measured; 0 means "no samples"
  std::optional<double> min_us;     // absent when cycles == 0
  std::optional<double> act_us;     // text only: the last measured latency
  std::optional<double> avg_us;     // JSON: exact; text: truncated to an integer by cyclictest
  std::optional<double> max_us;     // absent when cycles == 0
  std::map<int, long> histogram;    // bucket -> count, non-zero bins (-h); see histogram_bucket_ns
  std::optional<long> overflows;    // samples beyond the last bucket (text "# Histogram
                                    // Overflows", or JSON cycles minus the histogram total)
  std::optional<int> cpu;           // JSON only

  bool has_samples() const { return cycles > 0; }
};

struct CyclictestResult {
  std::string format;              // "json" or "text"
  std::string version;             // JSON "rt_test_version:" ("2.40"); empty for text
  std::string cmdline;             // JSON "cmdline:"; empty for text
  std::optional<int> return_code;  // JSON "return_code"
  // -N was given: cyclictest measured in ns. The parser already converted min/act/avg/max to us;
  // histogram buckets stay as printed, each histogram_bucket_ns wide (1000 without -N).
  bool values_in_ns = false;
  int histogram_bucket_ns = 1000;
  std::vector<CyclictestThread> threads;  // ordered by index, unique indices
  std::vector<std::string> notes;         // e.g. "thread 1: no samples (0 cycles)"
  std::size_t first_skipped_line = 0;     // text: 1-based line of the first unrecognised line
};

// Parses a cyclictest --json file. "nan"/"-nan"/"inf" tokens outside strings are read as "no
// value" (a 0-cycle thread reports no samples instead of failing). Throws isolab::Error quoting
// the offending text when the input is not JSON, exceeds 64 MiB, or a field has the wrong type
// (the message names the field, e.g. "thread/1/cycles").
CyclictestResult parse_cyclictest_json(std::string_view text);

// Parses cyclictest text output: -q summary lines, redrawn non-quiet output (only the block after
// the last ESC byte counts), and the -h histogram block. Lines "policy: ...", "# ..." comments
// and blank lines are skipped; other unrecognised lines are skipped with a note. values_in_ns:
// the run used -N, so Min/Act/Avg/Max are nanoseconds (converted to us here). Throws
// isolab::Error naming the line number and quoting it when a "T:" or histogram line does not
// parse, or when no thread summary is found at all.
CyclictestResult parse_cyclictest_text(std::string_view text, bool values_in_ns = false);

// Combines the JSON and the text of the same run: JSON values win (its avg is exact); the text
// supplies tid, prio, interval_us, act_us and overflows. Disagreeing cycle counts and threads
// present in only one of them become notes.
CyclictestResult merge_cyclictest(const CyclictestResult& json, const CyclictestResult& text);

// The histogram of all threads added bucket by bucket, with the summed overflow count
// (overflows_known is false when a thread with a histogram had no overflow count).
struct CyclictestHistogram {
  std::map<int, long> counts;
  long overflows = 0;
  bool overflows_known = true;
  int bucket_ns = 1000;
};
CyclictestHistogram merged_histogram(const CyclictestResult& result);

// For cells[].tool_versions: {"cyclictest": the version exactly as printed} (sanitized, at most
// 40 bytes); empty for text output, which carries none. rt-tests prints its version with
// "%1.2f" (docs/sources.md [t7]): a printed form whose last digit is 0 stands for two releases
// ("2.10": 2.1 or 2.10), and then *notes (when given) gets one line saying so.
std::map<std::string, std::string> cyclictest_versions(const CyclictestResult& result,
                                                       std::vector<std::string>* notes);

// Nearest-rank percentile of a bucketed histogram: with N = sum(counts) + overflows and
// k = max(1, ceil(p/100 * N)), the smallest bucket b whose cumulative count (buckets <= b)
// reaches k. Bucket b holds latencies in [b, b+1) bucket units (cyclictest truncates), so the
// result is the lower bound of the bucket that holds the k-th smallest sample. Returns +infinity
// when the k-th sample is an overflow (beyond the histogram range). Throws isolab::Error when p
// is outside (0, 100], a count is negative, or N is 0.
double histogram_percentile(const std::map<int, long>& counts, double p, long overflows = 0);

// Metrics of one run, unit "us", lower is better, threads without samples skipped (with a note):
//   latency_min_us  aggregate "min",  one value per thread
//   latency_avg_us  aggregate "mean", one value per thread
//   latency_max_us  aggregate "max",  one value per thread
//   latency_p99_us, latency_p999_us  aggregate "max", one value per run, from the merged
//     histogram (only with -h, and only when the percentile is not in the overflow range)
// A metric with no valid value is omitted and explained in *notes (if given).
Metrics cyclictest_metrics(const CyclictestResult& result,
                           std::vector<std::string>* notes = nullptr);

}  // namespace isolab
