// The `isolab compare`, `isolab calibrate` and `isolab history` subcommands, as functions of
// parsed options (main.cc parses argv with CLI11 and calls these). Each writes its report to
// `out`, diagnostics to `err`, never throws, and returns the process exit status:
//   compare:   0 no regression, 1 at least one regression, 2 error or refused comparison
//   calibrate: 0 done, 2 error
//   history:   0 done (also when there are no rows), 2 error
#pragma once

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "compare/compare.h"

namespace isolab {

// Loads <path>/result.json, or path itself when it names a file. Throws isolab::Error naming
// the file when it is missing, larger than 512 MiB, or not valid JSON (with the byte offset).
nlohmann::json load_result(const std::filesystem::path& run_dir_or_file);

struct CompareCommandOptions {
  // One run dir: its variant_order[0] (A) against [1] (B). Two: run_dirs[0] is A (baseline),
  // run_dirs[1] is B.
  std::vector<std::filesystem::path> run_dirs;
  // Optional variant names. One-run form: default variant_order[0] / [1]. Two-run form:
  // variant_a defaults to A's variant_order[0]; variant_b defaults to variant_a when B has a
  // variant of that name, else to B's variant_order[0].
  std::string variant_a;
  std::string variant_b;
  std::string format = "text";  // text | json | markdown | junit
  bool force = false;           // compare runs whose comparison_key differs
  bool pool_hosts = false;      // combine cells of hosts whose fingerprints differ
  // Calibration JSON (isolab calibrate --output) whose noise floors raise the thresholds. It
  // is refused (error, exit 2) when its comparison_key differs from A's or B's
  // (calibration_key_differences), unless force; then the differences go to `err`.
  std::optional<std::filesystem::path> noise_floor_file;
  // When set, both runs are indexed into this history database and the outcome recorded
  // (so last_good_run() can skip regressed runs).
  std::optional<std::filesystem::path> history_db;
  // --primary METRIC[@CPUS]:higher|lower (verdict.h primary_from_argument), repeatable: the
  // primary metrics, replacing the spec's compare.primary.
  std::vector<std::string> primary;
  // --relabel-aa: instead of comparing, relabel the boots of the one run given (an A/A run)
  // and report how many relabellings would exit 1 (relabel_aa.h); text or json.
  bool relabel_aa = false;
};
// Settings come from the B run's spec "compare" section (result.json /spec/compare; errors
// name that pointer), plus the noise floors and --primary. With relabel_aa the exit status is 0
// once the report is written (2 on error).
int compare_command(const CompareCommandOptions& options, std::ostream& out, std::ostream& err);

// What compare_command compares: both result.json documents (the same document twice in the
// one-run form), the directories that hold them (the cells' raw outputs are below, at each
// cell's raw_dir), the resolved variant names and the comparison.
struct LoadedComparison {
  nlohmann::json run_a, run_b;
  std::filesystem::path dir_a, dir_b;
  std::string variant_a, variant_b;
  Comparison comparison;
};
// The loading, variant defaults, settings and compare_runs() of compare_command, without the
// rendering (options.format and history_db are not read). Throws isolab::Error naming the file
// for bad input, and ComparisonRefused as compare_runs() does. Warnings (a calibration used
// under --force) go to err.
LoadedComparison load_comparison(const CompareCommandOptions& options,
                                 std::ostream& err = std::cerr);

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
};
int history_command(const HistoryCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace isolab
