#include "report/plots.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "base/xml_text.h"
#include "parse/trace.h"
#include "report/format.h"
#include "report/summary.h"
#include "report/svg.h"
#include "results/cell_facts.h"
#include "results/histogram.h"

namespace isolab {

namespace {

using svg::axis_num;

std::string side_class(const std::string& side) { return side == "A" ? "a" : "b"; }

// "A: vanilla-r0, vanilla-r1" for the cells of one side.
std::string cell_list(const std::vector<ReportCell>& cells, const std::string& side) {
  std::string s;
  for (const ReportCell& c : cells) {
    if (c.side != side) continue;
    s += (s.empty() ? "" : ", ") + c.id;
  }
  return side + " cells: " + (s.empty() ? "none" : s);
}

// The cell of `side` whose own histogram reaches bucket `v` (the max), "" when none does.
std::string cell_with_max(const std::vector<ReportCell>& cells, const std::string& side,
                          const std::string& name, std::int64_t v) {
  for (const ReportCell& c : cells) {
    if (c.side != side) continue;
    const std::optional<Histogram> one = results::cell_histogram(*c.record, name);
    if (one && !one->counts.empty() && one->counts.rbegin()->first == v) return c.id;
  }
  return "";
}

using Bins = std::map<std::int64_t, std::uint64_t>;

// The histogram's buckets summed into bins of `width` buckets, keyed by the first bucket.
Bins binned(const Histogram& h, std::int64_t width) {
  Bins out;
  for (const auto& [k, n] : h.counts) out[k / width * width] += n;
  return out;
}

// Step outline of the bins over [0, hi] (an empty bin drawn on the baseline).
std::string step_path(const Bins& bins, const svg::Scale& x, const svg::Scale& y, std::int64_t hi,
                      std::int64_t width) {
  std::string d;
  char buf[64];
  const double base = y.r0;
  std::snprintf(buf, sizeof buf, "M%.1f %.1f", x(0), base);
  d += buf;
  for (std::int64_t b = 0; b <= hi; b += width) {
    auto it = bins.find(b);
    const double yy = it == bins.end() ? base : y(static_cast<double>(it->second));
    std::snprintf(buf, sizeof buf, "V%.1fH%.1f", yy, x(static_cast<double>(b + width)));
    d += buf;
  }
  std::snprintf(buf, sizeof buf, "V%.1f", base);
  return d + buf;
}

struct TailMark {
  const char* label;
  std::optional<std::int64_t> HistogramTail::*field;
};
constexpr TailMark kTailMarks[] = {
    {"p99", &HistogramTail::p99}, {"p99.9", &HistogramTail::p99_9}, {"max", &HistogramTail::max}};

struct HistogramFrame {
  svg::Scale x, y;
  std::int64_t hi = 1, width = 1;  // last bucket drawn, buckets per bin
  double over_x = 0;               // where the overflow bars go
};

void histogram_side(svg::Svg& s, const TailRow& t, const Histogram& h, const HistogramTail& tail,
                    const std::string& side, const std::vector<ReportCell>& cells,
                    const HistogramFrame& fr) {
  const svg::Scale& x = fr.x;
  const svg::Scale& y = fr.y;
  const double over_x = fr.over_x;
  const std::string cls = side_class(side);
  const std::string who = cell_list(cells, side);
  if (h.counts.empty() && h.overflows == 0) return;
  s.path_mark(step_path(binned(h, fr.width), x, y, fr.hi, fr.width), "hist " + cls,
              side + " " + t.histogram + ": " + std::to_string(h.total()) + " samples; " + who);
  if (h.overflows > 0) {
    const double off = side == "A" ? 0 : 9;
    s.rect_mark(
        over_x + off, y(static_cast<double>(h.overflows)), 8,
        y.r0 - y(static_cast<double>(h.overflows)), "over " + cls,
        side + ": " + std::to_string(h.overflows) + " samples beyond the histogram; " + who);
  }
  int k = 0;
  std::string beyond;  // the tails past the histogram's last bucket (overflows)
  for (const TailMark& m : kTailMarks) {
    const auto v = tail.*(m.field);
    ++k;
    if (!v) {
      if (h.overflows > 0) beyond += (beyond.empty() ? "" : ", ") + std::string(m.label);
      continue;
    }
    std::string title = side + " " + m.label + " = " + std::to_string(*v) + " " + t.unit;
    if (std::string(m.label) == "max") {
      const std::string c = cell_with_max(cells, side, t.histogram, *v);
      title += c.empty() ? "; " + who : " in cell " + c;
    } else {
      title += " (merged); " + who;
    }
    const double xx = x(static_cast<double>(*v) + 0.5);
    s.line_mark(xx, y.r1, xx, y.r0, "tail " + cls + " t" + std::to_string(k), title);
    s.text(xx + 3, y.r1 + 10 + 11 * (k - 1) + (side == "A" ? 0 : 36), side + " " + m.label,
           "mark-label " + cls);
  }
  if (!beyond.empty())
    s.text(over_x - 6, y.r1 + (side == "A" ? 4 : 17), side + " " + beyond + ": beyond the range",
           "mark-label " + cls, "end");
}

}  // namespace

std::string verdict_class(Verdict v) {
  switch (v) {
    case Verdict::improved:
      return "v-improved";
    case Verdict::regressed:
      return "v-regressed";
    case Verdict::changed_below:
      return "v-changed-below";
    case Verdict::no_change:
      return "v-no-change";
    case Verdict::inconclusive:
      break;
  }
  return "v-inconclusive";
}

std::string histogram_svg(const TailRow& t, const Histogram* a, const Histogram* b,
                          const std::vector<ReportCell>& cells) {
  const Histogram empty;
  const Histogram& ha = a ? *a : empty;
  const Histogram& hb = b ? *b : empty;
  HistogramFrame fr;
  for (const Histogram* h : {&ha, &hb})
    if (!h->counts.empty()) fr.hi = std::max(fr.hi, h->counts.rbegin()->first);
  fr.width = std::max<std::int64_t>(1, (fr.hi + 1 + 249) / 250);  // at most 250 bins
  std::uint64_t top = 1;
  for (const Histogram* h : {&ha, &hb}) {
    for (const auto& [k, n] : binned(*h, fr.width)) top = std::max<std::uint64_t>(top, n);
    top = std::max<std::uint64_t>(top, h->overflows);
  }
  const double W = 760, H = 300, L = 70, R = 60, T = 20, B = 50;
  svg::Svg s(W, H, "histogram:" + t.histogram, "latency histogram of " + t.histogram);
  fr.x = svg::Scale{0, static_cast<double>(fr.hi + 1), L, W - R, false};
  fr.y = svg::Scale{0.8, static_cast<double>(top) * 1.3, H - B, T, true};
  s.x_axis(fr.x, H - B, svg::ticks(0, static_cast<double>(fr.hi + 1), 8, false),
           "latency (" + t.unit + "), workload " + t.histogram);
  s.y_axis(fr.y, L, svg::ticks(1, static_cast<double>(top) * 1.3, 0, true),
           fr.width == 1 ? "samples (log)"
                         : "samples per " + std::to_string(fr.width) + " " + t.unit + " (log)");
  fr.over_x = W - R + 12;
  // Below the tick labels' row: on it, the last tick's number ran into it ("2000over").
  if (ha.overflows + hb.overflows > 0) s.text(fr.over_x + 8, H - B + 27, "over", "tick", "middle");
  histogram_side(s, t, ha, t.a, "A", cells, fr);
  histogram_side(s, t, hb, t.b, "B", cells, fr);
  return s.str();
}

namespace {

// The CI of the change in the metric's unit, on B's row: see plots.h.
std::optional<std::pair<double, double>> ci_in_unit(const MetricRow& r) {
  if (r.kind == MetricKind::count) {
    if (!r.test.count || !r.test.count->diff_ci) return std::nullopt;
    const double base = r.test.count->mean_a;
    return std::make_pair(base + r.test.count->diff_ci->low, base + r.test.count->diff_ci->high);
  }
  if (!r.ci_low_pct || !r.ci_high_pct || r.test.a.n == 0) return std::nullopt;
  const double m = r.test.a.median;
  return std::make_pair(m * (1 + *r.ci_low_pct / 100), m * (1 + *r.ci_high_pct / 100));
}

void metric_points(svg::Svg& s, const MetricSamples* m, const std::string& side, double yy,
                   const svg::Scale& x, const std::string& unit) {
  if (!m) return;
  for (std::size_t i = 0; i < m->values.size(); ++i) {
    const std::string cell = i < m->cell_ids.size() ? m->cell_ids[i] : "?";
    s.circle_mark(x(m->values[i]), yy + (static_cast<double>(i % 3) - 1) * 3, 4,
                  "pt " + side_class(side),
                  side + " " + cell + ": " + axis_num(m->values[i]) + " " + unit);
  }
}

}  // namespace

std::string metric_svg(const MetricRow& r, const MetricSamples* a, const MetricSamples* b) {
  const double W = 440, H = 64, L = 22, R = 14, ya = 16, yb = 36;
  std::vector<double> all = r.a_values;
  all.insert(all.end(), r.b_values.begin(), r.b_values.end());
  const auto ci = ci_in_unit(r);
  if (ci) all.insert(all.end(), {ci->first, ci->second});
  double lo = all.empty() ? 0 : *std::min_element(all.begin(), all.end());
  double hi = all.empty() ? 1 : *std::max_element(all.begin(), all.end());
  if (lo == hi && lo == 0) {
    hi = 1;  // all zero: keep the axis non-negative
  } else if (lo == hi) {
    lo -= std::abs(lo) * 0.1, hi += std::abs(hi) * 0.1;
  }
  const double pad = (hi - lo) * 0.05;
  svg::Svg s(W, H, "metric:" + r.name, r.name + ": every boot of A and B");
  const svg::Scale x{lo - pad, hi + pad, L, W - R, false};
  s.text(2, ya + 4, "A", "side a");
  s.text(2, yb + 4, "B", "side b");
  const std::string vc = verdict_class(r.verdict.verdict);
  if (ci) {
    s.rect_mark(x(ci->first), yb - 8, std::max(2.0, x(ci->second) - x(ci->first)), 16, "ci " + vc,
                "B: confidence interval of the change, " + axis_num(ci->first) + " to " +
                    axis_num(ci->second) + " " + r.unit + " (" + report_detail::format_change(r) +
                    ", " + verdict_name(r.verdict.verdict) + ")");
  }
  const char* what = r.kind == MetricKind::count ? "mean" : "median";
  for (const auto& [side, st, yy] :
       {std::tuple{std::string("A"), &r.test.a, ya}, std::tuple{std::string("B"), &r.test.b, yb}}) {
    if (st->n == 0) continue;
    const double v = r.kind == MetricKind::count ? st->mean : st->median;
    s.line_mark(x(v), yy - 9, x(v), yy + 9, "med " + side_class(side),
                side + " " + what + " " + axis_num(v) + " " + r.unit + " over " +
                    std::to_string(st->n) + " boots");
  }
  metric_points(s, a, "A", ya, x, r.unit);
  metric_points(s, b, "B", yb, x, r.unit);
  s.x_axis(x, H - 14, svg::ticks(lo - pad, hi + pad, 5, false), "");
  return s.str();
}

namespace {

using NoiseCpus = std::vector<results::NoiseCpu>;

std::optional<double> per_s(const results::NoiseCpu& cpu, const std::string& cause) {
  const auto v = cpu.per_s.find(cause);
  return v == cpu.per_s.end() ? std::nullopt : std::optional<double>(v->second);
}

// White (0) to dark red (the heatmap's maximum), on log10(1 + rate).
std::string heat(double v, double top) {
  const double f = top > 0 ? std::log10(1 + std::max(0.0, v)) / std::log10(1 + top) : 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "rgb(255,%d,%d)", static_cast<int>(255 - 200 * f),
                static_cast<int>(255 - 230 * f));
  return f > 0.85 ? "rgb(170,20,20)" : buf;
}

// The CPUs that appear in any cell's noise details, in first-seen order.
std::vector<int> noise_cpu_list(const std::vector<NoiseCpus>& cells) {
  std::vector<int> cpus;
  for (const NoiseCpus& list : cells)
    for (const auto& e : list)
      if (std::find(cpus.begin(), cpus.end(), e.cpu) == cpus.end()) cpus.push_back(e.cpu);
  return cpus;
}

const results::NoiseCpu* cpu_entry(const NoiseCpus& list, int cpu) {
  for (const auto& e : list)
    if (e.cpu == cpu) return &e;
  return nullptr;
}

}  // namespace

std::string noise_svg(const std::string& wl, const std::vector<ReportCell>& cells) {
  std::vector<NoiseCpus> noise;
  for (const ReportCell& c : cells) noise.push_back(results::noise_cpus(*c.record, wl));
  const std::vector<int> cpus = noise_cpu_list(noise);
  const auto& causes = noise_causes();
  const double cw = 56, rh = 17, L = 190, T = 40, gap = 10;
  const double W = L + cw * static_cast<double>(cells.size()) + gap + 20;
  auto col_x = [&](std::size_t j) {
    return L + cw * static_cast<double>(j) + (cells[j].side == "B" ? gap : 0);
  };
  const double H = T + rh * static_cast<double>(cpus.size() * causes.size()) + 10;
  svg::Svg s(W, H, "noise:" + wl, "interruptions per second of " + wl);
  double top = 0;
  for (const NoiseCpus& list : noise)
    for (int cpu : cpus)
      if (const auto* e = cpu_entry(list, cpu))
        for (const auto& cause : causes) top = std::max(top, per_s(*e, cause).value_or(0));
  for (std::size_t j = 0; j < cells.size(); ++j) {
    const double x = col_x(j);
    s.text(x + cw / 2, T - 22, cells[j].side, "side " + side_class(cells[j].side), "middle");
    s.text(x + cw / 2, T - 8, cells[j].id, "tick col", "middle");
  }
  std::size_t row = 0;
  for (int cpu : cpus) {
    if (row > 0)
      s.line(8, T + rh * static_cast<double>(row), W - 10, T + rh * static_cast<double>(row),
             "sep");
    for (const std::string& cause : causes) {
      const double y = T + rh * static_cast<double>(row++);
      s.text(L - 6, y + rh - 5, "CPU " + std::to_string(cpu) + " " + cause, "tick", "end");
      for (std::size_t j = 0; j < cells.size(); ++j) {
        const auto* e = cpu_entry(noise[j], cpu);
        const auto v = e ? per_s(*e, cause) : std::nullopt;
        const double x = col_x(j);
        if (!v) {
          s.rect(x + 1, y + 1, cw - 2, rh - 2, "heat-missing");
          continue;
        }
        s.rect_mark(x + 1, y + 1, cw - 2, rh - 2, "heat",
                    cells[j].side + " " + cells[j].id + " CPU " + std::to_string(cpu) + " " +
                        cause + ": " + axis_num(*v) + "/s",
                    heat(*v, top));
        s.text(x + cw / 2, y + rh - 5, axis_num(*v), *v > top * 0.3 ? "cell-val hot" : "cell-val",
               "middle");
      }
    }
  }
  return s.str();
}

std::string timeline_svg(const Timeline& t) {
  static const std::vector<std::string> kCauses = {"vmstat_update",     "workqueue_other",
                                                   "local_timer",       "ipi_reschedule",
                                                   "ipi_call_function", "irq"};
  const double W = 900, rh = 13, L = 190, R = 20, T = 10, B = 44;
  const double H = T + rh * static_cast<double>(t.cpus.size() * kCauses.size()) + B;
  svg::Svg s(W, H, "timeline:" + t.side + ":" + t.cell_id + ":" + t.workload,
             "interruptions of " + t.cell_id + " during " + t.workload);
  double t0 = 0, t1 = t.window_s;
  for (const TimelineMark& m : t.marks) t0 = std::min(t0, m.t_s), t1 = std::max(t1, m.t_s);
  const svg::Scale x{t0, t1, L, W - R, false};
  std::map<std::pair<int, std::string>, double> row_y;
  std::size_t row = 0;
  for (int cpu : t.cpus) {
    for (const std::string& cause : kCauses) {
      const double y = T + rh * static_cast<double>(row++);
      row_y[{cpu, cause}] = y;
      s.line(L, y + rh, W - R, y + rh, "grid");
      s.text(L - 6, y + rh - 3, "CPU " + std::to_string(cpu) + " " + cause, "tick", "end");
    }
  }
  for (const TimelineMark& m : t.marks) {
    const auto it = row_y.find({m.cpu, m.cause});
    if (it == row_y.end()) continue;
    char at[32];
    std::snprintf(at, sizeof at, "%.6f", m.t_s);
    s.line_mark(x(m.t_s), it->second + 1, x(m.t_s), it->second + rh - 1, "tl c-" + m.cause,
                t.side + " " + t.cell_id + " CPU " + std::to_string(m.cpu) + " " + m.cause +
                    (m.name.empty() ? "" : " (" + m.name + ")") + " at +" + at + " s");
  }
  s.x_axis(x, H - B + 4, svg::ticks(t0, t1, 10, false), "seconds since the start of " + t.workload);
  return s.str();
}

}  // namespace isolab
