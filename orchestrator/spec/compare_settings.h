// The spec's "compare" section: the statistics settings of `isolab compare`
// (compare/verdict.h applies them), read when a spec is loaded (spec/spec.h) and again by
// compare from the spec a result.json keeps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "spec/primary.h"

namespace isolab {

// What a calibration (`isolab calibrate` over K independent A/A runs; calibrate/calibrate.h)
// established for one metric, fixed before the run that is judged.
struct MetricCalibrationFacts {
  // The largest spread (max - min) of one kernel's boots within a run, in the metric's unit:
  // the jitter of the range rule (stats/range_rule.h). nullopt: not calibrated.
  std::optional<double> jitter;
  std::size_t runs = 0;  // independent runs it rests on (K)
  // The calibration's noise floor, percent (raises the metric's threshold).
  std::optional<double> noise_floor_pct;
};

// The calibration a spec names (compare.calibration).
struct CalibrationSettings {
  std::string source;             // the file as the spec names it; "" for an inline object
  nlohmann::json comparison_key;  // of the calibration's runs; null when unknown
  std::map<std::string, MetricCalibrationFacts> metrics;
  // Cleared by compare when the calibration was made under another accelerator, command
  // line, guest size or workloads than the runs compared (compare_runs): then nothing of it
  // is used, and the comparison says why (Comparison::calibration_note).
  bool applied = true;
};

struct CompareSettings {
  double alpha = 0.05;                 // significance level of every test, and family-wise
  std::size_t min_samples = 3;         // cells per variant below which a metric is inconclusive
  double default_threshold_pct = 2.0;  // |relative change| a change must exceed, percent
  // Per-metric thresholds in percent. A key is an exact metric name ("latency.latency_max_us")
  // or a prefix ending in '*' ("latency.*"); exact beats prefix, longer prefix beats shorter.
  std::map<std::string, double> thresholds_pct;
  // Calibrated noise floors in percent by exact metric name (see calibrate.h).
  std::map<std::string, double> noise_floors_pct;
  std::size_t bootstrap_resamples = 2000;    // read from specs; no verdict uses a bootstrap
  double confidence_level = 0.95;            // of the intervals
  std::size_t permutation_resamples = 2000;  // 0 skips the (informational) median test
  std::uint64_t seed = 1;
  double max_ci_width_factor = 4.0;  // read from specs; replaced by the equivalence margin
  // Smallest threshold of a timing metric when a contributing cell ran under TCG, percent;
  // 0 disables. Default 25: above the boot-to-boot timing variation measured
  // under TCG (docs/measurements.md).
  double tcg_timing_threshold_pct = 25.0;
  // Absolute floor of |mean_B - mean_A| for count metrics, by unit (see count_floor_for).
  std::map<std::string, double> count_floors = {{"1/s", 0.1}, {"count", 1.0}};
  // Permutation tests: enumerate up to this many reassignments, else draw count_resamples.
  std::uint64_t count_exact_limit = 1000000;
  std::size_t count_resamples = 20000;
  // Instruction metrics: smallest threshold, percent, and the factor of A's CV.
  double instructions_threshold_pct = 1.0;
  // Read from specs for compatibility and ignored: a margin is never taken from the values it
  // judges (docs/verdicts.md).
  double instructions_cv_factor = 3.0;
  // compare.calibration: margins and jitters fixed before the run.
  std::optional<CalibrationSettings> calibration;
  // Declared primary metrics (spec compare.primary, or --primary, which replaces the spec's).
  std::vector<PrimaryMetric> primary;
  std::string primary_origin;  // "spec", "--primary", or "" when none is declared
  // Joint relabellings of the boots for the family-wise p of secondary metrics: all of them
  // up to relabel_exact_limit, else relabel_resamples seeded ones (multiplicity.h).
  std::uint64_t relabel_exact_limit = 100000;
  std::size_t relabel_resamples = 10000;
  // The permutation tests inverted for intervals: exact up to this limit, else resamples.
  std::uint64_t interval_exact_limit = 2000;
  std::size_t interval_resamples = 2000;
  // Compute only what the exit status rests on and each metric's own test: no intervals and no
  // family-wise p of secondary metrics (used by the A/A relabelling, relabel_aa in compare.h).
  bool exit_status_only = false;
  // Combine cells of hosts whose fingerprints differ (compare --pool-hosts; not read from a
  // spec): see compare_runs.
  bool pool_hosts = false;

  // The configured threshold of a metric, percent: max(configured threshold, noise floor,
  // the applied calibration's noise floor).
  double threshold_pct_for(const std::string& metric) const;
  // The applied calibration's facts of a metric, or nullptr.
  const MetricCalibrationFacts* calibrated(const std::string& metric) const;
  // The threshold configured for this metric in particular, percent: its thresholds_pct entry
  // (exact or prefix, as threshold_pct_for) and its noise floor, the larger; nullopt when it has
  // neither (default_threshold_pct is not consulted).
  std::optional<double> own_threshold_pct(const std::string& metric) const;
  // The count floor of a unit: count_floors[unit] when present; else the "1/s" entry for a
  // unit ending in "/s" and the "count" entry otherwise (0 when that entry is absent too).
  double count_floor_for(const std::string& unit) const;
};

// Reads the spec's optional "compare" object:
//   {"alpha":0.05,"min_samples":3,"threshold_pct":2.0,"thresholds_pct":{"latency.*":10},
//    "bootstrap_resamples":2000,"confidence_level":0.95,"permutation_resamples":2000,
//    "seed":1,"max_ci_width_factor":4,"tcg_timing_threshold_pct":25,
//    "count_floor":0.1 | {"1/s":0.1,"count":1},
//    "instructions_threshold_pct":1.0,"instructions_cv_factor":3 (ignored),
//    "calibration":{"file":"calibration/x.json","comparison_key":{...},
//                   "metrics":{"vmstat-syscall.insns_per_syscall":{"jitter":0.5,"runs":3,
//                                                                   "noise_floor_pct":0.01}}},
//    "primary":[{"metric":"vmstat-idle.noise.vmstat_update_per_s","cpus":"6","bad":"higher",
//                "threshold_pct":10}]}
// calibration is the object calibration_section() makes from a calibration file (the spec
// loader reads a file name there: spec/spec.h); jitter and noise_floor_pct are numbers >= 0 or
// null, runs an integer >= 1 (required with a jitter).
// count_floor as a number sets the floor of every count metric in its own unit; as an object it
// sets the floors of the units it names (the others keep their defaults). primary: 1 to
// kMaxPrimary entries, each with "metric" and "bad" ("higher" or "lower": the direction of a
// regression), optional "cpus" (a CPU list, "5" or "5-7": the per-boot sample is the mean of
// the cell's values on those CPUs) and "threshold_pct". Every field is optional; null or a
// missing section gives the defaults. Throws isolab::SpecError with the JSON pointer of a bad or
// unknown field, e.g. "/compare/alpha: must be a number in (0, 1)". `pointer` is where the
// section sits in its document.
CompareSettings settings_from_json(const nlohmann::json& section,
                                   const std::string& pointer = "/compare");

// The compare.calibration object of a calibration document (calibrate_to_json output, schema
// "isolab-calibration" version 2 or 3), `file` as the spec names it: per metric its "jitter"
// and "jitter_runs" (version 3) and its "noise_floor_pct". Throws isolab::SpecError with the
// document's JSON pointer when it is not a calibration document.
nlohmann::json calibration_section(const nlohmann::json& calibration, const std::string& file);

// The settings as JSON (compare --format json's "settings"): every field of CompareSettings
// under its spec name, the primaries with their declarations, the calibration's facts.
nlohmann::json settings_to_json(const CompareSettings& s);

}  // namespace isolab
