#include "compare/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "base/error.h"
#include "base/json_text.h"
#include "compare/compare.h"
#include "compare/rng.h"

namespace isolab {

namespace {

constexpr const char* kMethod =
    "pooled cells of the listed variants split at random into two equal halves, per split the "
    "relative change (of medians for timings, of means for counts) and the compare verdict "
    "(same test and rule as compare, by kind); noise_floor_pct = 95th percentile (nearest "
    "rank) of the finite |change| in percent, false_positive_rate = fraction of splits called "
    "improved or regressed, p_significant_rate = fraction with the kind's test p < alpha "
    "(Mann-Whitney for timings, permutation of means for counts)";

std::string fmt(const char* f, double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

nlohmann::json jnum(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

}  // namespace

namespace {

// The splits of n pooled cells into two halves of floor(n/2) (the odd cell left out), as index
// orders: the first half of each order is A, the next half B. All C(n, n/2) of them when n is
// even and there are at most `limit` (exact: the false-positive rate of an exact test over all
// of them is at most alpha by construction), else `limit` random ones (partial Fisher-Yates).
std::vector<std::vector<std::size_t>> equal_splits(std::size_t n, std::size_t limit,
                                                   std::mt19937_64& rng, bool& exact) {
  const std::size_t half = n / 2;
  std::vector<std::vector<std::size_t>> out;
  double combinations = 1;
  for (std::size_t i = 1; i <= half; ++i)
    combinations = combinations * static_cast<double>(n - half + i) / static_cast<double>(i);
  exact = n % 2 == 0 && combinations <= static_cast<double>(limit);
  if (exact) {
    std::vector<bool> in_a(n, false);
    std::fill(in_a.begin(), in_a.begin() + static_cast<std::ptrdiff_t>(half), true);
    do {
      std::vector<std::size_t> order;
      for (std::size_t i = 0; i < n; ++i)
        if (in_a[i]) order.push_back(i);
      for (std::size_t i = 0; i < n; ++i)
        if (!in_a[i]) order.push_back(i);
      out.push_back(std::move(order));
    } while (std::prev_permutation(in_a.begin(), in_a.end()));
    return out;
  }
  std::vector<std::size_t> work(n);
  for (std::size_t i = 0; i < n; ++i) work[i] = i;
  for (std::size_t s = 0; s < limit; ++s) {
    for (std::size_t i = 0; i < 2 * half; ++i)
      std::swap(work[i], work[i + uniform_index(rng, n - i)]);
    out.push_back(work);
  }
  return out;
}

}  // namespace

Calibration calibrate_from_run(const nlohmann::json& run, const CompareSettings& settings,
                               const CalibrationOptions& options) {
  if (options.splits == 0) throw Error("calibrate: splits must be >= 1");
  if (!run.is_object()) throw Error("result.json: top level must be an object");
  Calibration cal;
  cal.splits = options.splits;
  cal.seed = options.seed;
  cal.settings = settings;
  cal.settings.noise_floors_pct.clear();
  cal.settings.permutation_resamples = 0;
  if (auto it = run.find("run_id"); it != run.end() && it->is_string()) cal.run_id = *it;

  cal.variants = options.variants;
  if (cal.variants.empty()) {
    if (auto it = run.find("variant_order"); it != run.end() && it->is_array()) {
      for (const auto& v : *it) {
        if (v.is_string()) cal.variants.push_back(v.get<std::string>());
      }
    }
  }
  if (cal.variants.empty()) {
    std::set<std::string> seen;
    if (auto it = run.find("cells"); it != run.end() && it->is_array()) {
      for (const auto& c : *it) {
        if (c.is_object() && c.contains("variant") && c["variant"].is_string() &&
            seen.insert(c["variant"].get<std::string>()).second) {
          cal.variants.push_back(c["variant"].get<std::string>());
        }
      }
    }
  }
  if (cal.variants.empty()) throw Error("calibrate: the run has no variants");

  std::map<std::string, std::vector<double>> pooled;
  std::map<std::string, MetricInfo> infos;
  std::set<std::string> kernels, builds;
  for (const auto& v : cal.variants) {
    VariantData d = extract_variant(run, v);
    for (auto& [name, s] : d.metrics) {
      pooled[name].insert(pooled[name].end(), s.values.begin(), s.values.end());
      MetricInfo& info = infos[name];
      info.name = name;
      info.unit = s.unit;
      info.kind = s.metric_kind();
      // The direction is irrelevant to "called improved or regressed"; a metric without one
      // is judged as lower-is-better so that its false-positive rate is still measured.
      info.better = Better::lower;
      info.tcg = info.tcg || s.accelerators.count("tcg") > 0;
    }
    kernels.insert(d.kernel_release);
    if (auto vs = run.find("variants"); vs != run.end() && vs->is_object()) {
      if (auto x = vs->find(v); x != vs->end() && x->is_object() && x->contains("build_key") &&
                                (*x)["build_key"].is_string()) {
        builds.insert((*x)["build_key"].get<std::string>());
      }
    }
  }
  if (cal.variants.size() > 1 && (kernels.size() > 1 || builds.size() > 1)) {
    cal.warnings.push_back(
        "pooled variants differ in kernel_release or build_key: this is not an A/A run, the "
        "noise floor includes any real difference between them");
  }

  std::mt19937_64 rng(options.seed);
  for (auto& [name, values] : pooled) {
    MetricCalibration m;
    m.name = name;
    const MetricInfo& info = infos[name];
    m.unit = info.unit;
    m.kind = info.kind;
    m.n = values.size();
    m.noise_floor_pct = std::numeric_limits<double>::quiet_NaN();
    const std::size_t half = values.size() / 2;
    if (half >= 2) {
      const std::vector<std::vector<std::size_t>> splits =
          equal_splits(values.size(), options.splits, rng, m.exact);
      std::vector<double> abs_changes;
      abs_changes.reserve(splits.size());
      std::size_t fp = 0, psig = 0;
      std::vector<double> work(2 * half);
      for (const auto& order : splits) {
        for (std::size_t i = 0; i < 2 * half; ++i) work[i] = values[order[i]];
        std::span<const double> ha(work.data(), half), hb(work.data() + half, half);
        const MetricTest t = test_metric(ha, hb, cal.settings, false, info.kind);
        if (std::isfinite(t.change)) abs_changes.push_back(std::fabs(100.0 * t.change));
        if (t.p_value() < settings.alpha) ++psig;
        const VerdictResult v = decide_metric_verdict(t, info, cal.settings);
        if (v.verdict == Verdict::improved || v.verdict == Verdict::regressed) ++fp;
      }
      m.splits = splits.size();
      if (!abs_changes.empty()) m.noise_floor_pct = percentile_nearest_rank(abs_changes, 95);
      m.false_positive_rate = static_cast<double>(fp) / static_cast<double>(splits.size());
      m.p_significant_rate = static_cast<double>(psig) / static_cast<double>(splits.size());
    }
    cal.metrics.push_back(std::move(m));
  }
  return cal;
}

nlohmann::json calibration_to_json(const Calibration& c) {
  nlohmann::json j = {{"schema", "isolab-calibration"},
                      {"version", 1},
                      {"run_id", c.run_id},
                      {"variants", c.variants},
                      {"splits", c.splits},
                      {"seed", c.seed},
                      {"alpha", c.settings.alpha},
                      {"threshold_pct", c.settings.default_threshold_pct},
                      {"method", kMethod},
                      {"warnings", c.warnings},
                      {"metrics", nlohmann::json::object()}};
  for (const auto& m : c.metrics) {
    j["metrics"][m.name] = {{"unit", m.unit},
                            {"kind", metric_kind_name(m.kind)},
                            {"n", m.n},
                            {"noise_floor_pct", jnum(m.noise_floor_pct)},
                            {"splits", m.splits},
                            {"exact", m.exact},
                            {"false_positive_rate", m.false_positive_rate},
                            {"p_significant_rate", m.p_significant_rate}};
  }
  return j;
}

std::string render_calibration_text(const Calibration& c) {
  std::ostringstream o;
  o << "isolab calibrate: run " << c.run_id << ", pooled variants:";
  for (const auto& v : c.variants) o << " " << v;
  o << "; every equal split where there are at most " << c.splits << " (exact), else " << c.splits
    << " random ones, seed " << c.seed << "\n";
  for (const auto& w : c.warnings) o << "WARNING: " << w << "\n";
  std::size_t w = 6;
  for (const auto& m : c.metrics) w = std::max(w, m.name.size());
  o << "\n"
    << std::string("metric") + std::string(w - 6, ' ')
    << "  unit          n  noise floor %  false-pos rate  p<alpha rate\n";
  for (const auto& m : c.metrics) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-12s %3zu  %13s  %14s  %12s", m.unit.c_str(), m.n,
                  fmt("%.2f", m.noise_floor_pct).c_str(),
                  fmt("%.3f", m.false_positive_rate).c_str(),
                  fmt("%.3f", m.p_significant_rate).c_str());
    o << m.name << std::string(w - m.name.size(), ' ') << line << "\n";
  }
  o << "\nnoise floor: 95th percentile of |change| between halves of n/2 cells each; use with "
       "compare --noise-floor FILE (JSON form)\n";
  return o.str();
}

std::map<std::string, double> noise_floors_from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("schema", std::string()) != "isolab-calibration") {
    throw SpecError("/schema",
                    "not an isolab calibration document (expected schema "
                    "\"isolab-calibration\")");
  }
  auto ms = j.find("metrics");
  if (ms == j.end() || !ms->is_object()) {
    throw SpecError("/metrics", "calibration metrics must be an object");
  }
  std::map<std::string, double> floors;
  for (const auto& [name, m] : ms->items()) {
    std::string tok;
    for (char ch : name) tok += ch == '~' ? "~0" : ch == '/' ? "~1" : std::string(1, ch);
    const std::string p = "/metrics/" + tok + "/noise_floor_pct";
    if (!m.is_object()) throw SpecError("/metrics/" + tok, "must be an object");
    auto f = m.find("noise_floor_pct");
    if (f == m.end() || f->is_null()) continue;
    if (!f->is_number() || !std::isfinite(f->get<double>()) || f->get<double>() < 0) {
      throw SpecError(p, "must be a number >= 0, got " + json_text(*f));
    }
    floors[name] = f->get<double>();
  }
  return floors;
}

}  // namespace isolab
