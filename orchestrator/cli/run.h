// isolab run SPEC: build, boot and measure every variant of a spec, or print its plan (--dry-run);
// with a baseline (spec baseline_run or baseline_last_good), nightly mode: boot the baseline's
// kernel beside tonight's and compare them.
#pragma once

#include "cli/subcommand.h"
#include "pipeline/run.h"

namespace isolab {

// The RunOptions fields every measuring subcommand (run, bisect) fills alike: isolab's source
// tree (for the git revision result.json records), the guest tools and the
// instruction-counting plugin found beside the isolab binary (cli/common.h beside_isolab).
RunOptions guest_tool_run_options();

// Declares `isolab run`'s options (CLI11) on `sub`; the action runs it and returns its exit status.
Action declare_run(CLI::App& sub);

}  // namespace isolab
