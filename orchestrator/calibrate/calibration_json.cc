#include "calibrate/calibration_json.h"

#include <cmath>

namespace isolab {

namespace {

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
                      {"power", kCalibrationPower},
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

}  // namespace isolab
