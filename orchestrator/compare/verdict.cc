#include "compare/verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "base/error.h"
#include "base/json_text.h"

namespace isolab {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

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

Better better_from_string(const std::string& s) {
  if (s == "lower") return Better::lower;
  if (s == "higher") return Better::higher;
  return Better::none;
}

const char* better_name(Better b) {
  switch (b) {
    case Better::lower:
      return "lower";
    case Better::higher:
      return "higher";
    case Better::none:
      break;
  }
  return "none";
}

const char* metric_kind_name(MetricKind k) { return k == MetricKind::count ? "count" : "timing"; }

MetricKind metric_kind_of(const std::string& kind, const std::string& unit) {
  if (kind == "count") return MetricKind::count;
  if (kind.empty() && (unit == "count" || unit == "1/s")) return MetricKind::count;
  return MetricKind::timing;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::improved:
      return "improved";
    case Verdict::regressed:
      return "regressed";
    case Verdict::no_change:
      return "no significant change";
    case Verdict::inconclusive:
      break;
  }
  return "inconclusive";
}

double CompareSettings::threshold_pct_for(const std::string& metric) const {
  double t = default_threshold_pct;
  if (auto it = thresholds_pct.find(metric); it != thresholds_pct.end()) {
    t = it->second;
  } else {
    std::size_t best = 0;
    for (const auto& [key, value] : thresholds_pct) {
      if (key.empty() || key.back() != '*') continue;
      const std::string prefix = key.substr(0, key.size() - 1);
      if (metric.compare(0, prefix.size(), prefix) == 0 && prefix.size() + 1 > best) {
        best = prefix.size() + 1;
        t = value;
      }
    }
  }
  if (auto it = noise_floors_pct.find(metric); it != noise_floors_pct.end()) {
    t = std::max(t, it->second);
  }
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

}  // namespace

CompareSettings settings_from_json(const nlohmann::json& section, const std::string& pointer) {
  CompareSettings s;
  if (section.is_null()) return s;
  if (!section.is_object()) throw SpecError(pointer, "compare settings must be an object");
  static const std::set<std::string> known = {"alpha",
                                              "min_samples",
                                              "threshold_pct",
                                              "thresholds_pct",
                                              "bootstrap_resamples",
                                              "confidence_level",
                                              "permutation_resamples",
                                              "seed",
                                              "max_ci_width_factor",
                                              "tcg_timing_threshold_pct",
                                              "count_floor"};
  for (const auto& [key, v] : section.items()) {
    const std::string p = pointer + "/" + json_pointer_token(key);
    if (!known.count(key)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw SpecError(p, "unknown compare field (known: " + list + ")");
    }
    if (key == "alpha") {
      s.alpha = number_field(v, p, 0, 1, true, true, "must be a number in (0, 1)");
    } else if (key == "min_samples") {
      s.min_samples = integer_field(v, p, 1, 1000000, "must be an integer >= 1");
    } else if (key == "threshold_pct") {
      s.default_threshold_pct =
          number_field(v, p, 0, 1e6, false, false, "must be a percentage >= 0");
    } else if (key == "thresholds_pct") {
      if (!v.is_object()) throw SpecError(p, "must be an object of metric name -> percentage");
      for (const auto& [metric, t] : v.items()) {
        const std::string mp = p + "/" + json_pointer_token(metric);
        if (metric.empty()) throw SpecError(mp, "metric name must not be empty");
        s.thresholds_pct[metric] =
            number_field(t, mp, 0, 1e6, false, false, "must be a percentage >= 0");
      }
    } else if (key == "bootstrap_resamples") {
      s.bootstrap_resamples = integer_field(v, p, 100, 10000000, "must be an integer >= 100");
    } else if (key == "confidence_level") {
      s.confidence_level = number_field(v, p, 0, 1, true, true, "must be a number in (0, 1)");
    } else if (key == "permutation_resamples") {
      s.permutation_resamples = integer_field(v, p, 0, 10000000, "must be an integer >= 0");
    } else if (key == "seed") {
      s.seed = integer_field(v, p, 0, UINT64_MAX, "must be a non-negative integer");
    } else if (key == "max_ci_width_factor") {
      s.max_ci_width_factor = number_field(v, p, 0, 1e6, true, false, "must be a number > 0");
    } else if (key == "tcg_timing_threshold_pct") {
      s.tcg_timing_threshold_pct =
          number_field(v, p, 0, 1e6, false, false, "must be a percentage >= 0 (0 disables)");
    } else if (key == "count_floor") {
      read_count_floor(v, p, s);
    }
  }
  return s;
}

nlohmann::json settings_to_json(const CompareSettings& s) {
  nlohmann::json j = {
      {"alpha", s.alpha},
      {"min_samples", s.min_samples},
      {"threshold_pct", s.default_threshold_pct},
      {"thresholds_pct", s.thresholds_pct},
      {"noise_floors_pct", s.noise_floors_pct},
      {"bootstrap_resamples", s.bootstrap_resamples},
      {"confidence_level", s.confidence_level},
      {"permutation_resamples", s.permutation_resamples},
      {"seed", s.seed},
      {"max_ci_width_factor", s.max_ci_width_factor},
      {"tcg_timing_threshold_pct", s.tcg_timing_threshold_pct},
      {"count_floor", s.count_floors},
      {"test", "two-sided Mann-Whitney U"},
      {"count_test", "two-sided permutation test of the difference of per-boot means"}};
  return j;
}

double MetricTest::p_value() const {
  if (stratified) return stratified->p;
  return count ? count->permutation.p : mann_whitney.p_two_sided;
}

bool MetricTest::p_exact() const {
  if (stratified) return stratified->exact;
  return count ? count->permutation.exact : mann_whitney.exact;
}

namespace {

CountTest test_count(std::span<const double> a, std::span<const double> b,
                     const CompareSettings& settings, bool with_ci) {
  CountTest c;
  c.mean_a = describe(a).mean;
  c.mean_b = describe(b).mean;
  c.diff = c.mean_b - c.mean_a;
  c.relative_change = count_relative_change(c.mean_a, c.mean_b);
  auto zero = [](double x) { return x == 0; };
  c.all_zero = std::all_of(a.begin(), a.end(), zero) && std::all_of(b.begin(), b.end(), zero);
  c.permutation = permutation_test_mean(a, b, settings.count_exact_limit, settings.count_resamples,
                                        settings.seed ^ 0x9e3779b97f4a7c15ULL);
  if (with_ci) {
    c.diff_ci = bootstrap_mean_difference_ci(a, b, settings.confidence_level,
                                             settings.bootstrap_resamples, settings.seed);
  }
  return c;
}

}  // namespace

MetricTest test_metric(std::span<const double> a, std::span<const double> b,
                       const CompareSettings& settings, bool with_ci, MetricKind kind) {
  MetricTest t;
  t.kind = kind;
  t.a = describe(a);
  t.b = describe(b);
  t.ci_requested = with_ci;
  if (kind == MetricKind::count) {
    t.count = test_count(a, b, settings, with_ci);
    t.change = t.count->relative_change;
    return t;
  }
  t.change = relative_change(t.a.median, t.b.median);
  if (with_ci && std::isfinite(t.change)) {
    t.ci = bootstrap_relative_change_ci(a, b, settings.confidence_level,
                                        settings.bootstrap_resamples, settings.seed);
  }
  t.mann_whitney = mann_whitney_u(a, b);
  if (settings.permutation_resamples > 0 && !a.empty() && !b.empty()) {
    t.permutation_p = permutation_test_median(a, b, settings.permutation_resamples,
                                              settings.seed ^ 0x9e3779b97f4a7c15ULL);
  }
  return t;
}

MetricTest test_metric_stratified(const std::vector<Stratum>& strata,
                                  const CompareSettings& settings, bool with_ci, MetricKind kind) {
  std::vector<double> a, b;
  for (const auto& s : strata) {
    a.insert(a.end(), s.a.begin(), s.a.end());
    b.insert(b.end(), s.b.begin(), s.b.end());
  }
  MetricTest t = test_metric(a, b, settings, with_ci, kind);
  t.stratified = stratified_permutation_test(
      strata, kind == MetricKind::count ? StratumScore::values : StratumScore::midranks,
      settings.count_exact_limit, settings.count_resamples, settings.seed ^ 0x5851f42d4c957f2dULL);
  return t;
}

namespace {

std::string n_label(const MetricTest& t) {
  std::string s = "n=" + std::to_string(t.a.n) + "+" + std::to_string(t.b.n);
  if (t.stratified) s += " in " + std::to_string(t.stratified->strata_used) + " host(s)";
  return s;
}

// The name of the test that decides, for reasons.
std::string test_label(const MetricTest& t, const char* unstratified) {
  if (!t.stratified) return unstratified;
  return t.count ? "stratified permutation" : "stratified van Elteren";
}

VerdictResult decide_timing_verdict(const MetricTest& t, Better better, double threshold_pct,
                                    const CompareSettings& settings) {
  VerdictResult r;
  r.threshold_pct = threshold_pct;
  const std::string n_text = n_label(t);
  if (!std::isfinite(t.change)) {
    r.reason = "relative change undefined (A median is 0)";
    return r;
  }
  if (better == Better::none) {
    r.reason = "metric has no 'better' direction";
    return r;
  }
  const double min_p = t.stratified ? t.stratified->min_p : mann_whitney_min_p(t.a.n, t.b.n);
  if (min_p >= settings.alpha) {
    r.reason = n_text + ": smallest attainable " + test_label(t, "Mann-Whitney") + " p is " +
               fmt("%.3g", min_p) + ", not below alpha " + fmt("%.3g", settings.alpha);
    return r;
  }
  const double change_pct = 100.0 * t.change;
  const double p = t.p_value();
  const bool significant = p < settings.alpha;
  const bool large = std::fabs(change_pct) > threshold_pct;
  if (significant && large) {
    const bool went_down = t.change < 0;
    const bool good = (better == Better::lower) == went_down;
    r.verdict = good ? Verdict::improved : Verdict::regressed;
    r.reason = "p=" + fmt("%.3g", p) + " < alpha " + fmt("%.3g", settings.alpha) + " and |" +
               fmt("%.2f", change_pct) + "%| > threshold " + fmt("%.2f", threshold_pct) + "%";
    return r;
  }
  if (t.ci_requested && !t.ci) {
    r.reason = "bootstrap CI undefined (A median is 0 in most resamples)";
    return r;
  }
  if (t.ci) {
    const double width_pct = 100.0 * (t.ci->high - t.ci->low);
    if (width_pct > settings.max_ci_width_factor * threshold_pct) {
      r.reason = "too noisy: CI width " + fmt("%.2f", width_pct) + " points > " +
                 fmt("%.3g", settings.max_ci_width_factor) + " x threshold " +
                 fmt("%.2f", threshold_pct) + "%";
      return r;
    }
  }
  r.verdict = Verdict::no_change;
  if (significant) {
    r.reason = "p=" + fmt("%.3g", p) + " but |" + fmt("%.2f", change_pct) + "%| <= threshold " +
               fmt("%.2f", threshold_pct) + "%";
  } else {
    r.reason = "p=" + fmt("%.3g", p) + " >= alpha " + fmt("%.3g", settings.alpha);
  }
  return r;
}

VerdictResult decide_count_verdict(const MetricTest& t, Better better, double threshold_pct,
                                   double floor, const std::string& unit,
                                   const CompareSettings& settings) {
  VerdictResult r;
  r.threshold_pct = threshold_pct;
  const CountTest& c = *t.count;
  if (c.all_zero) {
    r.verdict = Verdict::no_change;
    r.reason = "0 in every boot of both variants";
    return r;
  }
  if (better == Better::none) {
    r.reason = "metric has no 'better' direction";
    return r;
  }
  const double min_p = t.stratified ? t.stratified->min_p : c.permutation.min_p;
  if (min_p >= settings.alpha) {
    r.reason = n_label(t) + ": smallest p the " + test_label(t, "permutation") +
               " test can reach with these values is " + fmt("%.3g", min_p) + ", not below alpha " +
               fmt("%.3g", settings.alpha) + " (too few boots, or too few with a non-zero value)";
    return r;
  }
  const double p = t.p_value();
  const bool significant = p < settings.alpha;
  const bool above_floor = std::fabs(c.diff) > floor;
  const bool from_zero = c.mean_a == 0;
  const double rel_pct = 100.0 * c.relative_change;
  const bool large = from_zero || std::fabs(rel_pct) > threshold_pct;
  const std::string p_text = "p=" + fmt("%.3g", p);
  const std::string diff_text = "|B-A| " + format_count_amount(std::fabs(c.diff), unit);
  const std::string floor_text = "floor " + format_count_amount(floor, unit);
  const std::string rel_text = from_zero
                                   ? std::string("A was 0 in every boot")
                                   : "|" + fmt("%.2f", rel_pct) + "%| " + (large ? ">" : "<=") +
                                         " threshold " + fmt("%.2f", threshold_pct) + "%";
  if (significant && above_floor && large) {
    const bool good = (better == Better::lower) == (c.diff < 0);
    r.verdict = good ? Verdict::improved : Verdict::regressed;
    r.reason = p_text + " < alpha " + fmt("%.3g", settings.alpha) + ", " + diff_text + " > " +
               floor_text + ", " + rel_text;
    return r;
  }
  r.verdict = Verdict::no_change;
  if (!significant) {
    r.reason = p_text + " >= alpha " + fmt("%.3g", settings.alpha);
  } else if (!above_floor) {
    r.reason = p_text + " but " + diff_text + " <= " + floor_text;
  } else {
    r.reason = p_text + " but " + rel_text;
  }
  return r;
}

}  // namespace

VerdictResult decide_verdict(const MetricTest& t, Better better, double threshold_pct,
                             const CompareSettings& settings, double count_floor) {
  if (t.a.n < settings.min_samples || t.b.n < settings.min_samples) {
    VerdictResult r;
    r.threshold_pct = threshold_pct;
    r.reason =
        n_label(t) + " below min_samples " + std::to_string(settings.min_samples) + " per variant";
    return r;
  }
  if (t.kind == MetricKind::count && t.count) {
    return decide_count_verdict(t, better, threshold_pct, count_floor, "", settings);
  }
  return decide_timing_verdict(t, better, threshold_pct, settings);
}

std::string format_count_amount(double v, const std::string& unit) {
  const std::string x = fmt("%.3g", v);
  if (unit == "1/s") return x + "/s";
  if (unit == "count" || unit.empty()) return x;
  return x + " " + unit;
}

double effective_threshold_pct(const MetricInfo& info, const CompareSettings& settings,
                               bool* tcg_applied) {
  double t = settings.threshold_pct_for(info.name);
  const bool tcg =
      info.kind == MetricKind::timing && info.tcg && settings.tcg_timing_threshold_pct > t;
  if (tcg) t = settings.tcg_timing_threshold_pct;
  if (tcg_applied) *tcg_applied = tcg;
  return t;
}

VerdictResult decide_metric_verdict(const MetricTest& t, const MetricInfo& info,
                                    const CompareSettings& settings) {
  bool tcg = false;
  const double threshold = effective_threshold_pct(info, settings, &tcg);
  if (t.kind == MetricKind::count && t.count && t.a.n >= settings.min_samples &&
      t.b.n >= settings.min_samples) {
    return decide_count_verdict(t, info.better, threshold, settings.count_floor_for(info.unit),
                                info.unit, settings);
  }
  VerdictResult r = decide_verdict(t, info.better, threshold, settings);
  if (tcg) {
    r.reason += "; threshold " + fmt("%.3g", threshold) +
                "% is the TCG timing threshold (compare.tcg_timing_threshold_pct): cells ran "
                "under TCG, where timings of one kernel varied 2-26% between boots";
  }
  return r;
}

}  // namespace isolab
