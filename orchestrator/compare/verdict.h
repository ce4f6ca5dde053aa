// Comparison settings and the per-metric verdict rule.
//
// The verdict of a metric is decided by, in this order:
//  1. n_A < min_samples or n_B < min_samples                       -> inconclusive
//  2. relative change undefined (A median 0, or metric missing)     -> inconclusive
//  3. metric has no "better" direction ("lower"/"higher")           -> inconclusive
//  4. the exact Mann-Whitney test cannot reach p < alpha with these
//     sample sizes (e.g. 3 vs 3: smallest p is 0.1)                 -> inconclusive
//  5. Mann-Whitney p < alpha AND |change| > threshold               -> improved / regressed,
//     by the metric's "better" direction
//  6. bootstrap CI width > max_ci_width_factor * threshold (the run is too noisy to tell a
//     change of the threshold's size from no change)               -> inconclusive
//  7. otherwise                                                     -> no significant change
// The two-sided Mann-Whitney U test (stats.h) is the test that drives the verdict; the bootstrap
// CI describes the size of the change and gates step 6; the permutation test of the median
// difference is reported beside it for reference only.
// threshold = max(per-metric or default threshold, calibrated noise floor of the metric).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "compare/stats.h"

namespace isolab {

enum class Better { lower, higher, none };

// "lower" / "higher"; anything else (absent, "none") is Better::none.
Better better_from_string(const std::string& s);
const char* better_name(Better b);  // "lower", "higher", "none"

enum class Verdict { improved, regressed, no_change, inconclusive };

// "improved", "regressed", "no significant change", "inconclusive".
const char* verdict_name(Verdict v);

struct CompareSettings {
  double alpha = 0.05;                 // significance level of the two-sided Mann-Whitney test
  std::size_t min_samples = 3;         // cells per variant below which a metric is inconclusive
  double default_threshold_pct = 2.0;  // |relative change| a change must exceed, percent
  // Per-metric thresholds in percent. A key is an exact metric name ("latency.latency_max_us")
  // or a prefix ending in '*' ("latency.*"); exact beats prefix, longer prefix beats shorter.
  std::map<std::string, double> thresholds_pct;
  // Calibrated noise floors in percent by exact metric name (see calibrate.h).
  std::map<std::string, double> noise_floors_pct;
  std::size_t bootstrap_resamples = 2000;
  double confidence_level = 0.95;
  std::size_t permutation_resamples = 2000;  // 0 skips the (informational) permutation test
  std::uint64_t seed = 1;
  double max_ci_width_factor = 4.0;  // rule 6 above

  // The threshold of rule 5 for a metric, percent: max(configured threshold, noise floor).
  double threshold_pct_for(const std::string& metric) const;
};

// Reads the spec's optional "compare" object:
//   {"alpha":0.05,"min_samples":3,"threshold_pct":2.0,"thresholds_pct":{"latency.*":10},
//    "bootstrap_resamples":2000,"confidence_level":0.95,"permutation_resamples":2000,
//    "seed":1,"max_ci_width_factor":4}
// Every field is optional; null or a missing section gives the defaults. Throws
// isolab::SpecError with the JSON pointer of a bad or unknown field, e.g. "/compare/alpha:
// must be a number in (0, 1)". `pointer` is where the section sits in its document.
CompareSettings settings_from_json(const nlohmann::json& section,
                                   const std::string& pointer = "/compare");
nlohmann::json settings_to_json(const CompareSettings& s);

// The statistics of one metric for samples a (variant A cells) and b (variant B cells).
struct MetricTest {
  SampleStats a;
  SampleStats b;
  double change = 0;                     // relative change of medians, fraction; NaN when undefined
  std::optional<ConfidenceInterval> ci;  // fraction; nullopt when undefined or not computed
  bool ci_requested = false;             // test_metric was asked for the CI
  MannWhitneyResult mann_whitney;
  std::optional<double> permutation_p;  // nullopt when permutation_resamples == 0
};

// Computes MetricTest with the settings' bootstrap/permutation parameters and seed. When
// with_ci is false the bootstrap is skipped (used by calibration, where only rule 5 matters).
MetricTest test_metric(std::span<const double> a, std::span<const double> b,
                       const CompareSettings& settings, bool with_ci = true);

struct VerdictResult {
  Verdict verdict = Verdict::inconclusive;
  std::string reason;  // one line saying which rule decided, with the numbers
  double threshold_pct = 0;
};

// Applies the rule at the top of this file.
VerdictResult decide_verdict(const MetricTest& t, Better better, double threshold_pct,
                             const CompareSettings& settings);

}  // namespace isolab
