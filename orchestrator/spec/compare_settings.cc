#include "spec/compare_settings.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/json_text.h"

namespace isolab {

namespace {

double number_field(const nlohmann::json& v, const std::string& p, double lo, double hi,
                    bool lo_open, bool hi_open, const std::string& what) {
  if (!v.is_number()) throw SpecError(p, what + ", got " + json_text(v));
  const double d = v.get<double>();
  const bool ok = std::isfinite(d) && (lo_open ? d > lo : d >= lo) && (hi_open ? d < hi : d <= hi);
  if (!ok) throw SpecError(p, what + ", got " + json_text(v));
  return d;
}

std::uint64_t integer_field(const nlohmann::json& v, const std::string& p, std::uint64_t lo,
                            std::uint64_t hi, const std::string& what) {
  std::uint64_t x = 0;
  if (v.is_number_unsigned()) {
    x = v.get<std::uint64_t>();
  } else if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    x = static_cast<std::uint64_t>(v.get<std::int64_t>());
  } else {
    throw SpecError(p, what + ", got " + json_text(v));
  }
  if (x < lo || x > hi) throw SpecError(p, what + ", got " + json_text(v));
  return x;
}

}  // namespace

namespace {

// The thresholds_pct entry of a metric: exact name, else the longest matching prefix.
std::optional<double> threshold_entry(const std::map<std::string, double>& thresholds,
                                      const std::string& metric) {
  if (auto it = thresholds.find(metric); it != thresholds.end()) return it->second;
  std::optional<double> t;
  std::size_t best = 0;
  for (const auto& [key, value] : thresholds) {
    if (key.empty() || key.back() != '*') continue;
    const std::string prefix = key.substr(0, key.size() - 1);
    if (metric.compare(0, prefix.size(), prefix) == 0 && prefix.size() + 1 > best) {
      best = prefix.size() + 1;
      t = value;
    }
  }
  return t;
}

}  // namespace

std::optional<double> CompareSettings::own_threshold_pct(const std::string& metric) const {
  std::optional<double> t = threshold_entry(thresholds_pct, metric);
  if (auto it = noise_floors_pct.find(metric); it != noise_floors_pct.end())
    t = std::max(t.value_or(0.0), it->second);
  return t;
}

double CompareSettings::threshold_pct_for(const std::string& metric) const {
  const double t = threshold_entry(thresholds_pct, metric).value_or(default_threshold_pct);
  if (auto it = noise_floors_pct.find(metric); it != noise_floors_pct.end())
    return std::max(t, it->second);
  return t;
}

double CompareSettings::count_floor_for(const std::string& unit) const {
  if (auto it = count_floors.find(unit); it != count_floors.end()) return it->second;
  const bool rate = unit.size() >= 2 && unit.compare(unit.size() - 2, 2, "/s") == 0;
  auto it = count_floors.find(rate ? "1/s" : "count");
  return it == count_floors.end() ? 0.0 : it->second;
}

namespace {

void read_count_floor(const nlohmann::json& v, const std::string& p, CompareSettings& s) {
  const std::string what = "must be a number >= 0 (events, or events/s for a rate)";
  if (v.is_number()) {
    const double floor = number_field(v, p, 0, 1e12, false, false, what);
    for (auto& [unit, f] : s.count_floors) f = floor;
    return;
  }
  if (!v.is_object()) {
    throw SpecError(p, "must be a number or an object of unit -> number, got " + json_text(v));
  }
  for (const auto& [unit, f] : v.items()) {
    const std::string up = p + "/" + json_pointer_token(unit);
    if (unit.empty()) throw SpecError(up, "unit must not be empty");
    s.count_floors[unit] = number_field(f, up, 0, 1e12, false, false, what);
  }
}

void read_thresholds(const nlohmann::json& v, const std::string& p, CompareSettings& s) {
  if (!v.is_object()) throw SpecError(p, "must be an object of metric name -> percentage");
  for (const auto& [metric, t] : v.items()) {
    const std::string mp = p + "/" + json_pointer_token(metric);
    if (metric.empty()) throw SpecError(mp, "metric name must not be empty");
    s.thresholds_pct[metric] =
        number_field(t, mp, 0, 1e6, false, false, "must be a percentage >= 0");
  }
}

double pct(const nlohmann::json& v, const std::string& p) {
  return number_field(v, p, 0, 1e6, false, false, "must be a percentage >= 0");
}

double fraction(const nlohmann::json& v, const std::string& p) {
  return number_field(v, p, 0, 1, true, true, "must be a number in (0, 1)");
}

using FieldReader = void (*)(const nlohmann::json& v, const std::string& p, CompareSettings& s);

// One reader per field of the spec's "compare" object.
const std::map<std::string, FieldReader>& field_readers() {
  using J = const nlohmann::json&;
  using P = const std::string&;
  using S = CompareSettings&;
  static const std::map<std::string, FieldReader> readers = {
      {"alpha", [](J v, P p, S s) { s.alpha = fraction(v, p); }},
      {"min_samples",
       [](J v, P p, S s) {
         s.min_samples = integer_field(v, p, 1, 1000000, "must be an integer >= 1");
       }},
      {"threshold_pct", [](J v, P p, S s) { s.default_threshold_pct = pct(v, p); }},
      {"thresholds_pct", read_thresholds},
      {"bootstrap_resamples",
       [](J v, P p, S s) {
         s.bootstrap_resamples = integer_field(v, p, 100, 10000000, "must be an integer >= 100");
       }},
      {"confidence_level", [](J v, P p, S s) { s.confidence_level = fraction(v, p); }},
      {"permutation_resamples",
       [](J v, P p, S s) {
         s.permutation_resamples = integer_field(v, p, 0, 10000000, "must be an integer >= 0");
       }},
      {"seed",
       [](J v, P p, S s) {
         s.seed = integer_field(v, p, 0, UINT64_MAX, "must be a non-negative integer");
       }},
      {"max_ci_width_factor",
       [](J v, P p, S s) {
         s.max_ci_width_factor = number_field(v, p, 0, 1e6, true, false, "must be a number > 0");
       }},
      {"tcg_timing_threshold_pct",
       [](J v, P p, S s) {
         s.tcg_timing_threshold_pct =
             number_field(v, p, 0, 1e6, false, false, "must be a percentage >= 0 (0 disables)");
       }},
      {"count_floor", read_count_floor},
      {"instructions_threshold_pct",
       [](J v, P p, S s) { s.instructions_threshold_pct = pct(v, p); }},
      {"instructions_cv_factor",
       [](J v, P p, S s) {
         s.instructions_cv_factor = number_field(v, p, 0, 1e6, false, false, "must be >= 0");
       }},
      {"primary",
       [](J v, P p, S s) {
         s.primary = primary_from_json(v, p);
         s.primary_origin = "spec";
       }},
  };
  return readers;
}

}  // namespace

CompareSettings settings_from_json(const nlohmann::json& section, const std::string& pointer) {
  CompareSettings s;
  if (section.is_null()) return s;
  if (!section.is_object()) throw SpecError(pointer, "compare settings must be an object");
  const auto& readers = field_readers();
  for (const auto& [key, v] : section.items()) {
    const std::string p = pointer + "/" + json_pointer_token(key);
    const auto it = readers.find(key);
    if (it == readers.end()) {
      std::string list;
      for (const auto& [k, r] : readers) list += (list.empty() ? "" : ", ") + k;
      throw SpecError(p, "unknown compare field (known: " + list + ")");
    }
    it->second(v, p, s);
  }
  return s;
}

}  // namespace isolab
