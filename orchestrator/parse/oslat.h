// oslat output parsers: the --json file (rt-tests 2.0 and later) and the text summary of every
// version (rt-tests, and github.com/xzpeter/oslat v0.1.x before it), into one result per
// measured CPU (the readers: parse/oslat_json.h, parse/oslat_text.h). Pure functions over bytes;
// the text is untrusted (a guest's, or a customer's).
//
// Formats (rt-tests src/oslat/oslat.c write_summary(), write_summary_json(), insert_bucket(),
// calculate(); src/lib/rt-utils.c rt_write_json(); xzpeter/oslat main.c write_summary();
// docs/sources.md [os1]-[os4]; captures in tests/data/oslat/):
//  - Text: after a header (and, in a wrapper's log, any other lines), a table with one column
//    per thread, a TAB after each right-aligned label and a space before each value:
//      "        Core:\t 5 6 7"                 v0.1.x "core_i:"
//      "Counter Freq:\t 2493 2493 2493 (Mhz)"  "CPU Freq:" up to 2.2, "(MHz)" from 2.7,
//                                              v0.1.x "cpu_mhz:" without a unit
//      "    001 (us):\t 426829052 ..."         one row per bucket, labelled with the bucket's
//                                              upper bound in µs ("%03.*f": "0.250 (us)" when
//                                              the width is not a whole µs); the last row
//                                              ends "(including overflows)" (not in v0.1.x);
//                                              -z prints "    ..." for all-zero rows
//      "     Minimum:\t 1 (us)"                also "Average:", "Maximum:", "Max-Min:" (µs;
//                                              "%.3f" with a sub-µs width); v0.1.x only
//                                              "maxlat:"; v0.1.2-0.1.3 "Max Latency:"
//      "    Duration:\t 10.003 (sec)"          the table's last row; v0.1.x "runtime:"
//  - JSON: rt_write_json()'s header, whose keys "cmdline:" and "rt_test_version:" end with a
//    colon and whose cmdline is argv joined by spaces, unescaped; then "num_threads" and
//    "thread": {"0": {"cpu", "freq", "min", "avg", "max", "duration", "histogram": {label:
//    count}}} keyed by strings, the histogram listing only non-empty buckets, under the text's
//    labels ("1", "32"; "0.250"). min and max are integers in oslat's unit: µs, or ns when the
//    bucket width (rt-tests 2.5+ --bucket-width) is not a multiple of 1000 ns, the labels then
//    having three decimals; avg is µs either way, printed "%3lf" (a thread without samples
//    prints nan, min 2^64-1 and max 0).
//
// What a value means, by version (insert_bucket()): a gap of g µs is counted as
//  - up to 2.4 and in v0.1.x: floor(g) + 1 (bucket "N" holds gaps in [N-1, N) µs, and min and
//    max are such labels: max 17 means the longest gap was 16 to 17 µs);
//  - 2.5 and 2.6: ceil(g) in the unit, so buckets, min and max are one unit high;
//  - 2.7 and later: floor(g) in the unit (bucket "L" of width w holds [L-w, L), as before 2.5;
//    max 16 means 16 to 17 µs).
// Values are reported as printed (in µs); the version as printed (rt-tests prints "%1.2f", so
// "2.10" is 2.1 or 2.10, docs/sources.md [t7]), never compared as a number.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parse/metrics.h"

namespace isolab {

struct OslatThread {
  int index = 0;                    // column of the text table / key of JSON "thread", from 0
  int cpu = 0;                      // "Core" / "core_i" / "cpu": the CPU oslat pinned it to
  std::optional<long> counter_mhz;  // the counter's frequency oslat measured, MHz
  // µs. min and avg are absent in v0.1.x text and for a thread without samples; avg is also
  // absent when oslat computed it wrongly (see parse/oslat_json.h).
  std::optional<double> min_us, avg_us, max_us;
  std::optional<double> duration_s;  // "Duration" / "runtime" / "duration", seconds
  // Non-empty buckets: the label as an upper bound in ns (label µs x 1000) -> count. A bucket
  // holds the gaps in [label - bucket width, label); the last bucket also every longer gap.
  std::map<long long, long long> buckets;
  long long samples = 0;  // the gaps counted: the sum of the buckets

  bool has_samples() const { return samples > 0; }
};

struct OslatResult {
  std::string format;   // "json", "text", or "text-v0.1" (xzpeter/oslat before rt-tests)
  std::string version;  // as printed: "2.40" (JSON or the "oslat V 2.40" banner), "v0.1.0";
                        // "" when the output does not say
  std::string cmdline;  // JSON "cmdline:" (see parse/oslat_json.h); "" for text
  std::optional<int> return_code;  // JSON "return_code" (oslat always writes 0)
  // Bucket width in ns; nullopt when the output does not say (a sparse histogram: JSON, or
  // text printed with -z, whose labels leave it open, and no readable command line).
  std::optional<long long> bucket_width_ns;
  // Label (ns) of the bucket that also holds the overflows; nullopt when unknown (JSON without
  // a readable command line, or with -B, whose bias the file does not hold).
  std::optional<long long> last_bucket_ns;
  std::vector<OslatThread> threads;  // by index; CPUs unique
  std::vector<std::string> notes;    // what was left out or repaired, and why
};

// Whether the thread's highest non-empty bucket holds gaps beyond the histogram: it is the last
// bucket (r.last_bucket_ns), or, when that is unknown, the thread's max reaches its label (a
// max below it proves every gap fitted; no max proves nothing).
bool top_bucket_overflows(const OslatResult& r, const OslatThread& t);

// The histogram of one thread as result.json cells[].histograms stores it (docs/RESULT_SCHEMA.md,
// the cyclictest -h convention): keys are each bucket's lower bound, an integer in `unit`
// ("us" when the width is a whole number of µs, else "ns"); the last bucket, which also holds
// every longer gap, is `overflows` (at or beyond its lower bound), never a bucket. When
// result.last_bucket_ns is unknown, the highest non-empty bucket counts as overflows whenever
// the thread's max reaches its label. nullopt, with a note, when the width is unknown; throws
// isolab::Error when a label is below the width (not a layout oslat prints).
struct OslatHistogram {
  std::string unit;                       // "us" or "ns"
  long long bucket_ns = 0;                // the width
  std::map<long long, long long> counts;  // lower bound (unit) -> gaps
  long long overflows = 0;
};
std::optional<OslatHistogram> oslat_histogram(const OslatResult& result, const OslatThread& thread,
                                              std::vector<std::string>* notes);

// cells[].histograms entries of a run: "<name>[cpu<N>]" -> {"unit", "bucket_ns", "counts":
// {"<lower bound>": n}, "overflows"} for each thread with samples whose histogram is known
// (oslat_histogram), so that compare merges each CPU's histogram over the boots.
nlohmann::json oslat_histograms_json(const OslatResult& result, const std::string& name,
                                     std::vector<std::string>* notes);

// Metrics of one run, per CPU (Metric::per_cpu, cpus = the threads' CPUs), unit "us", lower is
// better: oslat_min_us (aggregate "min"), oslat_avg_us ("mean"), oslat_max_us ("max"). A
// thread without samples has a null slot; a metric no thread has is omitted, with a note.
Metrics oslat_metrics(const OslatResult& result, std::vector<std::string>* notes);

// For cells[].tool_versions: {"oslat": the version as printed} (sanitized, at most 40 bytes);
// empty when the output names none. *notes gets the %1.2f ambiguity (docs/sources.md [t7]) and,
// for "2.50" and "2.60", the one-unit rounding of those releases.
std::map<std::string, std::string> oslat_versions(const OslatResult& result,
                                                  std::vector<std::string>* notes);

}  // namespace isolab
