// The report's plots, each one inline <svg> (report/svg.h) with data-plot set to:
//   "histogram:<name>"  latency histogram of A and B overlaid (log count axis): one step path
//                       per side, a bar for the overflows of a side that had any, and one line
//                       per p99 / p99.9 / max of each side that has the value;
//   "metric:<name>"     every contributing boot's value of A and of B (one circle each, titled
//                       with the cell), each side's median (a line) and the confidence interval
//                       of the change drawn on B's row around A's median (A median x (1 + CI)
//                       for timings, A mean + CI of B-A for counts), coloured by verdict;
//   "noise:<workload>"  heatmap of interruptions per second per isolated CPU and cause (rows)
//                       and contributing cell (columns, A then B), from cells[].noise.<wl>;
//   "timeline:<side>:<cell>:<workload>"  one tick per interruption start during the step, one
//                       row per CPU and cause.
// Every mark's <title> names its cell(s).
#pragma once

#include <string>
#include <vector>

#include "compare/compare.h"
#include "report/data.h"

namespace isolab {

// a_cells / b_cells: the cells merged into each side's histogram (for the titles).
std::string histogram_svg(const TailRow& tail, const Histogram* a, const Histogram* b,
                          const std::vector<ReportCell>& cells);

// a_samples / b_samples: the metric's per-cell samples of each side (extract_variant).
std::string metric_svg(const MetricRow& row, const MetricSamples* a, const MetricSamples* b);

std::string noise_svg(const std::string& workload, const std::vector<ReportCell>& cells);

std::string timeline_svg(const Timeline& t);

// CSS class of a verdict: "v-improved", "v-regressed", "v-no-change", "v-inconclusive".
std::string verdict_class(Verdict v);

}  // namespace isolab
