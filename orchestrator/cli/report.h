// isolab report RUN_DIR | RUN_A RUN_B: one self-contained HTML page of a comparison
// (report/html.h); also `isolab compare --format html`.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "cli/subcommand.h"
#include "compare/request.h"

namespace isolab {

struct ReportCommandOptions {
  CompareRequest compare;  // runs, variants, --force, --noise-floor
  // Where the page goes: a file (written atomically), or `out` when empty or "-".
  std::optional<std::filesystem::path> output;
  // true: return compare's exit status (compare/exit_status.h: 0, 1 or 3) as `compare --format
  // html` does; false (`isolab report`): 0 once the page is written.
  bool compare_status = false;
};

// Writes the page (report/html.h) and, with an output file, its path on `err`. Errors go to
// `err` ("isolab report: error: ..."); returns 2 on error or a refused comparison.
int report_command(const ReportCommandOptions& options, std::ostream& out, std::ostream& err);

// For a run whose result.json "status" is "interrupted" or "running": "run DIR did not finish
// (status "interrupted", N cells recorded): the comparison rests on those cells; `isolab run
// SPEC --resume DIR` finishes it" (SPEC is result.json's spec_path when it has one); ""
// otherwise.
std::string unfinished_run_text(const nlohmann::json& run, const std::filesystem::path& dir);

// Throws isolab::Error when such a run recorded no cell at all: "run DIR did not finish (status
// "interrupted") and recorded no cell: nothing to compare; `isolab run SPEC --resume DIR`
// finishes it". compare and report exit 2 on it.
void refuse_unfinished_without_cells(const nlohmann::json& run, const std::filesystem::path& dir);

// Both checks on A's and B's run (once when they are one run): refuses as above, else writes
// "<who>: note: <unfinished_run_text>" on `err` for each unfinished run and keeps the text in
// the comparison's unfinished_runs, so that every format of the answer says it.
void note_unfinished_runs(LoadedComparison& l, std::ostream& err, const std::string& who);

// Declares `isolab report`'s options (CLI11) on `sub`; the action runs it and returns its exit
// status.
Action declare_report(CLI::App& sub);

}  // namespace isolab
