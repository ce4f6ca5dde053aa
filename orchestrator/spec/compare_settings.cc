#include "spec/compare_settings.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/json_text.h"
#include "cmdline/cpulist.h"

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

const MetricCalibrationFacts* CompareSettings::calibrated(const std::string& metric) const {
  if (!calibration || !calibration->applied) return nullptr;
  const auto it = calibration->metrics.find(metric);
  return it == calibration->metrics.end() ? nullptr : &it->second;
}

std::optional<double> CompareSettings::own_threshold_pct(const std::string& metric) const {
  std::optional<double> t = threshold_entry(thresholds_pct, metric);
  if (auto it = noise_floors_pct.find(metric); it != noise_floors_pct.end())
    t = std::max(t.value_or(0.0), it->second);
  if (const MetricCalibrationFacts* c = calibrated(metric); c && c->noise_floor_pct)
    t = std::max(t.value_or(0.0), *c->noise_floor_pct);
  return t;
}

double CompareSettings::threshold_pct_for(const std::string& metric) const {
  const double t = threshold_entry(thresholds_pct, metric).value_or(default_threshold_pct);
  return std::max(t, own_threshold_pct(metric).value_or(0.0));
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

// An optional number >= 0 of a calibration metric, null or absent: nullopt.
std::optional<double> optional_nonnegative(const nlohmann::json& m, const char* key,
                                           const std::string& p) {
  const auto it = m.find(key);
  if (it == m.end() || it->is_null()) return std::nullopt;
  return number_field(*it, p + "/" + key, 0, 1e18, false, false, "must be a number >= 0 or null");
}

MetricCalibrationFacts calibration_metric(const nlohmann::json& m, const std::string& p) {
  if (!m.is_object()) throw SpecError(p, "must be an object with jitter, runs, noise_floor_pct");
  for (const auto& [key, v] : m.items())
    if (key != "jitter" && key != "runs" && key != "noise_floor_pct")
      throw SpecError(p + "/" + json_pointer_token(key),
                      "unknown calibration field (known: jitter, noise_floor_pct, runs)");
  MetricCalibrationFacts f;
  f.jitter = optional_nonnegative(m, "jitter", p);
  f.noise_floor_pct = optional_nonnegative(m, "noise_floor_pct", p);
  if (const auto r = m.find("runs"); r != m.end() && !r->is_null())
    f.runs = integer_field(*r, p + "/runs", 1, 1000000, "must be an integer >= 1 (the runs)");
  if (f.jitter && f.runs == 0)
    throw SpecError(p + "/runs", "a jitter needs the number of independent runs it rests on");
  return f;
}

void read_calibration(const nlohmann::json& v, const std::string& p, CompareSettings& s) {
  if (v.is_string())
    throw SpecError(p,
                    "a calibration file is read when the spec is loaded (isolab run); here it "
                    "must be the object the loader makes of it");
  if (!v.is_object()) throw SpecError(p, "must be a calibration file name or object");
  CalibrationSettings c;
  for (const auto& [key, x] : v.items()) {
    const std::string kp = p + "/" + json_pointer_token(key);
    if (key == "file") {
      if (!x.is_string()) throw SpecError(kp, "must be a file name");
      c.source = x.get<std::string>();
    } else if (key == "comparison_key") {
      if (!x.is_null() && !x.is_object()) throw SpecError(kp, "must be an object or null");
      c.comparison_key = x;
    } else if (key == "metrics") {
      if (!x.is_object()) throw SpecError(kp, "must be an object of metric name -> facts");
      for (const auto& [name, m] : x.items())
        c.metrics[name] = calibration_metric(m, kp + "/" + json_pointer_token(name));
    } else {
      throw SpecError(kp, "unknown calibration field (known: comparison_key, file, metrics)");
    }
  }
  s.calibration = std::move(c);
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
      {"calibration", read_calibration},
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

nlohmann::json calibration_section(const nlohmann::json& cal, const std::string& file) {
  if (!cal.is_object() || cal.value("schema", std::string()) != "isolab-calibration")
    throw SpecError("/schema",
                    "not an isolab calibration document (expected schema "
                    "\"isolab-calibration\", as isolab calibrate --output writes)");
  const auto ms = cal.find("metrics");
  if (ms == cal.end() || !ms->is_object())
    throw SpecError("/metrics", "calibration metrics must be an object");
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [name, m] : ms->items()) {
    if (!m.is_object())
      throw SpecError("/metrics/" + json_pointer_token(name), "must be an object");
    nlohmann::json out = nlohmann::json::object();
    if (m.contains("jitter") && m["jitter"].is_number()) {
      out["jitter"] = m["jitter"];
      out["runs"] = m.value("jitter_runs", 1);
    }
    if (m.contains("noise_floor_pct") && m["noise_floor_pct"].is_number())
      out["noise_floor_pct"] = m["noise_floor_pct"];
    if (!out.empty()) metrics[name] = out;
  }
  return {{"file", file},
          {"comparison_key", cal.value("comparison_key", nlohmann::json())},
          {"metrics", metrics}};
}

namespace {

nlohmann::json primary_json(const PrimaryMetric& m) {
  CpuSet set(m.cpus.empty() ? 0 : m.cpus.back() + 1);
  for (unsigned c : m.cpus) set.set(c);
  nlohmann::json detect;
  if (m.detect) detect = {{"change", m.detect->change}, {"baseline", m.detect->baseline}};
  return {{"metric", m.metric},
          {"cpus", set.to_list()},
          {"row", m.row_name()},
          {"bad", m.higher_is_bad ? "higher" : "lower"},
          {"threshold_pct", m.threshold_pct ? nlohmann::json(*m.threshold_pct) : nlohmann::json()},
          {"detect", detect},
          {"test", m.ranks ? "ranks" : "values"},
          {"source", m.source}};
}

nlohmann::json calibration_json(const std::optional<CalibrationSettings>& c) {
  if (!c) return nullptr;
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [name, f] : c->metrics)
    metrics[name] = {{"jitter", f.jitter ? nlohmann::json(*f.jitter) : nlohmann::json()},
                     {"runs", f.runs},
                     {"noise_floor_pct",
                      f.noise_floor_pct ? nlohmann::json(*f.noise_floor_pct) : nlohmann::json()}};
  return {{"file", c->source}, {"applied", c->applied}, {"metrics", metrics}};
}

}  // namespace

nlohmann::json settings_to_json(const CompareSettings& s) {
  nlohmann::json primary = nlohmann::json::array();
  for (const auto& m : s.primary) primary.push_back(primary_json(m));
  return {{"alpha", s.alpha},
          {"min_samples", s.min_samples},
          {"threshold_pct", s.default_threshold_pct},
          {"thresholds_pct", s.thresholds_pct},
          {"noise_floors_pct", s.noise_floors_pct},
          {"confidence_level", s.confidence_level},
          {"permutation_resamples", s.permutation_resamples},
          {"seed", s.seed},
          {"tcg_timing_threshold_pct", s.tcg_timing_threshold_pct},
          {"count_floor", s.count_floors},
          {"instructions_threshold_pct", s.instructions_threshold_pct},
          {"calibration", calibration_json(s.calibration)},
          {"primary", primary},
          {"primary_origin", s.primary_origin},
          {"relabel_exact_limit", s.relabel_exact_limit},
          {"relabel_resamples", s.relabel_resamples},
          {"test", "exact conditional midrank permutation test (timings)"},
          {"count_test",
           "permutation test of the difference of per-boot means (counts, "
           "instructions)"},
          {"primary_test",
           "one-sided in the bad direction, one discrete (Tarone) step-down over the primary "
           "metrics, kernel failure classes, gate checks and retried boots (docs/verdicts.md)"},
          {"secondary_test",
           "two-sided, Westfall-Young min-P over joint relabellings of the "
           "boots"},
          {"interval", "inverted permutation test"}};
}

}  // namespace isolab
