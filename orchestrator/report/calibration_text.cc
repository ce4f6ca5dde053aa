#include "report/calibration_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace isolab {

namespace {

std::string fmt(const char* f, double v) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

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
    << fmt("%g", kCalibrationPower) << ", seed " << c.seed << "\n";
  for (const auto& w : c.warnings) o << "WARNING: " << w << "\n";
  for (std::size_t k = 0; k < c.runs.size(); ++k) render_run(o, c, k);
  render_between(o, c);
  render_summary(o, c);
  o << "\ntrend: seasonal Mann-Kendall against boot order (tau = Kendall's tau-a); odd/even and "
       "halves: stratified permutation splits; drift p: their exact min-p combination, "
       "Holm-adjusted over the run's testable metrics (* = drifting). MDE: smallest shift "
       "compare's primary rule (one-sided exact test at alpha / m, beyond the threshold) "
       "detects with power "
    << fmt("%g", kCalibrationPower)
    << " at the run's boots per side (simulated). floor: noise floor for compare "
       "--noise-floor FILE or compare.calibration (JSON form).\n";
  return o.str();
}

}  // namespace isolab
