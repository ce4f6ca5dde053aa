// A one-sided CUSUM of a metric's nightly series against a fixed anchor (docs/verdicts.md, "The
// CUSUM"): a creep that no single night shows still raises an alarm.
//
// The series: one value per run (the median of the run's boots of the metric, or of a primary
// metric's row), in run order; the anchor: the first run of the series, or the run named. With
// the metric's margin M (its threshold, fixed before the run: percent of the anchor, at least
// the count floor for counts) each night's change is z_t = (x_t - anchor) / M in the bad
// direction (negated when lower is bad), and
//   S_0 = 0, S_t = max(0, S_(t-1) + z_t - k), alarm when S_t >= h,
// with k = 0.5 (half the margin: a creep of half the margin a night is what it accumulates)
// and h = 1.5 (Page 1954, "Continuous inspection schemes", Biometrika 41:100-115; the one-sided
// tabular form of Montgomery, "Introduction to Statistical Quality Control", 6th ed. 2009,
// sec. 9.1). Five nights of +0.9% against a 1% margin: S = 0.4, 0.8, 1.2, 1.6: alarm on the
// fourth; a single night of +0.9%, or nights of +0.4%, never.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "history/history.h"
#include "spec/compare_settings.h"

namespace isolab {

struct CusumPoint {
  std::string run_id;
  std::string started_at;
  double value = 0;
  double z = 0;  // change against the anchor in margins, bad direction positive
  double s = 0;  // the CUSUM after this night
  bool alarm = false;
};

struct CusumSettings {
  std::string anchor_run;  // "" = the first run of the series
  double margin_pct = 1;   // percent of the anchor
  double floor = 0;        // the margin's smallest absolute size (counts), metric's unit
  bool higher_is_bad = true;
  double k = 0.5, h = 1.5;
};

struct Cusum {
  std::string metric;
  std::string anchor_run;
  double anchor = 0;
  double margin = 0;  // M, metric's unit
  CusumSettings settings;
  std::vector<CusumPoint> points;  // the nights after the anchor
  bool alarm = false;              // S reached h on some night
  std::string note;                // why there is no series ("" when there is one)
};

// The CUSUM of (run, value) points in run order. Throws isolab::Error when anchor_run is named
// and not among them.
struct SeriesPoint {
  std::string run_id;
  std::string started_at;
  double value = 0;
};
Cusum cusum(const std::string& metric, const std::vector<SeriesPoint>& series,
            const CusumSettings& settings);

// The series of history rows of one variant (history(), history/history.h): their medians.
std::vector<SeriesPoint> series_of(const std::vector<HistoryRow>& rows);

// The settings history uses for a metric of unit `unit` on runs of `accelerator` when none
// are given: compare's margin by kind (instructions: instructions_threshold_pct; counts:
// threshold_pct with the count floor; timings: threshold_pct, the TCG timing threshold under
// TCG) and the bad direction from `better` (lower is better: higher is bad).
CusumSettings default_cusum_settings(const std::string& metric, const std::string& unit,
                                     const std::string& better, const std::string& accelerator,
                                     const CompareSettings& compare = {});

}  // namespace isolab
