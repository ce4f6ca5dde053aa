// Loading what `isolab compare` and `isolab report` compare: the runs' result.json documents,
// the variant defaults, the settings (the B run's spec "compare" section, the noise floors of a
// calibration, --primary) and the comparison itself (compare/compare.h compare_runs()).
#pragma once

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

// <path>/result.json when path is a directory, else path itself.
std::filesystem::path result_file(const std::filesystem::path& run_dir_or_file);

// The settings of a run's spec "compare" section (result.json /spec/compare; defaults when it
// has none). Throws isolab::Error "<result file of run_dir_or_file>: /spec/compare...: ..." for
// a bad section.
CompareSettings run_compare_settings(const nlohmann::json& run,
                                     const std::filesystem::path& run_dir_or_file);

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

// The settings a comparison of run_a with run_b uses: run_b's spec "compare" section (errors
// name B's result file), the calibration's noise floors (options.noise_floor_file; refused with
// isolab::Error when made under another comparison key, unless options.force: then the
// differences go to `err`), options.primary and options.pool_hosts.
CompareSettings comparison_settings(const CompareCommandOptions& options,
                                    const nlohmann::json& run_a, const nlohmann::json& run_b,
                                    std::ostream& err);

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

}  // namespace isolab
