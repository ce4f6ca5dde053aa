// isolab calibrate RUN...: drift, spread, minimum detectable effect and false alarms of one or
// more A/A runs (calibrate/calibrate.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/subcommand.h"

namespace isolab {

struct CalibrateCommandOptions {
  // A/A runs (directories or result.json files); their comparison_key objects must be equal.
  std::vector<std::filesystem::path> run_dirs;
  std::vector<std::string> variants;  // pooled; empty = all variants of each run
  std::size_t splits = 1000;
  std::uint64_t seed = 1;
  std::string format = "text";  // text | json (what goes to `out`)
  // When set, the JSON form is also written here (atomically), for compare --noise-floor.
  std::optional<std::filesystem::path> output;
};
// Settings come from the first run's spec "compare" section (alpha, thresholds).
int calibrate_report_command(const CalibrateCommandOptions& options, std::ostream& out,
                             std::ostream& err);

// Declares `isolab calibrate`'s options (CLI11) on `sub`; the action runs it and returns its exit
// status.
Action declare_calibrate(CLI::App& sub);

}  // namespace isolab
