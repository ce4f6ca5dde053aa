// isolab history METRIC: one metric's trend across the runs indexed in RESULTS_DIR/isolab.db
// (history/history.h).
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "cli/subcommand.h"

namespace isolab {

struct HistoryCommandOptions {
  std::filesystem::path results_dir;  // database at results_dir/isolab.db
  std::string metric;                 // e.g. "latency.latency_max_us"; empty only with last_good
  std::optional<std::string> variant;
  std::optional<std::string> spec_name;
  std::string format = "text";  // text | json
  // Index every <results_dir>/*/result.json first (idempotent, unchanged runs are skipped).
  // Unreadable result.json files are reported on `err` and skipped.
  bool scan = true;
  // Print last_good_run(spec_name, variant) instead of the trend; needs both set.
  bool last_good = false;
  // The CUSUM of the variant's series (history/cusum.h), printed after the trend when a variant
  // is given: its anchor run ("" = the first), and its margin in percent (unset: compare's
  // margin for the metric's kind).
  std::string anchor;
  std::optional<double> margin_pct;
};
// Exit status: 0, 1 when the CUSUM alarms, 2 on error.
int history_command(const HistoryCommandOptions& options, std::ostream& out, std::ostream& err);

// Declares `isolab history`'s options (CLI11) on `sub`; the action runs it and returns its exit
// status.
Action declare_history(CLI::App& sub);

}  // namespace isolab
