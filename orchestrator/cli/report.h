// isolab report RUN_DIR | RUN_A RUN_B: one self-contained HTML page of a comparison
// (report/html.h); also `isolab compare --format html`.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>

#include "cli/subcommand.h"
#include "compare/request.h"

namespace isolab {

struct ReportCommandOptions {
  CompareRequest compare;  // runs, variants, --force, --noise-floor
  // Where the page goes: a file (written atomically), or `out` when empty or "-".
  std::optional<std::filesystem::path> output;
  // true: return compare's exit status (0 no regression, 1 regression) as `compare --format
  // html` does; false (`isolab report`): 0 once the page is written.
  bool compare_status = false;
};

// Writes the page (report/html.h) and, with an output file, its path on `err`. Errors go to
// `err` ("isolab report: error: ..."); returns 2 on error or a refused comparison.
int report_command(const ReportCommandOptions& options, std::ostream& out, std::ostream& err);

// Declares `isolab report`'s options (CLI11) on `sub`; the action runs it and returns its exit
// status.
Action declare_report(CLI::App& sub);

}  // namespace isolab
