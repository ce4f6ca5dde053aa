#include "parse/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/error.h"
#include "base/files.h"

namespace isolab {

bool is_valid_aggregate(std::string_view aggregate) {
  return aggregate == "mean" || aggregate == "max" || aggregate == "min" || aggregate == "sum";
}

bool add_metric_value(Metrics& metrics, const std::string& name, const std::string& unit,
                      bool lower_is_better, const std::string& aggregate, double value) {
  if (!is_valid_aggregate(aggregate))
    throw Error("metric " + name + ": unknown aggregate \"" + sanitize_excerpt(aggregate, 40) +
                "\" (want mean, max, min or sum)");
  if (!std::isfinite(value)) return false;
  auto it = metrics.find(name);
  if (it == metrics.end()) {
    metrics.emplace(name, Metric{unit, lower_is_better, aggregate, {value}});
    return true;
  }
  Metric& m = it->second;
  if (m.unit != unit || m.lower_is_better != lower_is_better || m.aggregate != aggregate)
    throw Error("metric " + name + ": already recorded as unit \"" + m.unit + "\", " +
                (m.lower_is_better ? "lower" : "higher") + " better, aggregate " + m.aggregate +
                "; cannot add a value with unit \"" + unit + "\", " +
                (lower_is_better ? "lower" : "higher") + " better, aggregate " + aggregate);
  m.values.push_back(value);
  return true;
}

void merge_metrics(Metrics& into, const Metrics& from) {
  for (const auto& [name, m] : from)
    for (double v : m.values)
      add_metric_value(into, name, m.unit, m.lower_is_better, m.aggregate, v);
}

double reduce_metric(const Metric& metric) {
  const auto& v = metric.values;
  if (v.empty()) throw Error("metric with unit \"" + metric.unit + "\" has no values to reduce");
  if (metric.aggregate == "mean") return std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  if (metric.aggregate == "sum") return std::accumulate(v.begin(), v.end(), 0.0);
  if (metric.aggregate == "max") return *std::max_element(v.begin(), v.end());
  if (metric.aggregate == "min") return *std::min_element(v.begin(), v.end());
  throw Error("metric: unknown aggregate \"" + sanitize_excerpt(metric.aggregate, 40) + "\"");
}

void to_json(nlohmann::json& j, const Metric& metric) {
  for (double v : metric.values)
    if (!std::isfinite(v))
      throw Error("metric with unit \"" + metric.unit + "\" holds a non-finite value");
  j = nlohmann::json{{"unit", metric.unit},
                     {"better", metric.lower_is_better ? "lower" : "higher"},
                     {"aggregate", metric.aggregate},
                     {"values", metric.values}};
}

namespace {
std::string quote_json(const nlohmann::json& j) {
  return sanitize_excerpt(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 200);
}
}  // namespace

void from_json(const nlohmann::json& j, Metric& metric) {
  if (!j.is_object()) throw Error("metric: expected an object, got " + quote_json(j));
  auto field = [&](const char* key) -> const nlohmann::json& {
    auto it = j.find(key);
    if (it == j.end()) throw Error(std::string("metric: missing field \"") + key + "\"");
    return *it;
  };
  const auto& unit = field("unit");
  if (!unit.is_string() || unit.get<std::string>().empty())
    throw Error("metric: field \"unit\" must be a non-empty string, got " + quote_json(unit));
  const auto& better = field("better");
  if (!better.is_string() || (better != "lower" && better != "higher"))
    throw Error("metric: field \"better\" must be \"lower\" or \"higher\", got " +
                quote_json(better));
  const auto& aggregate = field("aggregate");
  if (!aggregate.is_string() || !is_valid_aggregate(aggregate.get<std::string>()))
    throw Error("metric: field \"aggregate\" must be mean, max, min or sum, got " +
                quote_json(aggregate));
  const auto& values = field("values");
  if (!values.is_array() || values.empty())
    throw Error("metric: field \"values\" must be a non-empty array, got " + quote_json(values));
  Metric out;
  out.unit = unit.get<std::string>();
  out.lower_is_better = better == "lower";
  out.aggregate = aggregate.get<std::string>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!values[i].is_number())
      throw Error("metric: field \"values/" + std::to_string(i) + "\" must be a number, got " +
                  quote_json(values[i]));
    double v = values[i].get<double>();
    if (!std::isfinite(v))
      throw Error("metric: field \"values/" + std::to_string(i) + "\" is not finite");
    out.values.push_back(v);
  }
  metric = std::move(out);
}

}  // namespace isolab
