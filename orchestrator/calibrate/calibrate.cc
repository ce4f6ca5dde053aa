#include "calibrate/calibrate.h"

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
#include "compare/comparable.h"
#include "compare/compare.h"
#include "compare/power.h"
#include "compare/verdict_rules.h"
#include "results/result.h"
#include "results/run_facts.h"
#include "results/variant_facts.h"
#include "stats/rng.h"
#include "stats/sample.h"

namespace isolab {

namespace {

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
  for (const auto& c : results::cell_starts(run)) {
    timed = timed && c.started_at;
    cells.emplace_back(timed ? *c.started_at : "", c.id);
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
  if (v.empty()) v = results::variant_order_of(run);
  if (v.empty()) v = results::cell_variants_of(run);
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
std::map<std::string, MetricStrata> collect_strata(const results::RunResult& run,
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
                                    kCalibrationPower, o.power_replicates, seed);
  r.span = run_span(m.strata, aa);
  std::mt19937_64 rng(seed);
  std::vector<double> own = split_changes(pooled, m.kind, o.splits, rng);
  r.noise_floor_pct = own.empty() ? kNaN : percentile_nearest_rank(own, 95);
  changes.insert(changes.end(), own.begin(), own.end());
  return r;
}

// The run's own A-vs-B comparison: pooled[0] against pooled[1], or a one-variant run's boots
// alternately as A and B in boot order. Sets compare_exit_status and compare_note.
void compare_run(const results::RunResult& run, const CompareSettings& settings,
                 RunCalibration& rc) {
  results::RunResult doc = run;
  const auto& v = rc.variants;
  if (v.size() >= 2) {
    doc.variant_order = std::vector<std::string>{v[0], v[1]};
    rc.compare_note = v[0] + " vs " + v[1];
  } else {
    const std::string a = v[0] + "/odd-boots", b = v[0] + "/even-boots";
    const results::VariantRecord rec =
        run.variant(v[0]) ? *run.variant(v[0]) : results::VariantRecord();
    doc.variants = std::map<std::string, results::VariantRecord>{{a, rec}, {b, rec}};
    doc.variant_order = std::vector<std::string>{a, b};
    std::map<std::string, std::size_t> rank;
    for (const auto& id : rc.boot_order) rank.emplace(id, rank.size());
    for (auto& c : doc.cells)
      if (c.variant.value_or("") == v[0] && rank.count(c.id.value_or("")))
        c.variant = rank[c.id.value_or("")] % 2 == 0 ? a : b;
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
bool check_aa(const results::RunResult& run, RunCalibration& rc) {
  std::set<std::string> kernels;
  const results::VariantRecord none;
  for (const auto& v : rc.variants) {
    const results::VariantRecord& rec = run.variant(v) ? *run.variant(v) : none;
    kernels.insert(results::booted_build_key(rec) + "/" + rec.kernel_release.value_or(""));
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
std::vector<std::string> power_lines(const results::RunResult& first, const CompareSettings& s,
                                     const std::vector<RunCalibration>& rc) {
  std::vector<std::string> out;
  std::size_t per_side = 0;
  for (const auto& r : rc)
    if (!r.variants.empty()) {
      const std::size_t n = r.boot_order.size() / r.variants.size();
      per_side = per_side == 0 ? n : std::min(per_side, n);
    }
  const results::SpecWorkloads wls = results::spec_workloads(first);
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
      plan.window_s = wls.duration_s(p.metric.substr(0, p.metric.find('.')));
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
        !results::has_comparison_key(runs[0]) && !results::has_comparison_key(runs[k]);
    if (d.empty() || both_missing) continue;
    std::string m = "calibrate: runs made under different comparison keys cannot be pooled (run " +
                    results::run_id_or(runs[0], "1") + " = A, run " +
                    results::run_id_or(runs[k], "?") + " = B):";
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
  cal.comparison_key = results::comparison_key_json(runs[0]);
  std::map<std::string, MetricCalibration> metrics;
  std::map<std::string, std::vector<double>> changes;
  std::map<std::string, std::vector<std::vector<double>>> run_values;
  std::vector<results::RunResult> read;
  read.reserve(runs.size());
  for (std::size_t k = 0; k < runs.size(); ++k) {
    RunCalibration rc;
    rc.run_id = results::run_id_or(runs[k], "");
    rc.variants = pooled_variants(runs[k], o);
    const BootOrder order = boot_order_of(runs[k]);
    rc.boot_order_source = order.source;
    const results::RunResult& run = read.emplace_back(results::result_from_json(runs[k]));
    const auto strata = collect_strata(run, rc.variants, order, rc.boot_order);
    const bool aa = check_aa(run, rc);
    for (const auto& [name, ms] : strata) {
      MetricCalibration& m = metrics[name];
      m.name = name, m.unit = ms.unit, m.kind = ms.kind;
      m.runs.resize(runs.size());
      MetricInfo info{name, ms.unit, ms.kind, Better::lower, ms.accelerators.count("tcg") > 0};
      m.threshold_pct = std::max(m.threshold_pct, effective_threshold_pct(info, cal.settings));
      m.runs[k] = calibrate_metric(ms, name, k, aa, cal.settings, o, changes[name]);
      run_values[name].push_back(pooled_values(ms.strata, aa));
    }
    compare_run(run, cal.settings, rc);
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
  cal.power = power_lines(read.front(), cal.settings, cal.runs);
  return cal;
}

}  // namespace isolab
