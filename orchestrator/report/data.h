// What the HTML report shows, gathered from the runs before any HTML is written: the comparison
// of `isolab compare` (compare/request.h load_comparison), each side's per-cell samples
// (compare.h extract_variant), and the interruption timelines read from the trace files beside
// result.json (cells/<id>/records/<workload>.trace and .window, parse/trace.h).
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "compare/request.h"
#include "results/result.h"

namespace isolab {

// One side's cell, as result.json has it.
struct ReportCell {
  std::string side;  // "A" | "B"
  std::string id;    // cells[].id
  // The cell as read (owned by ReportData::loaded: its result_a or result_b).
  const results::CellRecord* record = nullptr;
};

// One interruption of an isolated CPU: the entry event of one of the six interruption causes
// (parse/trace.h interruption_start), at t_s seconds after the step window's start (slightly
// negative or past the window's length for events just outside the /proc/uptime readings).
struct TimelineMark {
  int cpu = 0;
  std::string cause;
  std::string name;  // workqueue function or irq handler, "" for vectors
  double t_s = 0;
};

// The interruptions of one cell during one workload step.
struct Timeline {
  std::string side, cell_id, workload;
  double window_s = 0;              // length of the step window (from <workload>.window)
  std::vector<int> cpus;            // the traced CPUs ("# cpu N" headers)
  std::vector<TimelineMark> marks;  // in trace order, at most kMaxTimelineMarks
  std::size_t dropped = 0;          // marks beyond kMaxTimelineMarks, not drawn
  std::string missing;              // why there is no timeline ("" when there is one)
};
inline constexpr std::size_t kMaxTimelineMarks = 4000;

// Move-only: ReportCell::record points into loaded's runs (a move keeps their cells).
struct ReportData {
  ReportData() = default;
  ReportData(ReportData&&) = default;
  ReportData& operator=(ReportData&&) = default;
  ReportData(const ReportData&) = delete;
  ReportData& operator=(const ReportData&) = delete;

  LoadedComparison loaded;
  VariantData side_a, side_b;     // extract_variant of each side (per-cell samples, histograms)
  std::vector<ReportCell> cells;  // A's contributing cells, then B's, in result.json order
  std::vector<ReportCell> all_a, all_b;  // every non-warm-up cell of each side (gate, status)
  std::string timeline_workload;         // see choose_timeline_workload
  std::vector<Timeline> timelines;       // the first contributing cell of A, then of B
};

// The workload whose timeline is drawn: that of the count metric "<wl>.noise.<cause>_per_s"
// (one cause, not the sum "interruptions") that improved or regressed with the largest |B-A| of
// per-boot means, else the workload whose
// noise.interruptions_per_s has the highest B mean, else the first with a noise metric; "" when
// there is none.
std::string choose_timeline_workload(const Comparison& c);

// Reads the trace of `workload` of one cell: <run_dir>/<raw_dir>/records/<workload>.trace (at
// most 64 MiB) and .window ("<start> <end>" seconds of /proc/uptime). Never throws: a missing
// or unreadable file is said in Timeline::missing.
Timeline read_timeline(const std::filesystem::path& run_dir, const ReportCell& cell,
                       const std::string& workload);

// load_comparison(options) and the rest above. Throws as load_comparison does.
ReportData gather_report(const CompareRequest& options);

}  // namespace isolab
