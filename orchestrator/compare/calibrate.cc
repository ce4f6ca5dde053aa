#include "compare/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

#include "base/error.h"
#include "base/json_text.h"
#include "compare/compare.h"
#include "compare/power.h"
#include "compare/rng.h"

namespace isolab {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPower = 0.8;

const nlohmann::json kMethod = {
    {"boot_order",
     "cells[].started_at when every cell has it (stable), else cells[] order; positions count "
     "every cell of the run, the first half is positions < cells / 2"},
    {"strata", "the pooled variants; permutations reorder boots within a variant only"},
    {"trend",
     "seasonal Mann-Kendall S over the variants (Hirsch, Slack & Smith 1982), exact "
     "permutation p of |S|"},
    {"odd_even",
     "boots 1,3,5.. against 2,4,6.. of each variant: stratified permutation test "
     "(values for counts, midranks for timings), exact p"},
    {"halves", "a variant's boots in the run's first half against its second half, as odd_even"},
    {"drift_p", "exact min-p combination of trend, odd_even and halves (Westfall & Young 1993)"},
    {"drifting", "Holm-adjusted drift_p < alpha over the run's testable metrics (Holm 1979)"},
    {"cv", "pooled within-variant sd / |mean|; dispersion = within variance / mean"},
    {"between_runs",
     "run means' CV; one-way random-effects ANOVA estimators of the within- and "
     "between-run sd and the ICC (Searle, Casella & McCulloch 1992, sec. 3.5)"},
    {"mde",
     "smallest shift of B (percent of the mean) that compare's primary rule detects in 80% of "
     "simulated A/B draws of the run's boots per side from its pooled values (each variant "
     "centred on the run's mean when the run is not A/A): the one-sided exact test (midranks "
     "for timings, means otherwise) below alpha / m (m the spec's primary metrics) and the "
     "change beyond the metric's threshold and floor; seeded, common draws per shift"},
    {"jitter",
     "instruction metrics: the largest span (max - min) of one kernel's boots in a run, over "
     "the runs; jitter_runs: the runs with two or more boots of it (the range rule's J and K)"},
    {"noise_floor_pct",
     "95th percentile (nearest rank) of |relative change| between the halves "
     "of equal splits of the pooled values, over every run"},
    {"false_alarms",
     "each run's own A-vs-B comparison (compare_run_variants, "
     "compare_exit_status == 1; exit status 3 counted apart), 95% Clopper-Pearson interval"},
    {"power",
     "primary metrics with detect: Poisson model of per-boot counts in the step's window, "
     "compare's exact one-sided test at alpha / m, threshold and floor (compare/power.h)"}};

nlohmann::json jnum(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

std::string fmt(const char* f, double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The boot order of a run: each cell id's position, the number of cells and the source.
struct BootOrder {
  std::map<std::string, std::size_t> position;
  std::size_t cells = 0;
  std::string source;
};

BootOrder boot_order_of(const nlohmann::json& run) {
  BootOrder b;
  std::vector<std::pair<std::string, std::string>> cells;  // started_at, id
  bool timed = true;
  if (auto it = run.find("cells"); it != run.end() && it->is_array())
    for (const auto& c : *it) {
      if (!c.is_object()) continue;
      const auto st = c.find("started_at");
      timed = timed && st != c.end() && st->is_string() && !st->get<std::string>().empty();
      cells.emplace_back(timed ? st->get<std::string>() : "", c.value("id", ""));
    }
  if (timed && !cells.empty())
    std::stable_sort(cells.begin(), cells.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
  b.source = timed && !cells.empty() ? "cells[].started_at" : "cells[] order";
  for (const auto& [t, id] : cells) b.position.emplace(id, b.position.size());
  b.cells = cells.size();
  return b;
}

std::vector<std::string> pooled_variants(const nlohmann::json& run,
                                         const CalibrationOptions& options) {
  std::vector<std::string> v = options.variants;
  if (v.empty())
    if (auto it = run.find("variant_order"); it != run.end() && it->is_array())
      for (const auto& x : *it)
        if (x.is_string()) v.push_back(x.get<std::string>());
  if (v.empty()) {
    std::set<std::string> seen;
    if (auto it = run.find("cells"); it != run.end() && it->is_array())
      for (const auto& c : *it)
        if (c.is_object() && c.contains("variant") && c["variant"].is_string() &&
            seen.insert(c["variant"].get<std::string>()).second)
          v.push_back(c["variant"].get<std::string>());
  }
  if (v.empty()) throw Error("calibrate: the run has no variants");
  return v;
}

// One metric of one run: its variants' boots in boot order.
struct MetricStrata {
  std::vector<DriftStratum> strata;
  std::set<std::string> accelerators;
  std::string unit;
  MetricKind kind = MetricKind::timing;
};

// Every metric of the pooled variants of one run; boot_ids gets the boots in boot order.
std::map<std::string, MetricStrata> collect_strata(const nlohmann::json& run,
                                                   const std::vector<std::string>& variants,
                                                   const BootOrder& order,
                                                   std::vector<std::string>& boot_ids) {
  std::map<std::string, MetricStrata> out;
  std::map<std::size_t, std::string> boots;
  auto pos = [&](const std::string& id) {
    auto it = order.position.find(id);
    return it == order.position.end() ? order.cells : it->second;
  };
  for (const auto& v : variants) {
    const VariantData d = extract_variant(run, v);
    for (const auto& entry : d.metrics) {
      const auto& s = entry.second;  // not a structured binding: clang 14 cannot capture one
      std::vector<std::size_t> idx(s.values.size());
      std::iota(idx.begin(), idx.end(), 0);
      std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        return pos(s.cell_ids[a]) < pos(s.cell_ids[b]);
      });
      DriftStratum st;
      for (std::size_t i : idx) {
        st.values.push_back(s.values[i]);
        st.first_half.push_back(2 * pos(s.cell_ids[i]) < order.cells);
        boots.emplace(pos(s.cell_ids[i]), s.cell_ids[i]);
      }
      MetricStrata& m = out[entry.first];
      m.strata.push_back(std::move(st));
      m.accelerators.insert(s.accelerators.begin(), s.accelerators.end());
      m.unit = s.unit;
      m.kind = s.metric_kind();
    }
  }
  for (const auto& [p, id] : boots) boot_ids.push_back(id);
  return out;
}

// The pooled values of the strata: as they are in an A/A run (the variants' boots are
// exchangeable, and a chance difference between variants is part of the noise), else each
// stratum moved to the run's grand mean (a real level difference removed).
std::vector<double> pooled_values(const std::vector<DriftStratum>& strata, bool aa) {
  std::vector<double> all;
  for (const auto& s : strata) all.insert(all.end(), s.values.begin(), s.values.end());
  if (all.empty() || aa) return all;
  const double grand = std::accumulate(all.begin(), all.end(), 0.0) / double(all.size());
  all.clear();
  for (const auto& s : strata) {
    if (s.values.empty()) continue;
    const double m =
        std::accumulate(s.values.begin(), s.values.end(), 0.0) / double(s.values.size());
    for (double v : s.values) all.push_back(v - m + grand);
  }
  return all;
}

// The equal splits of n values as index orders (first half A, second half B): all C(n, n/2)
// when n is even and there are at most `limit`, else `limit` random ones (partial
// Fisher-Yates), floor(n/2) cells to each half.
std::vector<std::vector<std::size_t>> equal_splits(std::size_t n, std::size_t limit,
                                                   std::mt19937_64& rng) {
  const std::size_t half = n / 2;
  std::vector<std::vector<std::size_t>> out;
  double combinations = 1;
  for (std::size_t i = 1; i <= half; ++i)
    combinations = combinations * double(n - half + i) / double(i);
  if (n % 2 == 0 && combinations <= double(limit)) {
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
  std::iota(work.begin(), work.end(), 0);
  for (std::size_t s = 0; s < limit; ++s) {
    for (std::size_t i = 0; i < 2 * half; ++i)
      std::swap(work[i], work[i + uniform_index(rng, n - i)]);
    out.push_back(work);
  }
  return out;
}

// |relative change| in percent between the halves of each equal split (finite ones only).
std::vector<double> split_changes(const std::vector<double>& values, MetricKind kind,
                                  std::size_t limit, std::mt19937_64& rng) {
  std::vector<double> out;
  const std::size_t half = values.size() / 2;
  if (half < 2) return out;
  std::vector<double> a(half), b(half);
  for (const auto& order : equal_splits(values.size(), limit, rng)) {
    for (std::size_t i = 0; i < half; ++i) a[i] = values[order[i]], b[i] = values[order[half + i]];
    const double c = kind == MetricKind::count
                         ? count_relative_change(describe(a).mean, describe(b).mean)
                         : relative_change(median_of(a), median_of(b));
    if (std::isfinite(c)) out.push_back(std::fabs(100 * c));
  }
  return out;
}

std::uint64_t metric_seed(std::uint64_t seed, const std::string& name, std::size_t run) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char ch : name) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  return seed ^ h ^ (run * 0x9e3779b97f4a7c15ull);
}

// max - min of one kernel's boots: every pooled boot of an A/A run, else the largest variant's.
double run_span(const std::vector<DriftStratum>& strata, bool aa) {
  double span = 0, lo = kNaN, hi = kNaN;
  for (const auto& s : strata) {
    if (s.values.empty()) continue;
    const auto [mn, mx] = std::minmax_element(s.values.begin(), s.values.end());
    span = std::max(span, *mx - *mn);
    lo = std::isnan(lo) ? *mn : std::min(lo, *mn);
    hi = std::isnan(hi) ? *mx : std::max(hi, *mx);
  }
  return aa && !std::isnan(lo) ? hi - lo : span;
}

// One metric of one run, everything but the Holm step.
RunMetricCalibration calibrate_metric(const MetricStrata& m, const std::string& name,
                                      std::size_t run_index, bool aa,
                                      const CompareSettings& settings, const CalibrationOptions& o,
                                      std::vector<double>& changes) {
  RunMetricCalibration r;
  std::vector<std::vector<double>> groups;
  std::size_t strata = 0;
  for (const auto& s : m.strata) {
    groups.push_back(s.values);
    r.n += s.values.size();
    strata += !s.values.empty();
  }
  if (r.n == 0) return r;
  const std::uint64_t seed = metric_seed(o.seed, name, run_index);
  r.spread = within_run_spread(groups);
  if (m.kind == MetricKind::timing) r.spread.dispersion = kNaN;  // a count's index only
  r.drift = drift_tests(m.strata, m.kind, o.drift_exact_limit, o.drift_resamples, seed);
  const std::vector<double> pooled = pooled_values(m.strata, aa);
  DetectionRule rule;
  rule.level =
      settings.alpha / static_cast<double>(std::max<std::size_t>(1, settings.primary.size()));
  const MetricInfo info{name, m.unit, m.kind, Better::lower, m.accelerators.count("tcg") > 0};
  rule.threshold_pct = effective_threshold_pct(info, settings);
  rule.floor = m.kind == MetricKind::count ? settings.count_floor_for(m.unit) : 0;
  r.mde = minimum_detectable_effect(pooled, r.n / std::max<std::size_t>(1, strata), m.kind, rule,
                                    kPower, o.power_replicates, seed);
  r.span = run_span(m.strata, aa);
  std::mt19937_64 rng(seed);
  std::vector<double> own = split_changes(pooled, m.kind, o.splits, rng);
  r.noise_floor_pct = own.empty() ? kNaN : percentile_nearest_rank(own, 95);
  changes.insert(changes.end(), own.begin(), own.end());
  return r;
}

// The run's own A-vs-B comparison: pooled[0] against pooled[1], or a one-variant run's boots
// alternately as A and B in boot order. Sets compare_exit_status and compare_note.
void compare_run(const nlohmann::json& run, const CompareSettings& settings, RunCalibration& rc) {
  nlohmann::json doc = run;
  const auto& v = rc.variants;
  if (v.size() >= 2) {
    doc["variant_order"] = {v[0], v[1]};
    rc.compare_note = v[0] + " vs " + v[1];
  } else {
    const std::string a = v[0] + "/odd-boots", b = v[0] + "/even-boots";
    const nlohmann::json rec =
        run.value("variants", nlohmann::json::object()).value(v[0], nlohmann::json::object());
    doc["variants"] = {{a, rec}, {b, rec}};
    doc["variant_order"] = {a, b};
    std::map<std::string, std::size_t> rank;
    for (const auto& id : rc.boot_order) rank.emplace(id, rank.size());
    for (auto& c : doc["cells"])
      if (c.is_object() && c.value("variant", "") == v[0] && rank.count(c.value("id", "")))
        c["variant"] = rank[c.value("id", "")] % 2 == 0 ? a : b;
    rc.compare_note = v[0] + "'s boots 1,3,5.. vs 2,4,6.. in boot order";
  }
  try {
    rc.compare_exit_status = compare_exit_status(compare_run_variants(doc, settings));
  } catch (const std::exception& e) {
    rc.compare_exit_status = -1;
    rc.compare_note += ": not compared: " + std::string(e.what());
  }
}

// Whether the pooled variants are one kernel (same build_key and kernel_release); a warning
// when not. A nightly run's baseline variant boots a stored run's kernel as a prebuilt image:
// its kernel is the one its baseline_of record names (pipeline/baseline.h), so a nightly pair of
// one kernel counts as an A/A run.
bool check_aa(const nlohmann::json& run, RunCalibration& rc) {
  std::set<std::string> kernels;
  const auto vs = run.value("variants", nlohmann::json::object());
  for (const auto& v : rc.variants) {
    const auto rec = vs.value(v, nlohmann::json::object());
    const auto of = rec.value("baseline_of", nlohmann::json::object());
    const std::string key = of.is_object() && of.contains("build_key") ? of.value("build_key", "")
                                                                       : rec.value("build_key", "");
    kernels.insert(key + "/" + rec.value("kernel_release", ""));
  }
  if (kernels.size() <= 1) return true;
  rc.warnings.emplace_back(
      "pooled variants differ in build_key or kernel_release: this is not an A/A run; the "
      "drift tests and spreads stay within each variant and the MDE and noise floor use each "
      "variant centred on the run's mean, but the run's own comparison includes the real "
      "difference");
  return false;
}

// Holm over the run's testable metrics: drift_p_holm, drifting, drifting_metrics.
void name_drifting(std::vector<MetricCalibration>& metrics, std::size_t run, double alpha,
                   RunCalibration& rc) {
  std::vector<double> p;
  std::vector<RunMetricCalibration*> at;
  for (auto& m : metrics) {
    RunMetricCalibration& r = m.runs[run];
    if (r.n == 0 || !r.drift.testable) continue;
    p.push_back(r.drift.combined_p);
    at.push_back(&r);
  }
  const std::vector<double> adjusted = holm_adjust(p);
  rc.testable_metrics = p.size();
  for (std::size_t i = 0; i < at.size(); ++i) {
    at[i]->drift_p_holm = adjusted[i];
    at[i]->drifting = adjusted[i] < alpha;
  }
  for (const auto& m : metrics)
    if (m.runs[run].drifting) rc.drifting_metrics.push_back(m.name);
}

// The detect lines of the spec's count primaries at the runs' boots per side (the fewest of a
// variant over the runs) and the window of their steps.
std::vector<std::string> power_lines(const std::vector<nlohmann::json>& runs,
                                     const CompareSettings& s,
                                     const std::vector<RunCalibration>& rc) {
  std::vector<std::string> out;
  std::size_t per_side = 0;
  for (const auto& r : rc)
    if (!r.variants.empty()) {
      const std::size_t n = r.boot_order.size() / r.variants.size();
      per_side = per_side == 0 ? n : std::min(per_side, n);
    }
  const nlohmann::json wls = runs.front()
                                 .value("spec", nlohmann::json::object())
                                 .value("workloads", nlohmann::json::array());
  for (const auto& p : s.primary) {
    if (!p.detect) continue;
    const bool rate =
        p.metric.size() > 6 && p.metric.compare(p.metric.size() - 6, 6, "_per_s") == 0;
    CountPowerPlan plan;
    plan.per_side = std::max<std::size_t>(per_side, 1);
    plan.level = s.alpha / static_cast<double>(s.primary.size());
    plan.threshold_pct = p.threshold_pct.value_or(s.threshold_pct_for(p.metric));
    plan.floor = s.count_floor_for(rate ? "1/s" : "count");
    plan.cpus = p.cpus.empty() ? 1 : p.cpus.size();
    plan.replicates = 300;
    if (rate) {
      plan.window_s = 0;
      for (const auto& w : wls)
        if (w.is_object() && w.value("name", "") == p.metric.substr(0, p.metric.find('.')))
          plan.window_s = w.value("duration_s", 0.0);
      if (!(plan.window_s > 0)) {
        out.push_back(p.row_name() + ": no power calculation: its step's window is not known");
        continue;
      }
    }
    out.push_back(count_power_line(p.row_name(), rate ? "1/s" : "count", *p.detect, plan,
                                   count_power_report(*p.detect, p.higher_is_bad, rate, plan)));
  }
  return out;
}

void check_keys(const std::vector<nlohmann::json>& runs) {
  for (std::size_t k = 1; k < runs.size(); ++k) {
    const auto d = comparison_key_differences(runs[0], runs[k]);
    const bool both_missing =
        !runs[0].contains("comparison_key") && !runs[k].contains("comparison_key");
    if (d.empty() || both_missing) continue;
    std::string m = "calibrate: runs made under different comparison keys cannot be pooled (run " +
                    runs[0].value("run_id", "1") + " = A, run " + runs[k].value("run_id", "?") +
                    " = B):";
    for (const auto& x : d) m += "\n  " + x;
    throw Error(m);
  }
}

// The range rule's J and K of an instruction metric from its runs' spans.
void add_jitter(MetricCalibration& m) {
  m.jitter = kNaN;
  m.jitter_runs = 0;
  if (m.kind != MetricKind::instructions) return;
  for (const auto& r : m.runs) {
    if (r.n < 2) continue;
    m.jitter = m.jitter_runs == 0 ? r.span : std::max(m.jitter, r.span);
    ++m.jitter_runs;
  }
}

std::optional<FalseAlarms> false_alarms(const std::vector<RunCalibration>& runs) {
  FalseAlarms f;
  for (const auto& r : runs) {
    if (r.compare_exit_status < 0) continue;
    ++f.comparisons;
    f.alarms += r.compare_exit_status == 1;
    f.unreachable += r.compare_exit_status == 3;
  }
  if (f.comparisons == 0) return std::nullopt;
  f.interval = clopper_pearson(f.alarms, f.comparisons, 0.95);
  return f;
}

}  // namespace

Calibration calibrate_runs(const std::vector<nlohmann::json>& runs, const CompareSettings& settings,
                           const CalibrationOptions& o) {
  if (o.splits == 0) throw Error("calibrate: splits must be >= 1");
  if (runs.empty()) throw Error("calibrate: give at least one run");
  for (const auto& r : runs)
    if (!r.is_object()) throw Error("result.json: top level must be an object");
  check_keys(runs);
  Calibration cal;
  cal.settings = settings;
  cal.settings.noise_floors_pct.clear();
  cal.settings.calibration.reset();  // calibrated from scratch
  cal.seed = o.seed;
  cal.splits = o.splits;
  cal.comparison_key = runs[0].value("comparison_key", nlohmann::json());
  std::map<std::string, MetricCalibration> metrics;
  std::map<std::string, std::vector<double>> changes;
  std::map<std::string, std::vector<std::vector<double>>> run_values;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    RunCalibration rc;
    rc.run_id = runs[k].value("run_id", "");
    rc.variants = pooled_variants(runs[k], o);
    const BootOrder order = boot_order_of(runs[k]);
    rc.boot_order_source = order.source;
    const auto strata = collect_strata(runs[k], rc.variants, order, rc.boot_order);
    const bool aa = check_aa(runs[k], rc);
    for (const auto& [name, ms] : strata) {
      MetricCalibration& m = metrics[name];
      m.name = name, m.unit = ms.unit, m.kind = ms.kind;
      m.runs.resize(runs.size());
      MetricInfo info{name, ms.unit, ms.kind, Better::lower, ms.accelerators.count("tcg") > 0};
      m.threshold_pct = std::max(m.threshold_pct, effective_threshold_pct(info, cal.settings));
      m.runs[k] = calibrate_metric(ms, name, k, aa, cal.settings, o, changes[name]);
      run_values[name].push_back(pooled_values(ms.strata, aa));
    }
    compare_run(runs[k], cal.settings, rc);
    cal.runs.push_back(std::move(rc));
  }
  for (auto& [name, m] : metrics) {
    m.runs.resize(runs.size());
    add_jitter(m);
    const auto& ch = changes[name];
    m.noise_floor_pct = ch.empty() ? kNaN : percentile_nearest_rank(ch, 95);
    if (run_values[name].size() >= 2) m.between_runs = between_run_spread(run_values[name]);
    cal.metrics.push_back(std::move(m));
  }
  for (std::size_t k = 0; k < runs.size(); ++k)
    name_drifting(cal.metrics, k, cal.settings.alpha, cal.runs[k]);
  cal.false_alarms = false_alarms(cal.runs);
  cal.power = power_lines(runs, cal.settings, cal.runs);
  return cal;
}

}  // namespace isolab

namespace isolab {

namespace {

nlohmann::json run_metric_json(const RunMetricCalibration& r, const std::string& run_id) {
  if (r.n == 0) return nullptr;
  const MinimumDetectableEffect& e = r.mde;
  return {{"run_id", run_id},
          {"n", r.n},
          {"mean", jnum(r.spread.mean)},
          {"cv", jnum(r.spread.cv)},
          {"within_sd", jnum(r.spread.within_sd)},
          {"dispersion", jnum(r.spread.dispersion)},
          {"trend",
           {{"s", r.drift.trend.statistic},
            {"kendall_tau", jnum(r.drift.kendall_tau)},
            {"p", r.drift.trend.p}}},
          {"odd_even", {{"statistic", r.drift.odd_even.statistic}, {"p", r.drift.odd_even.p}}},
          {"halves", {{"statistic", r.drift.halves.statistic}, {"p", r.drift.halves.p}}},
          {"drift_p", r.drift.combined_p},
          {"drift_p_holm", r.drift_p_holm},
          {"drifting", r.drifting},
          {"testable", r.drift.testable},
          {"exact", r.drift.exact},
          {"permutations", r.drift.permutations},
          {"mde",
           {{"boots_per_side", e.per_side},
            {"delta", jnum(e.delta)},
            {"delta_pct", jnum(e.delta_pct)},
            {"power", e.power},
            {"replicates", e.replicates},
            {"reached", e.reached}}},
          {"noise_floor_pct", jnum(r.noise_floor_pct)},
          {"span", jnum(r.span)}};
}

nlohmann::json between_json(const std::optional<BetweenRunSpread>& b) {
  if (!b) return nullptr;
  nlohmann::json means = nlohmann::json::array();
  for (double m : b->run_means) means.push_back(jnum(m));
  return {{"run_means", means},
          {"means_cv", jnum(b->means_cv)},
          {"within_sd", jnum(b->within_sd)},
          {"between_sd", jnum(b->between_sd)},
          {"icc", jnum(b->icc)}};
}

nlohmann::json runs_json(const Calibration& c) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : c.runs)
    runs.push_back(
        {{"run_id", r.run_id},
         {"variants", r.variants},
         {"boot_order", r.boot_order},
         {"boot_order_source", r.boot_order_source},
         {"testable_metrics", r.testable_metrics},
         {"drifting_metrics", r.drifting_metrics},
         {"compare_exit_status",
          r.compare_exit_status < 0 ? nlohmann::json() : nlohmann::json(r.compare_exit_status)},
         {"compare_note", r.compare_note},
         {"warnings", r.warnings}});
  return runs;
}

nlohmann::json false_alarms_json(const std::optional<FalseAlarms>& f) {
  if (!f) return nullptr;
  return {{"alarms", f->alarms},           {"comparisons", f->comparisons},
          {"unreachable", f->unreachable}, {"rate", double(f->alarms) / double(f->comparisons)},
          {"ci_low", f->interval.low},     {"ci_high", f->interval.high},
          {"level", f->interval.level}};
}

}  // namespace

nlohmann::json calibration_to_json(const Calibration& c) {
  nlohmann::json j = {{"schema", "isolab-calibration"},
                      {"version", 3},
                      {"comparison_key", c.comparison_key},
                      {"seed", c.seed},
                      {"splits", c.splits},
                      {"alpha", c.settings.alpha},
                      {"power", kPower},
                      {"method", kMethod},
                      {"warnings", c.warnings},
                      {"runs", runs_json(c)},
                      {"false_alarms", false_alarms_json(c.false_alarms)},
                      {"power", c.power},
                      {"metrics", nlohmann::json::object()}};
  for (const auto& m : c.metrics) {
    nlohmann::json per_run = nlohmann::json::array();
    for (std::size_t k = 0; k < m.runs.size(); ++k)
      per_run.push_back(run_metric_json(m.runs[k], c.runs[k].run_id));
    j["metrics"][m.name] = {{"unit", m.unit},
                            {"kind", metric_kind_name(m.kind)},
                            {"threshold_pct", m.threshold_pct},
                            {"noise_floor_pct", jnum(m.noise_floor_pct)},
                            {"jitter", jnum(m.jitter)},
                            {"jitter_runs", m.jitter_runs},
                            {"runs", per_run},
                            {"between_runs", between_json(m.between_runs)}};
  }
  return j;
}

namespace {

// A p-value in 4 significant places ("0.000694", "1").
std::string pfmt(double p) { return fmt("%.3g", p); }

// A value in the metric's unit, 3 significant digits.
std::string vfmt(double v) { return fmt("%.3g", v); }

std::size_t name_width(const Calibration& c) {
  std::size_t w = 6;
  for (const auto& m : c.metrics) w = std::max(w, m.name.size());
  return w;
}

void render_run(std::ostream& o, const Calibration& c, std::size_t k) {
  const RunCalibration& r = c.runs[k];
  o << "\nrun " << r.run_id << ": variants";
  for (const auto& v : r.variants) o << " " << v;
  o << "; " << r.boot_order.size() << " boots, boot order from " << r.boot_order_source << "\n";
  for (const auto& w : r.warnings) o << "WARNING: " << w << "\n";
  const std::size_t w = name_width(c);
  o << "metric" << std::string(w - 6, ' ')
    << "  unit        kind     n   CV %    disp    tau  trend p  odd/even p  halves p  "
       "drift p(Holm)  MDE (unit)  MDE %  floor %\n";
  for (const auto& m : c.metrics) {
    const RunMetricCalibration& x = m.runs[k];
    if (x.n == 0) continue;
    char line[320];
    std::snprintf(line, sizeof line,
                  "  %-10s  %-6s %3zu %6s %7s %6s %8s %11s %9s %11s%s %11s %6s %8s",
                  m.unit.substr(0, 10).c_str(), metric_kind_name(m.kind), x.n,
                  fmt("%.1f", 100 * x.spread.cv).c_str(),
                  m.kind == MetricKind::count ? fmt("%.3g", x.spread.dispersion).c_str() : "-",
                  fmt("%+.2f", x.drift.kendall_tau).c_str(), pfmt(x.drift.trend.p).c_str(),
                  pfmt(x.drift.odd_even.p).c_str(), pfmt(x.drift.halves.p).c_str(),
                  x.drift.testable ? pfmt(x.drift_p_holm).c_str() : "-", x.drifting ? " *" : "  ",
                  x.mde.reached ? vfmt(x.mde.delta).c_str() : "n/a",
                  x.mde.reached ? fmt("%.1f", x.mde.delta_pct).c_str() : ">500",
                  fmt("%.2f", x.noise_floor_pct).c_str());
    o << m.name << std::string(w - m.name.size(), ' ') << line << "\n";
  }
  o << "own comparison (" << r.compare_note << "): "
    << (r.compare_exit_status < 0 ? std::string("not made")
                                  : "exit " + std::to_string(r.compare_exit_status))
    << "\n";
}

void render_between(std::ostream& o, const Calibration& c) {
  if (c.runs.size() < 2) return;
  const std::size_t w = name_width(c);
  o << "\nbetween runs (one-way random-effects ANOVA over " << c.runs.size() << " runs)\n"
    << "metric" << std::string(w - 6, ' ') << "  run means CV %  within sd  between sd    ICC\n";
  for (const auto& m : c.metrics) {
    if (!m.between_runs) continue;
    const BetweenRunSpread& b = *m.between_runs;
    char line[160];
    std::snprintf(line, sizeof line, "  %14s %10s %11s %6s", fmt("%.1f", 100 * b.means_cv).c_str(),
                  vfmt(b.within_sd).c_str(), vfmt(b.between_sd).c_str(),
                  fmt("%.2f", b.icc).c_str());
    o << m.name << std::string(w - m.name.size(), ' ') << line << "\n";
  }
}

void render_summary(std::ostream& o, const Calibration& c) {
  o << "\n";
  if (c.false_alarms) {
    const FalseAlarms& f = *c.false_alarms;
    o << "false alarms of the exit status: " << f.alarms << " of " << f.comparisons
      << " independent A/A comparisons exit 1 (rate "
      << fmt("%.3f", double(f.alarms) / double(f.comparisons))
      << "; 95% Clopper-Pearson upper bound " << fmt("%.3f", f.interval.high) << ", interval ["
      << fmt("%.3f", f.interval.low) << ", " << fmt("%.3f", f.interval.high) << "])";
    if (f.unreachable > 0)
      o << "; " << f.unreachable << " exit 3: no primary metric could reach alpha";
    o << "\n";
  } else {
    o << "false alarms: no run's own comparison could be made\n";
  }
  bool any_jitter = false;
  for (const auto& m : c.metrics)
    if (m.jitter_runs > 0) {
      if (!any_jitter) o << "jitter of the range rule (largest span of a run, over runs):\n";
      any_jitter = true;
      o << "  " << m.name << ": " << vfmt(m.jitter) << " " << m.unit << " over " << m.jitter_runs
        << " run" << (m.jitter_runs == 1 ? "" : "s") << "\n";
    }
  for (const auto& line : c.power) o << "power: " << line << "\n";
  o << "drifting metrics (Holm over each run's testable metrics, alpha "
    << fmt("%g", c.settings.alpha) << "):";
  for (const auto& r : c.runs) {
    o << (c.runs.size() > 1 ? "\n  run " + r.run_id + ":" : "");
    if (r.drifting_metrics.empty()) o << " none";
    for (std::size_t i = 0; i < r.drifting_metrics.size(); ++i)
      o << (i ? ", " : " ") << r.drifting_metrics[i];
    o << " (of " << r.testable_metrics << " testable)";
  }
  o << "\n";
}

}  // namespace

std::string render_calibration_text(const Calibration& c) {
  std::ostringstream o;
  o << "isolab calibrate: " << c.runs.size() << (c.runs.size() == 1 ? " run" : " runs")
    << ", alpha " << fmt("%g", c.settings.alpha) << " (spec compare settings), power "
    << fmt("%g", kPower) << ", seed " << c.seed << "\n";
  for (const auto& w : c.warnings) o << "WARNING: " << w << "\n";
  for (std::size_t k = 0; k < c.runs.size(); ++k) render_run(o, c, k);
  render_between(o, c);
  render_summary(o, c);
  o << "\ntrend: seasonal Mann-Kendall against boot order (tau = Kendall's tau-a); odd/even and "
       "halves: stratified permutation splits; drift p: their exact min-p combination, "
       "Holm-adjusted over the run's testable metrics (* = drifting). MDE: smallest shift "
       "compare's primary rule (one-sided exact test at alpha / m, beyond the threshold) "
       "detects with power "
    << fmt("%g", kPower)
    << " at the run's boots per side (simulated). floor: noise floor for compare "
       "--noise-floor FILE or compare.calibration (JSON form).\n";
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
    const std::string tok = json_pointer_token(name);
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

std::vector<std::string> calibration_key_differences(const nlohmann::json& calibration,
                                                     const nlohmann::json& run) {
  const auto ck = calibration.is_object() ? calibration.value("comparison_key", nlohmann::json())
                                          : nlohmann::json();
  const auto rk =
      run.is_object() ? run.value("comparison_key", nlohmann::json()) : nlohmann::json();
  if (!ck.is_object())
    return {
        "comparison_key: the calibration has none (made by an older isolab calibrate, or "
        "from runs without one); make it again with isolab calibrate"};
  if (!rk.is_object()) return {"comparison_key: the run has none"};
  std::set<std::string> keys;
  for (const auto& [k, v] : ck.items()) keys.insert(k);
  for (const auto& [k, v] : rk.items()) keys.insert(k);
  std::vector<std::string> out;
  for (const auto& k : keys) {
    const auto a = ck.value(k, nlohmann::json()), b = rk.value(k, nlohmann::json());
    if (a != b)
      out.push_back(k + ": calibration=" + (a.is_null() ? "(absent)" : json_text(a)) +
                    ", run=" + (b.is_null() ? "(absent)" : json_text(b)));
  }
  return out;
}

}  // namespace isolab
