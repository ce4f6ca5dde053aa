// isolab compare RUN_DIR | RUN_A RUN_B: the comparison of two variants as text, JSON,
// Markdown, JUnit XML (report/render.h) or the HTML page (cli/report.h).
#pragma once

#include <ostream>

#include "cli/subcommand.h"
#include "compare/load.h"

namespace isolab {

// `isolab compare` as a function of its parsed options: writes the report to `out`,
// diagnostics to `err`, never throws, and returns the process exit status: 0 no regression,
// 1 at least one regression, 2 error or refused comparison.
// Settings come from the B run's spec "compare" section (result.json /spec/compare; errors
// name that pointer), plus the noise floors and --primary. With relabel_aa the exit status is 0
// once the report is written (2 on error).
int compare_command(const CompareCommandOptions& options, std::ostream& out, std::ostream& err);

// Declares `isolab compare`'s options (CLI11) on `sub`; the action runs it and returns its exit
// status.
Action declare_compare(CLI::App& sub);

}  // namespace isolab
