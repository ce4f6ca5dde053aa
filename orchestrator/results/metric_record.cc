#include "results/metric_record.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/error.h"
#include "base/json_text.h"
#include "cmdline/cpulist.h"
#include "results/lenient.h"

namespace isolab::results {

namespace {

constexpr const char* kAggregates[] = {"mean", "max", "min", "sum"};
constexpr const char* kKinds[] = {"count", "timing", "instructions"};

template <std::size_t N>
bool one_of(const std::string& s, const char* const (&names)[N]) {
  return std::find(std::begin(names), std::end(names), s) != std::end(names);
}

std::string read_aggregate(const nlohmann::json& m, const std::string& mp) {
  const nlohmann::json& agg = field(m, "aggregate");
  std::string how = agg.is_null() ? "mean" : str_or(m, "aggregate", "?");
  if (!one_of(how, kAggregates))
    throw SpecError(mp + "/aggregate",
                    "aggregate must be mean, max, min or sum, got " + json_text(agg));
  return how;
}

// A null value is missing (a usr+sys rate the guest did not account, for one).
void read_values(const nlohmann::json& m, const std::string& mp, MetricRecord& r) {
  auto vs = m.find("values");
  if (vs == m.end() || !vs->is_array())
    throw SpecError(mp + "/values", "metric values must be an array");
  for (std::size_t k = 0; k < vs->size(); ++k) {
    const auto& v = (*vs)[k];
    if (v.is_null()) {
      r.slots.push_back(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      throw SpecError(mp + "/values/" + std::to_string(k),
                      "metric value must be a finite number or null, got " + value_text(v));
    r.values.push_back(v.get<double>());
    r.slots.push_back(r.values.back());
    if (r.values.back() < 0 && !r.first_negative) r.first_negative = {k, json_text(v)};
  }
}

std::string read_kind(const nlohmann::json& m, const std::string& mp) {
  const nlohmann::json& k = field(m, "kind");
  if (k.is_null()) return "";
  if (!k.is_string() || !one_of(k.get<std::string>(), kKinds))
    throw SpecError(
        mp + "/kind",
        "metric kind must be \"count\", \"timing\" or \"instructions\", got " + json_text(k));
  return k.get<std::string>();
}

}  // namespace

std::vector<MetricEntry> metric_entries(const CellRecord& c, const std::string& cell_pointer) {
  std::vector<MetricEntry> out;
  if (!c.metrics || c.metrics->is_null()) return out;
  for (const auto& [name, m] : c.metrics->items())
    out.push_back({name, cell_pointer + "/metrics/" + json_pointer_token(name), &m});
  return out;
}

double MetricRecord::aggregated() const {
  if (aggregate == "max") return *std::max_element(values.begin(), values.end());
  if (aggregate == "min") return *std::min_element(values.begin(), values.end());
  double sum = 0;
  for (double x : values) sum += x;
  if (aggregate == "sum") return sum;
  return sum / static_cast<double>(values.size());
}

MetricRecord metric_record(const MetricEntry& e) {
  const nlohmann::json& m = *e.json;
  if (!m.is_object()) throw SpecError(e.pointer, "metric must be an object");
  MetricRecord r;
  r.aggregate = read_aggregate(m, e.pointer);
  read_values(m, e.pointer, r);
  r.unit = str_or(m, "unit");
  r.better = str_or(m, "better");
  r.kind = read_kind(m, e.pointer);
  r.untrustworthy = str_or(m, "untrustworthy");
  r.source = str_or(m, "source");
  return r;
}

std::vector<unsigned> metric_cpus(const MetricEntry& e) {
  const nlohmann::json& c = field(*e.json, "cpus");
  std::vector<unsigned> cpus;
  if (c.is_null()) return cpus;
  if (!c.is_array()) throw SpecError(e.pointer + "/cpus", "cpus must be an array of CPU numbers");
  for (std::size_t k = 0; k < c.size(); ++k) {
    const auto& v = c[k];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
        v.get<std::int64_t>() >= static_cast<std::int64_t>(kMaxCpus)) {
      throw SpecError(e.pointer + "/cpus/" + std::to_string(k),
                      "a CPU number must be an integer in 0.." + std::to_string(kMaxCpus - 1) +
                          ", got " + json_text(v));
    }
    cpus.push_back(static_cast<unsigned>(v.get<std::int64_t>()));
  }
  return cpus;
}

void check_non_negative(const MetricRecord& r, const std::string& pointer) {
  if (!r.first_negative) return;
  throw SpecError(
      pointer + "/values/" + std::to_string(r.first_negative->first),
      "a count, event rate or instruction count must be >= 0, got " + r.first_negative->second);
}

}  // namespace isolab::results
