// stress-ng output parsers: the --yaml file and the --metrics-brief/--metrics (--times) text.
//
// Formats as emitted by stress-ng 0.15.06 (stress-ng.c metrics_dump(), times_dump(); captures in
// tests/data/stress-ng/host-*):
//  - YAML: a "---" document with "system-info:" (stress-ng-version, ...), "metrics:" (a list of
//    mappings: stressor, bogo-ops, bogo-ops-per-second-usr-sys-time,
//    bogo-ops-per-second-real-time, wall-clock-time, user-time, system-time,
//    cpu-usage-per-instance, max-rss, and stressor-specific extras such as
//    nanosecs-per-mlock-call), optionally "times:" (run-time, available-cpu-time, user-time,
//    system-time, total-time, ...), ended by "...". Older versions and hand-written reports use
//    flow style ("metrics: [ {stressor: clone, bogo-ops: 38891, ...} ]"); both are read.
//  - Text rows: "[stress-ng: info:  [pid]] stressor bogo-ops real-s usr-s sys-s ops/s-real
//    ops/s-usr+sys [cpu%-per-instance [max-rss-KB]]" (0.15 writes "metrc:" as the level). The
//    --times block: "for a 60.03s run time:", "5762.40s available CPU time", "... user time",
//    "... system time", "... total time".
// One row of stress-ng already totals all instances of its stressor.
// A usr+sys rate of 0 while CPU time was not accounted (user+system time 0, or bogo ops > 0) is
// "not accounted", not zero throughput (case S1, stress-ng issue 194): it is stored as missing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parse/metrics.h"

namespace isolab {

struct StressngStressor {
  std::string stressor;  // "cpu", "ramfs", ...
  std::optional<double> bogo_ops;
  std::optional<double> bogo_ops_per_s_real;     // per wall-clock second
  std::optional<double> bogo_ops_per_s_usr_sys;  // per second of user+system CPU time; absent
                                                 // when not accounted (S1)
  std::optional<double> wall_clock_s;
  std::optional<double> user_s;
  std::optional<double> system_s;
  std::optional<double> cpu_usage_per_instance_pct;
  std::optional<double> max_rss_kb;
  std::map<std::string, double> extra;  // YAML only: other numeric keys as written
                                        // ("nanosecs-per-mlock-call")
};

struct StressngTimes {  // --times
  std::optional<double> run_time_s;
  std::optional<double> available_cpu_s;  // run time x CPUs
  std::optional<double> user_s;
  std::optional<double> system_s;
  std::optional<double> total_s;
  // available_cpu_s / run_time_s rounded (S2: 5762.40 / 60.03 -> 96); nullopt without both.
  std::optional<int> cpus() const;
};

struct StressngResult {
  std::string format;   // "yaml" or "text"
  std::string version;  // YAML system-info stress-ng-version ("0.15.06"); empty for text
  std::vector<StressngStressor> stressors;  // in output order
  std::optional<StressngTimes> times;
  std::vector<std::string> notes;
};

// Parses a --yaml file (block or flow style; the subset stress-ng writes). Throws isolab::Error
// naming the line and quoting it when the YAML does not parse, when there is no "metrics" list,
// or when a metrics entry lacks "stressor" or has a non-numeric value (naming the key).
StressngResult parse_stressng_yaml(std::string_view text);

// Parses --metrics-brief / --metrics text output with or without the "stress-ng: <level>:
// [pid]" prefix; header, "miscellaneous metrics" and other lines are skipped. Throws
// isolab::Error quoting the input when no stressor row is found.
StressngResult parse_stressng_text(std::string_view text);

// Per stressor S (one value per stressor row):
//   S.bogo_ops                unit "bogo ops",   higher better, aggregate "sum" (a total, not an
//                             event count: compare treats it as a timing-like measure)
//   S.bogo_ops_per_s_real     unit "bogo ops/s", higher better, aggregate "sum"
//   S.bogo_ops_per_s_usr_sys  unit "bogo ops/s", higher better, aggregate "sum"
// "sum": a row already totals the instances of one stress-ng invocation, so several rows of the
// same stressor in one boot come from concurrent invocations whose throughput adds up. Missing
// values are skipped; a metric with no value is omitted with a note in *notes.
Metrics stressng_metrics(const StressngResult& result, std::vector<std::string>* notes = nullptr);

// The small YAML subset reader behind parse_stressng_yaml, exposed for tests and fuzzing.
// We use our own rather than yaml-cpp: stress-ng writes a fixed, tiny subset (block mappings and
// sequences by indentation, "- key: value" items, flow [ ] and { } collections, plain and
// quoted scalars, "---"/"..." markers), and a full YAML library would be one more dependency
// for it. Scalars become JSON strings (no type guessing), mappings objects, sequences arrays.
// Not supported: anchors, tags, block scalars (| >), multi-line plain scalars, several
// documents (reading stops at "..." or a second "---"). Throws isolab::Error with the line.
nlohmann::json parse_yaml_subset(std::string_view text);

}  // namespace isolab
