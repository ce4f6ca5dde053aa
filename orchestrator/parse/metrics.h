// Typed metric samples produced by every parser and stored in result.json.
//
// Shape in JSON (see docs/RESULT_SCHEMA.md, cells[].metrics):
//   {"unit": "us", "better": "lower"|"higher", "aggregate": "mean"|"max"|"min"|"sum",
//    "values": [ ...finite numbers... ]}
// JSON has no NaN, so a value that is not finite is never stored: the parsers skip it, and a
// metric left with no valid value is not added at all (the parser records a note instead).
//
// A metric with per-CPU evidence (Metric::per_cpu, the trace-derived noise.* metrics) has more
// fields beside these, and its "values" may hold null for a CPU without a value:
//   {"unit": "1/s", "better": "lower", "aggregate": "mean", "kind": "count",
//    "cpus": [5, 6, 7], "counts": [9, 0, 0], "window_s": 5.01, "values": [1.796, 0, 0]}
// "kind", "counts" and "window_s" appear only when set.
//
// Instruction counts (workload/insn_cell.h) carry "kind": "instructions" and "source":
// "tcg-plugin" | "pmu"; per CPU, "counts" are then instructions and values counts / window_s.
//
// A metric whose values the tool itself does not vouch for (stress-ng exit status 7, "metrics
// untrustworthy", docs/sources.md [s3]) carries "untrustworthy": "<why>"; compare keeps such a
// cell's values out of the test and lists them (compare/compare.h).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

// The per-CPU side of a metric: which CPU each JSON "values" slot belongs to.
struct MetricPerCpu {
  std::vector<int> cpus;                     // "cpus": the CPU of each slot
  std::vector<std::optional<double>> slots;  // "values": one per cpus entry; nullopt -> null
  std::string kind;                          // "kind": "count" (slots = counts / window_s) or ""
  std::vector<long long> counts;             // "counts": kind "count" only, one per cpus entry
  std::optional<double> window_s;            // "window_s": kind "count" only, seconds
  // "windows_s": kind "count" only, instead of window_s when each CPU was sampled for a time of
  // its own (rtla osnoise's Runtime column): seconds, one per cpus entry, each > 0, and slot i
  // = counts[i] / windows_s[i].
  std::vector<double> windows_s = {};

  bool operator==(const MetricPerCpu&) const = default;
};

struct Metric {
  // "us", "ns", "cycles", "bogo ops/s", "s", "count", "1/s", "ms".
  std::string unit;
  bool lower_is_better = true;
  // How the values of one cell (one boot) reduce to one number: "mean" | "max" | "min" | "sum".
  std::string aggregate = "mean";
  // Finite samples in the order they were parsed (e.g. one per cyclictest thread).
  // With per_cpu set: the non-null slots, in slot order (what reduce_metric() reduces).
  std::vector<double> values;
  // Per-CPU evidence; nullopt for ordinary metrics. Build it with make_per_cpu_metric().
  std::optional<MetricPerCpu> per_cpu;
  // Non-empty: why these values must not enter a comparison ("untrustworthy" in JSON).
  std::string untrustworthy = {};
  // "kind" of a metric without per-CPU evidence ("instructions": guest instructions counted by
  // the TCG plugin or the guest PMU; compare/verdict.h); "" = absent. A per-CPU metric keeps
  // its kind in per_cpu->kind.
  std::string kind = {};
  // Where the values come from, for metrics that have several possible sources: "tcg-plugin"
  // (QEMU's plugin, counted outside the guest) or "pmu" (the guest's performance counters);
  // "" = absent. compare refuses to test A against B across sources.
  std::string source = {};

  bool operator==(const Metric&) const = default;
};

// Metric name -> metric. Names inside a parser's result are bare ("latency_max_us",
// "cpu.bogo_ops_per_s_real"); the workload layer prefixes "<workload name>.".
using Metrics = std::map<std::string, Metric>;

// True for "mean", "max", "min", "sum".
bool is_valid_aggregate(std::string_view aggregate);

// Appends value to metrics[name], creating the metric with unit, direction and aggregate if it
// is new. Returns false and stores nothing when value is not finite (NaN, inf). Throws
// isolab::Error naming the metric when it already exists with a different unit, direction or
// aggregate, or with per-CPU evidence (such a metric is built whole), or when aggregate is not
// valid.
bool add_metric_value(Metrics& metrics, const std::string& name, const std::string& unit,
                      bool lower_is_better, const std::string& aggregate, double value);

// Appends every value of from into into (same rules as add_metric_value).
void merge_metrics(Metrics& into, const Metrics& from);

// A metric with per-CPU evidence. Returns nullopt when no slot holds a finite value (a metric
// without samples is omitted). A slot that is not finite becomes nullopt. Throws isolab::Error
// when the aggregate is not valid, when cpus and slots (or a non-empty counts or windows_s)
// differ in length, or when window_s or an entry of windows_s is not finite and positive.
std::optional<Metric> make_per_cpu_metric(const std::string& unit, bool lower_is_better,
                                          const std::string& aggregate, MetricPerCpu per_cpu);

// The per-cell value of a metric: its aggregate over values (mean = arithmetic mean).
// Throws isolab::Error when values is empty or the aggregate is unknown.
double reduce_metric(const Metric& metric);

// Marks every metric of `metrics` whose name starts with `prefix` untrustworthy for `why`
// (keeps an earlier reason). Returns how many were marked.
std::size_t mark_untrustworthy(Metrics& metrics, const std::string& prefix, const std::string& why);

// nlohmann::json conversion. to_json throws isolab::Error if a value is not finite (a bug: the
// parsers never store one). from_json throws isolab::Error naming the bad field ("unit",
// "better", "aggregate", "values/3", "cpus/1", "counts") when the object does not have the
// shape above ("untrustworthy" must be a non-empty string when present); an empty "values" array is
// rejected too, because a metric without samples is omitted, not stored. null in "values" is
// accepted only beside "cpus" (and not for all slots).
void to_json(nlohmann::json& j, const Metric& metric);
void from_json(const nlohmann::json& j, Metric& metric);

}  // namespace isolab
