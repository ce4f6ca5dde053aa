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
// "not accounted", not zero throughput (docs/sources.md [s1];
// https://github.com/ColinIanKing/stress-ng/issues/194): it is stored as missing.
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
                                                 // when not accounted ([s1])
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
  // available_cpu_s / run_time_s rounded ([s2]: 5762.40 / 60.03 -> 96); nullopt without both.
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

// ---- Exit status and log (docs/sources.md [s3]; stress-ng manual, EXIT STATUS; stress-ng.c
// stress_exit_status_summary()).
//
// What a run said about itself in its log (stderr; the "stress-ng: <level>: [pid]" prefix is
// optional). Lines read (others are ignored; nothing here throws, the text may be a guest's):
//   "setting to a 5 second run per stressor"              -> run_seconds
//   "dispatching hogs: 2 cpu, 1 vm"                       -> dispatched
//   "skipped: 1: apparmor (1)", "passed: 0", "failed: 2: vm (2)", "metrics untrustworthy: 0"
//      (newer than 0.15.06; absent there)                  -> summary_seen and the lists
//   "<s>: ... skipping stressor", "<s> stressor will be skipped, ...", "... not implemented ..."
//                                                          -> skipped
//   "process [pid] (<s>) terminated with an error, exit status=2 (stressor failed)",
//   "process [pid] (<s>) terminated on signal: 9 (SIGKILL)" -> failed
//   "process [pid] (<s>) aborted early, out of system resources" -> no_resources
//   "<s>: WARNING: bogo-ops counter in non-ready state, metrics are untrustworthy",
//   "<s> instance N corrupted bogo-ops counter ..." / "... hash error in bogo-ops counter ..."
//                                                          -> untrustworthy
//   "No stress workers invoked"                            -> no_workers_line
//   "successful run completed" / "unsuccessful run completed" -> completed
// Each map goes from stressor name to the first line that says so.
struct StressngLogLine {
  std::size_t line = 0;  // 1-based; 0: not seen
  std::string text;      // the line without its prefix, sanitized and cut to 200 bytes
};
struct StressngLog {
  std::vector<std::string> dispatched;
  std::optional<double> run_seconds;  // "setting to a 5 second run per stressor"
  std::map<std::string, StressngLogLine> passed, skipped, failed, no_resources, untrustworthy;
  StressngLogLine passed_summary;  // the "passed:" line (line 0: no summary, as in 0.15.06)
  StressngLogLine no_workers;      // "No stress workers invoked"
  StressngLogLine completed;       // "(un)successful run completed in ..."
  std::optional<bool> successful;  // from `completed`
};
StressngLog parse_stressng_log(std::string_view text);

// The meaning of a stress-ng exit status (stress-ng.h EXIT_*): 0 "success", 1 "harness or
// usage error", 2 "a stressor failed (or an unexpected signal)", 3 "not enough resources", 4
// "not implemented", 5 "killed by a signal", 6 "a stressor ended with _exit()", 7 "metrics
// untrustworthy"; anything else "not a stress-ng exit status".
std::string stressng_exit_meaning(int status);

// How a run counts (docs/sources.md [s3]). Decided in this order:
//  1. failed: the exit status is 1-6 or not a stress-ng status, or the log shows a failed or
//     resource-starved stressor, or an "unsuccessful run"; reason "stress-ng exited 2 (a
//     stressor failed ...): vm: <the log line>".
//  2. invalid: a requested stressor did not run: the log says it was skipped, the summary's
//     "passed:" list lacks it, "No stress workers invoked", or (without a summary) it has no
//     metrics row or a row with 0 bogo ops in less than half the run time (1 s when the log does
//     not give it; 0.15.06 prints such a row for a skipped stressor); reason "stressor sctp did
//     not run: <the log line>". Exit status 0 does not make such a run a success. A stressor
//     that ran its time and counted 0 bogo ops (stress-ng calls it passed) is left valid.
//  3. ok; untrustworthy names the stressors whose metrics must not enter a comparison: those the
//     log calls untrustworthy, or every reported stressor under exit status 7.
// exit_status: nullopt when unknown (an imported log). requested: the stressors asked for
// (empty: the log's dispatched list). reported: the stressors with a metrics row.
struct StressngRunCheck {
  enum class Outcome { ok, invalid, failed } outcome = Outcome::ok;
  std::string reason;
  std::size_t line = 0;  // the log line behind the outcome; 0 when none (exit status alone)
  std::map<std::string, std::string> untrustworthy;  // stressor -> why
};
StressngRunCheck check_stressng_run(const StressngLog& log, std::optional<int> exit_status,
                                    std::vector<std::string> requested,
                                    const StressngResult& reported);

}  // namespace isolab
