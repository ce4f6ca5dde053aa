#include "parse/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

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
    metrics.emplace(name,
                    Metric{unit, lower_is_better, aggregate, {value}, std::nullopt, {}, {}, {}});
    return true;
  }
  Metric& m = it->second;
  if (m.per_cpu)
    throw Error("metric " + name + ": has per-CPU evidence and is built whole; cannot append");
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

std::optional<Metric> make_per_cpu_metric(const std::string& unit, bool lower_is_better,
                                          const std::string& aggregate, MetricPerCpu per_cpu) {
  if (!is_valid_aggregate(aggregate))
    throw Error("per-CPU metric: unknown aggregate \"" + sanitize_excerpt(aggregate, 40) + "\"");
  if (per_cpu.slots.size() != per_cpu.cpus.size() ||
      (!per_cpu.counts.empty() && per_cpu.counts.size() != per_cpu.cpus.size()))
    throw Error("per-CPU metric (" + unit + "): " + std::to_string(per_cpu.cpus.size()) +
                " cpus but " + std::to_string(per_cpu.slots.size()) + " values and " +
                std::to_string(per_cpu.counts.size()) + " counts");
  if (per_cpu.window_s && !(std::isfinite(*per_cpu.window_s) && *per_cpu.window_s > 0))
    throw Error("per-CPU metric (" + unit + "): window_s must be finite and positive");
  if (!per_cpu.windows_s.empty() && per_cpu.windows_s.size() != per_cpu.cpus.size())
    throw Error("per-CPU metric (" + unit + "): " + std::to_string(per_cpu.cpus.size()) +
                " cpus but " + std::to_string(per_cpu.windows_s.size()) + " windows");
  for (double w : per_cpu.windows_s)
    if (!(std::isfinite(w) && w > 0))
      throw Error("per-CPU metric (" + unit + "): windows_s must be finite and positive");
  Metric m{unit, lower_is_better, aggregate, {}, std::nullopt, {}, {}, {}};
  for (auto& slot : per_cpu.slots) {
    if (slot && !std::isfinite(*slot)) slot.reset();
    if (slot) m.values.push_back(*slot);
  }
  if (m.values.empty()) return std::nullopt;
  m.per_cpu = std::move(per_cpu);
  return m;
}

std::size_t mark_untrustworthy(Metrics& metrics, const std::string& prefix,
                               const std::string& why) {
  std::size_t n = 0;
  for (auto& [name, m] : metrics) {
    if (!name.starts_with(prefix)) continue;
    if (m.untrustworthy.empty()) m.untrustworthy = why;
    ++n;
  }
  return n;
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
  if (!metric.untrustworthy.empty()) j["untrustworthy"] = metric.untrustworthy;
  if (!metric.kind.empty()) j["kind"] = metric.kind;
  if (!metric.source.empty()) j["source"] = metric.source;
  if (!metric.per_cpu) return;
  const MetricPerCpu& pc = *metric.per_cpu;
  nlohmann::json slots = nlohmann::json::array();
  for (const auto& s : pc.slots) {
    if (s && !std::isfinite(*s))
      throw Error("metric with unit \"" + metric.unit + "\" holds a non-finite value");
    slots.push_back(s ? nlohmann::json(*s) : nlohmann::json());
  }
  j["values"] = std::move(slots);
  j["cpus"] = pc.cpus;
  if (!pc.kind.empty()) j["kind"] = pc.kind;
  if (!pc.counts.empty()) j["counts"] = pc.counts;
  if (pc.window_s) j["window_s"] = *pc.window_s;
  if (!pc.windows_s.empty()) j["windows_s"] = pc.windows_s;
}

namespace {
std::string quote_json(const nlohmann::json& j) {
  return sanitize_excerpt(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 200);
}

// Reads "cpus", "kind", "counts", "window_s", "windows_s" beside the already read "values"
// slots.
MetricPerCpu per_cpu_from_json(const nlohmann::json& j, std::vector<std::optional<double>> slots,
                               bool all_null) {
  MetricPerCpu pc;
  const auto& cpus = j.at("cpus");
  if (!cpus.is_array() || cpus.size() != slots.size())
    throw Error("metric: field \"cpus\" must be an array as long as \"values\", got " +
                quote_json(cpus));
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    if (!cpus[i].is_number_integer() || cpus[i].get<long long>() < 0 ||
        cpus[i].get<long long>() > 8191)
      throw Error("metric: field \"cpus/" + std::to_string(i) +
                  "\" must be a CPU number (0-8191), got " + quote_json(cpus[i]));
    pc.cpus.push_back(cpus[i].get<int>());
  }
  if (all_null) throw Error("metric: field \"values\" holds no number, only null");
  pc.slots = std::move(slots);
  if (auto k = j.find("kind"); k != j.end()) {
    if (!k->is_string() || k->get<std::string>().empty())
      throw Error("metric: field \"kind\" must be a non-empty string, got " + quote_json(*k));
    pc.kind = k->get<std::string>();
  }
  if (auto c = j.find("counts"); c != j.end()) {
    if (!c->is_array() || c->size() != pc.cpus.size())
      throw Error("metric: field \"counts\" must be an array as long as \"cpus\", got " +
                  quote_json(*c));
    for (std::size_t i = 0; i < c->size(); ++i) {
      if (!(*c)[i].is_number_integer() || (*c)[i].get<long long>() < 0)
        throw Error("metric: field \"counts/" + std::to_string(i) +
                    "\" must be a non-negative integer, got " + quote_json((*c)[i]));
      pc.counts.push_back((*c)[i].get<long long>());
    }
  }
  if (auto w = j.find("window_s"); w != j.end()) {
    if (!w->is_number() || !std::isfinite(w->get<double>()) || w->get<double>() <= 0)
      throw Error("metric: field \"window_s\" must be a positive number, got " + quote_json(*w));
    pc.window_s = w->get<double>();
  }
  if (auto w = j.find("windows_s"); w != j.end()) {
    if (!w->is_array() || w->size() != pc.cpus.size())
      throw Error("metric: field \"windows_s\" must be an array as long as \"cpus\", got " +
                  quote_json(*w));
    for (std::size_t i = 0; i < w->size(); ++i) {
      const auto& x = (*w)[i];
      if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() <= 0)
        throw Error("metric: field \"windows_s/" + std::to_string(i) +
                    "\" must be a positive number, got " + quote_json(x));
      pc.windows_s.push_back(x.get<double>());
    }
  }
  return pc;
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
  const bool per_cpu = j.contains("cpus");
  std::vector<std::optional<double>> slots;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (per_cpu && values[i].is_null()) {
      slots.emplace_back();
      continue;
    }
    if (!values[i].is_number())
      throw Error("metric: field \"values/" + std::to_string(i) + "\" must be a number, got " +
                  quote_json(values[i]));
    double v = values[i].get<double>();
    if (!std::isfinite(v))
      throw Error("metric: field \"values/" + std::to_string(i) + "\" is not finite");
    out.values.push_back(v);
    slots.emplace_back(v);
  }
  if (per_cpu) out.per_cpu = per_cpu_from_json(j, std::move(slots), out.values.empty());
  if (auto u = j.find("untrustworthy"); u != j.end()) {
    if (!u->is_string() || u->get<std::string>().empty())
      throw Error("metric: field \"untrustworthy\" must be a non-empty string, got " +
                  quote_json(*u));
    out.untrustworthy = u->get<std::string>();
  }
  for (auto [key, field] : {std::pair{"kind", &out.kind}, std::pair{"source", &out.source}}) {
    auto it = j.find(key);
    if (it == j.end() || (per_cpu && std::string(key) == "kind")) continue;
    if (!it->is_string() || it->get<std::string>().empty())
      throw Error(std::string("metric: field \"") + key + "\" must be a non-empty string, got " +
                  quote_json(*it));
    *field = it->get<std::string>();
  }
  metric = std::move(out);
}

}  // namespace isolab
