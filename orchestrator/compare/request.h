// What `isolab compare` and `isolab report` compare, loaded: the runs' result.json documents
// (results/result_file.h), the variant defaults, the settings (the B run's spec "compare"
// section, the noise floors of a calibration, --primary) and the comparison itself
// (compare/compare.h compare_runs()).
#pragma once

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "results/result.h"
#include "spec/compare_settings.h"

namespace isolab {

// The settings of a run's spec "compare" section (result.json /spec/compare; defaults when it
// has none). Throws isolab::Error "<result file of run_dir_or_file>: /spec/compare...: ..." for
// a bad section.
CompareSettings run_compare_settings(const nlohmann::json& run,
                                     const std::filesystem::path& run_dir_or_file);

// What to compare: the runs, the variants, and what may change the settings or override a
// refusal (the command line of isolab compare and isolab report, cli/compare.h).
struct CompareRequest {
  // One run dir: its variant_order[0] (A) against [1] (B). Two: run_dirs[0] is A (baseline),
  // run_dirs[1] is B.
  std::vector<std::filesystem::path> run_dirs;
  // Optional variant names. One-run form: default variant_order[0] / [1]. Two-run form:
  // variant_a defaults to A's variant_order[0]; variant_b defaults to variant_a when B has a
  // variant of that name, else to B's variant_order[0].
  std::string variant_a;
  std::string variant_b;
  bool force = false;       // compare runs whose comparison_key differs
  bool pool_hosts = false;  // combine cells of hosts whose fingerprints differ
  // Calibration JSON (isolab calibrate --output) whose noise floors raise the thresholds. It
  // is refused (error, exit 2) when its comparison_key differs from A's or B's
  // (calibration_key_differences), unless force; then the differences go to `err`.
  std::optional<std::filesystem::path> noise_floor_file;
  // --primary METRIC[@CPUS]:higher|lower (verdict.h primary_from_argument), repeatable: the
  // primary metrics, replacing the spec's compare.primary.
  std::vector<std::string> primary;
};

// The settings a comparison of run_a with run_b uses: run_b's spec "compare" section (errors
// name B's result file), the calibration's noise floors (options.noise_floor_file; refused with
// isolab::Error when made under another comparison key, unless options.force: then the
// differences go to `err`), options.primary and options.pool_hosts.
CompareSettings comparison_settings(const CompareRequest& options, const nlohmann::json& run_a,
                                    const nlohmann::json& run_b, std::ostream& err);

// What compare_command compares: both result.json documents (the same document twice in the
// one-run form) and their reading (results/result.h), the directories that hold them (the
// cells' raw outputs are below, at each cell's raw_dir), the resolved variant names and the
// comparison.
struct LoadedComparison {
  nlohmann::json run_a, run_b;
  results::RunResult result_a, result_b;
  std::filesystem::path dir_a, dir_b;
  std::string variant_a, variant_b;
  Comparison comparison;
};
// The loading, variant defaults, settings and compare_runs() of compare_command, without the
// rendering Throws isolab::Error naming the file
// for bad input, and ComparisonRefused as compare_runs() does. Warnings (a calibration used
// under --force) go to err.
LoadedComparison load_comparison(const CompareRequest& options, std::ostream& err = std::cerr);

}  // namespace isolab
