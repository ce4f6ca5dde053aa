// isolab bisect SPEC: which patch of B's series first moves a metric. Each step is a run of A
// and a prefix of the series (pipeline/bisect.h), judged by compare; the search is
// compare/bisect_search.h. Everything goes into one bisect directory under --results-dir: the
// step runs (each a run directory compare and report take) and bisect.json, written after every
// step. Prints each step as it ends, the conclusion, and the bisect directory last.
// Exit status: 0 a culprit named, 1 none (the series does not move the metric, or a step stayed
// inconclusive at --max-boots), 2 error (bisect.json keeps the steps measured before it).
#pragma once

#include "cli/subcommand.h"

namespace isolab {

// Declares `isolab bisect`'s options (CLI11) on `sub`; the action runs it.
Action declare_bisect(CLI::App& sub);

}  // namespace isolab
