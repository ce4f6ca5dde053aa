// Typed metric samples produced by every parser and stored in result.json.
//
// Shape in JSON (see RESULT_SCHEMA.md, cells[].metrics):
//   {"unit": "us", "better": "lower"|"higher", "aggregate": "mean"|"max"|"min"|"sum",
//    "values": [ ...finite numbers... ]}
// JSON has no NaN, so a value that is not finite is never stored: the parsers skip it, and a
// metric left with no valid value is not added at all (the parser records a note instead).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

struct Metric {
  // "us", "ns", "cycles", "bogo ops/s", "s", "count".
  std::string unit;
  bool lower_is_better = true;
  // How the values of one cell (one boot) reduce to one number: "mean" | "max" | "min" | "sum".
  std::string aggregate = "mean";
  // Finite samples in the order they were parsed (e.g. one per cyclictest thread).
  std::vector<double> values;

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
// aggregate, or when aggregate is not valid.
bool add_metric_value(Metrics& metrics, const std::string& name, const std::string& unit,
                      bool lower_is_better, const std::string& aggregate, double value);

// Appends every value of from into into (same rules as add_metric_value).
void merge_metrics(Metrics& into, const Metrics& from);

// The per-cell value of a metric: its aggregate over values (mean = arithmetic mean).
// Throws isolab::Error when values is empty or the aggregate is unknown.
double reduce_metric(const Metric& metric);

// nlohmann::json conversion. to_json throws isolab::Error if a value is not finite (a bug: the
// parsers never store one). from_json throws isolab::Error naming the bad field ("unit",
// "better", "aggregate", "values/3") when the object does not have the shape above; an empty
// "values" array is rejected too, because a metric without samples is omitted, not stored.
void to_json(nlohmann::json& j, const Metric& metric);
void from_json(const nlohmann::json& j, Metric& metric);

}  // namespace isolab
