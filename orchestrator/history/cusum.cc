#include "history/cusum.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/number_text.h"
#include "compare/compare.h"
#include "compare/verdict_rules.h"

namespace isolab {

namespace {

MetricKind kind_of_unit(const std::string& unit) {
  if (unit.rfind("instructions", 0) == 0) return MetricKind::instructions;
  return metric_kind_of("", unit);
}

}  // namespace

Cusum cusum(const std::string& metric, const std::vector<SeriesPoint>& series,
            const CusumSettings& s) {
  Cusum c;
  c.metric = metric;
  c.settings = s;
  if (series.empty()) {
    c.note = "no run has the metric";
    return c;
  }
  std::size_t at = 0;
  if (!s.anchor_run.empty()) {
    const auto it = std::find_if(series.begin(), series.end(),
                                 [&](const SeriesPoint& p) { return p.run_id == s.anchor_run; });
    if (it == series.end()) throw Error("cusum: anchor run " + s.anchor_run + " has no " + metric);
    at = static_cast<std::size_t>(it - series.begin());
  }
  c.anchor_run = series[at].run_id;
  c.anchor = series[at].value;
  c.margin = std::max(s.floor, s.margin_pct / 100 * std::fabs(c.anchor));
  if (!(c.margin > 0)) {
    c.note = "the margin is 0 (anchor 0 and no floor)";
    return c;
  }
  double sum = 0;
  for (std::size_t i = at + 1; i < series.size(); ++i) {
    CusumPoint p{series[i].run_id, series[i].started_at, series[i].value, 0, 0, false};
    p.z = (s.higher_is_bad ? 1 : -1) * (p.value - c.anchor) / c.margin;
    sum = std::max(0.0, sum + p.z - s.k);
    p.s = sum;
    p.alarm = sum >= s.h;
    c.alarm = c.alarm || p.alarm;
    c.points.push_back(p);
  }
  if (c.points.empty()) c.note = "only the anchor run so far";
  return c;
}

std::vector<SeriesPoint> series_of(const std::vector<HistoryRow>& rows) {
  std::vector<SeriesPoint> out;
  for (const auto& r : rows)
    if (r.n > 0) out.push_back({r.run_id, r.started_at, r.median});
  return out;
}

CusumSettings default_cusum_settings(const std::string& metric, const std::string& unit,
                                     const std::string& better, const std::string& accelerator,
                                     const CompareSettings& compare) {
  CusumSettings s;
  const MetricInfo info{metric, unit, kind_of_unit(unit), better_from_string(better),
                        accelerator == "tcg"};
  s.margin_pct = effective_threshold_pct(info, compare);
  s.floor = info.kind == MetricKind::count ? compare.count_floor_for(unit) : 0;
  s.higher_is_bad = better != "higher";
  return s;
}

}  // namespace isolab
