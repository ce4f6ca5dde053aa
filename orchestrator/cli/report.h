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
// SPEC --resume DIR` finishes it" (SPEC is result.json's spec_path when it has one; when that
// file is no longer the spec the run began with, as `run --resume` checks by spec_sha256, the
// hint says so: " with the spec the run began with (SPEC has changed since, ...)"); ""
// otherwise.
std::string unfinished_run_text(const nlohmann::json& run, const std::filesystem::path& dir);

// Throws isolab::Error when such a run recorded no cell at all: "run DIR did not finish (status
// "interrupted") and recorded no cell: nothing to compare; `isolab run SPEC --resume DIR`
// finishes it". compare and report exit 2 on it.
void refuse_unfinished_without_cells(const nlohmann::json& run, const std::filesystem::path& dir);

// For a run with cells whose variant neither variant_order nor variants names (compare leaves
// them out): "run DIR has cells of variants it does not declare (variant_order, variants): 2 of
// variant 'x'; they are left out of the comparison" (names cut to 80 bytes); "" otherwise.
std::string undeclared_variant_text(const nlohmann::json& run, const std::filesystem::path& dir);

// Throws isolab::Error when A or B has no contributing (ok) cell and nothing counted against B
// (compare_exit_status() is not 1): "B (patched) has no cell that counts (N recorded cells
// invalid or failed, none ok): nothing was measured on that side, and nothing counted against
// B". A B whose every boot failed in a way that counts against it keeps its answer (exit 1).
void refuse_side_without_cells(const Comparison& c);

// The checks above on A's and B's run (once when they are one run): refuses a run that did not
// finish and recorded no cell; else, for each sentence above that is not "", writes "<who>:
// note: <sentence>" on `err` and keeps it in the comparison's run_notes ("unfinished",
// "undeclared-variant"), so that every format of the answer says it; then
// refuse_side_without_cells().
void note_run_records(LoadedComparison& l, std::ostream& err, const std::string& who);

// Declares `isolab report`'s options (CLI11) on `sub`; the action runs it and returns its exit
// status.
Action declare_report(CLI::App& sub);

}  // namespace isolab
