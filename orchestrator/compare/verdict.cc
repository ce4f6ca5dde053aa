#include "compare/verdict.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "base/error.h"
#include "base/json_text.h"
#include "base/number_text.h"
#include "cmdline/cpulist.h"
#include "spec/primary.h"

namespace isolab {

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

const char* metric_kind_name(MetricKind k) {
  switch (k) {
    case MetricKind::count:
      return "count";
    case MetricKind::instructions:
      return "instructions";
    case MetricKind::timing:
      break;
  }
  return "timing";
}

MetricKind metric_kind_of(const std::string& kind, const std::string& unit) {
  if (kind == "count") return MetricKind::count;
  if (kind == "instructions") return MetricKind::instructions;
  if (kind.empty() && (unit == "count" || unit == "1/s")) return MetricKind::count;
  return MetricKind::timing;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::improved:
      return "improved";
    case Verdict::regressed:
      return "regressed";
    case Verdict::changed_below:
      return "changed, below threshold";
    case Verdict::no_change:
      return "no significant change";
    case Verdict::inconclusive:
      break;
  }
  return "inconclusive";
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

// ---- tests ----

double MetricTest::p_value() const {
  if (stratified) return stratified->p;
  if (count) return count->permutation.p;
  return rank ? rank->p : mann_whitney.p_two_sided;
}

bool MetricTest::p_exact() const {
  if (stratified) return stratified->exact;
  if (count) return count->permutation.exact;
  return rank ? rank->exact : mann_whitney.exact;
}

double MetricTest::min_p() const {
  if (stratified) return stratified->min_p;
  if (count) return count->permutation.min_p;
  return rank ? rank->min_p : mann_whitney_min_p(a.n, b.n);
}

namespace {

constexpr std::uint64_t kRankSeed = 0x9e3779b97f4a7c15ULL;
constexpr std::uint64_t kStrataSeed = 0x5851f42d4c957f2dULL;
constexpr std::uint64_t kIntervalSeed = 0x2545f4914f6cdd1dULL;

CountTest test_count(std::span<const double> a, std::span<const double> b,
                     const CompareSettings& settings) {
  CountTest c;
  c.mean_a = describe(a).mean;
  c.mean_b = describe(b).mean;
  c.diff = c.mean_b - c.mean_a;
  c.relative_change = count_relative_change(c.mean_a, c.mean_b);
  auto zero = [](double x) { return x == 0; };
  c.all_zero = std::all_of(a.begin(), a.end(), zero) && std::all_of(b.begin(), b.end(), zero);
  c.permutation = permutation_test_mean(a, b, settings.count_exact_limit, settings.count_resamples,
                                        settings.seed ^ kRankSeed);
  return c;
}

bool finite_interval(const ConfidenceInterval& i) {
  return std::isfinite(i.low) && std::isfinite(i.high);
}

// The interval of the metric's change over the strata (see the top of verdict.h) at `level`.
void add_interval(MetricTest& t, const std::vector<Stratum>& strata, const CompareSettings& s,
                  double level) {
  if (t.a.n == 0 || t.b.n == 0) return;
  const bool relative = t.kind != MetricKind::count;
  const StratumScore score =
      t.kind == MetricKind::timing ? StratumScore::midranks : StratumScore::values;
  const double base = t.kind == MetricKind::timing ? t.a.median : t.a.mean;
  if (relative && !(std::isfinite(base) && base != 0)) return;
  auto interval = [&](ChangeScale k) {
    return permutation_interval(strata, score, k, level, s.interval_exact_limit,
                                s.interval_resamples, s.seed ^ kIntervalSeed);
  };
  if (relative) t.interval = interval(ChangeScale::scale);
  if (!t.interval) {
    t.interval = interval(ChangeScale::shift);
    if (t.interval && relative) {
      t.interval->low /= std::fabs(base);
      t.interval->high /= std::fabs(base);
    }
  }
  if (!t.interval || !finite_interval(*t.interval)) return;
  if (relative) t.ci = t.interval;
  if (t.count && t.kind == MetricKind::count) t.count->diff_ci = t.interval;
}

MetricTest test_core(std::span<const double> a, std::span<const double> b,
                     const CompareSettings& settings, bool with_ci, MetricKind kind) {
  MetricTest t;
  t.kind = kind;
  t.a = describe(a);
  t.b = describe(b);
  t.ci_requested = with_ci;
  if (kind != MetricKind::timing) {
    t.count = test_count(a, b, settings);
    // Counts and instruction counts are >= 0: from 0 in every A boot to more in B is +inf
    // ("new": the idle control CPU that executed no kernel instruction now does), not undefined.
    t.change = t.count->relative_change;
    return t;
  }
  t.change = relative_change(t.a.median, t.b.median);
  t.mann_whitney = mann_whitney_u(a, b);
  const std::vector<Stratum> one = {{{a.begin(), a.end()}, {b.begin(), b.end()}}};
  t.rank = stratified_permutation_test(one, StratumScore::midranks, settings.count_exact_limit,
                                       settings.count_resamples, settings.seed ^ kRankSeed);
  if (settings.permutation_resamples > 0 && !a.empty() && !b.empty()) {
    t.permutation_p =
        permutation_test_median(a, b, settings.permutation_resamples, settings.seed ^ kRankSeed);
  }
  return t;
}

}  // namespace

MetricTest test_metric(std::span<const double> a, std::span<const double> b,
                       const CompareSettings& settings, bool with_ci, MetricKind kind) {
  MetricTest t = test_core(a, b, settings, with_ci, kind);
  if (with_ci)
    add_interval(t, {{{a.begin(), a.end()}, {b.begin(), b.end()}}}, settings,
                 settings.confidence_level);
  return t;
}

MetricTest test_metric_stratified(const std::vector<Stratum>& strata,
                                  const CompareSettings& settings, bool with_ci, MetricKind kind) {
  std::vector<double> a, b;
  for (const auto& s : strata) {
    a.insert(a.end(), s.a.begin(), s.a.end());
    b.insert(b.end(), s.b.begin(), s.b.end());
  }
  MetricTest t = test_core(a, b, settings, with_ci, kind);
  t.stratified = stratified_permutation_test(
      strata, kind == MetricKind::timing ? StratumScore::midranks : StratumScore::values,
      settings.count_exact_limit, settings.count_resamples, settings.seed ^ kStrataSeed);
  if (with_ci) add_interval(t, strata, settings, settings.confidence_level);
  return t;
}

void set_interval(MetricTest& t, const std::vector<Stratum>& strata,
                  const CompareSettings& settings, double confidence) {
  t.interval.reset();
  t.ci.reset();
  if (t.count) t.count->diff_ci.reset();
  if (!(confidence > 0 && confidence < 1)) return;
  add_interval(t, strata, settings, confidence);
}

void add_one_sided_test(MetricTest& t, const std::vector<Stratum>& strata, bool higher_is_bad,
                        const CompareSettings& settings, bool ranks) {
  t.one_sided_ranks = ranks || t.kind == MetricKind::timing;
  const StratumScore score = t.one_sided_ranks ? StratumScore::midranks : StratumScore::values;
  if (ranks && t.kind == MetricKind::instructions)
    t.change = relative_change(t.a.median, t.b.median);
  auto test = [&](bool greater) {
    return stratified_permutation_test(strata, score, settings.count_exact_limit,
                                       settings.count_resamples, settings.seed ^ kStrataSeed,
                                       greater ? Alternative::greater : Alternative::less);
  };
  t.one_sided = test(higher_is_bad);
  t.good_sided = test(!higher_is_bad);
}

// ---- thresholds ----

double effective_threshold_pct(const MetricInfo& info, const CompareSettings& settings,
                               bool* tcg_applied) {
  if (tcg_applied) *tcg_applied = false;
  if (info.kind == MetricKind::instructions)
    return std::max(settings.own_threshold_pct(info.name).value_or(0.0),
                    settings.instructions_threshold_pct);
  double t = settings.threshold_pct_for(info.name);
  const bool tcg =
      info.kind == MetricKind::timing && info.tcg && settings.tcg_timing_threshold_pct > t;
  if (tcg) t = settings.tcg_timing_threshold_pct;
  if (tcg_applied) *tcg_applied = tcg;
  return t;
}

double metric_threshold_pct(const MetricTest&, const MetricInfo& info,
                            const CompareSettings& settings, std::string* why) {
  bool tcg = false;
  const double threshold = effective_threshold_pct(info, settings, &tcg);
  std::string note;
  if (tcg) {
    note = "threshold " + format_number("%.3g", threshold) +
           "% is the TCG timing threshold (compare.tcg_timing_threshold_pct): cells ran under TCG, "
           "where timings of one kernel varied 2-26% between boots";
  } else if (info.kind == MetricKind::instructions &&
             threshold == settings.instructions_threshold_pct) {
    note = "threshold " + format_number("%.3g", threshold) +
           "% is the instruction threshold (compare.instructions_threshold_pct)";
  }
  if (why) *why = note;
  return threshold;
}

// ---- verdict rules ----

}  // namespace isolab
