// isolab compare RUN_DIR | RUN_A RUN_B: the comparison of two variants as text, JSON,
// Markdown, JUnit XML (report/render.h) or the HTML page (cli/report.h).
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "cli/subcommand.h"
#include "compare/request.h"

namespace isolab {

// isolab compare's options: what to compare (CompareRequest) and how to answer.
struct CompareCommandOptions : CompareRequest {
  std::string format = "text";  // text | json | markdown | junit
  // --all: the text report lists every metric row, not only the primaries and the rows that
  // changed (report/text.h TextOptions); the other formats always hold every row.
  bool all_rows = false;
  // When set, both runs are indexed into this history database and the outcome recorded
  // (so last_good_run() can skip regressed runs).
  std::optional<std::filesystem::path> history_db;
  // --relabel-aa: instead of comparing, relabel the boots of the one run given (an A/A run)
  // and report how many relabellings would exit 1 (calibrate/relabel_aa.h); text or json.
  bool relabel_aa = false;
};

// `isolab compare` as a function of its parsed options: writes the report to `out`,
// diagnostics to `err`, never throws, and returns the process exit status: 0 no regression,
// 1 something counted against B, 3 no declared primary could reach alpha with these boots
// (compare/exit_status.h), 2 error or refused comparison. A run that did not finish (result.json
// "status" "interrupted" or "running") is compared on the cells it recorded, with
// note_run_records() (cli/report.h): a note on `err` and a line in every format; one that
// recorded no cell is refused (2, refuse_unfinished_without_cells()). Settings come from the B
// run's spec "compare" section (result.json /spec/compare; errors name that pointer), plus the
// noise floors and --primary. With relabel_aa the exit status is 0 once the report is written (2 on
// error).
int compare_command(const CompareCommandOptions& options, std::ostream& out, std::ostream& err);

// Declares `isolab compare`'s options (CLI11) on `sub`; the action runs it and returns its exit
// status.
Action declare_compare(CLI::App& sub);

}  // namespace isolab
