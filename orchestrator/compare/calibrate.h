// A/A calibration: how much a metric moves when nothing changed.
//
// Method. Input is a run whose cells all come from the same kernel (an A/A run: both variants
// built from the same source, or one variant whose cells are split). Per metric, the per-cell
// values of the chosen variants are pooled (n cells). For every equal split when n is even and
// there are at most `splits` of them (C(10,5) = 252 for 10 boots: then the rates are exact, and
// for an exact test the false-positive rate cannot exceed alpha), else for `splits` random
// equal splits (seeded std::mt19937_64; floor(n/2) cells to each half, the odd cell left out),
// we compute
// the relative change between the halves (of medians for timing metrics, of means for count
// metrics) and the verdict of decide_metric_verdict() -- the very test and rule compare applies
// to the metric's kind, with the TCG timing threshold when the cells ran under TCG and the
// count floor -- with the given settings (noise floors ignored, CI not needed). Then:
//   noise_floor_pct      = 95th percentile (nearest rank) of |relative change| * 100 over the
//                          splits whose change is finite (a count half that is 0 in every
//                          boot has none): a change smaller than this is within A/A noise 19
//                          times in 20. NaN (null in JSON) when n < 4 or no split had one.
//   false_positive_rate  = fraction of splits that decide_verdict calls improved or regressed
//                          (what the verdict rule would wrongly report on identical kernels).
//   p_significant_rate   = fraction of splits whose test (Mann-Whitney for timings, the
//                          permutation test of means for counts) gives p < alpha, before the
//                          threshold and floor: for judging the test itself.
// Note the halves have n/2 cells each, so the floor is that of a comparison with n/2 cells per
// variant; calibrate with twice the repetitions you will compare with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare/verdict.h"

namespace isolab {

struct CalibrationOptions {
  std::size_t splits = 1000;
  std::uint64_t seed = 1;
  // Variants whose cells are pooled; empty = every variant in the run's variant_order (or every
  // variant with cells when there is no variant_order).
  std::vector<std::string> variants;
};

struct MetricCalibration {
  std::string name;
  std::string unit;
  MetricKind kind = MetricKind::timing;
  std::size_t n = 0;           // pooled cells with a value
  double noise_floor_pct = 0;  // NaN when n < 4
  double false_positive_rate = 0;
  double p_significant_rate = 0;
  std::size_t splits = 0;  // splits evaluated
  bool exact = false;      // every equal split (see equal_splits in calibrate.cc), not a sample
};

struct Calibration {
  std::string run_id;
  std::vector<std::string> variants;  // pooled
  std::size_t splits = 0;
  std::uint64_t seed = 0;
  CompareSettings settings;
  std::vector<MetricCalibration> metrics;  // sorted by name
  // E.g. "variants have different kernel_release (...): this is not an A/A run".
  std::vector<std::string> warnings;
};

// Runs the method above. Throws isolab::Error as extract_variant does, or when splits == 0.
Calibration calibrate_from_run(const nlohmann::json& run, const CompareSettings& settings,
                               const CalibrationOptions& options = {});

// {"schema":"isolab-calibration","version":1,"run_id","variants","splits","seed","method",
//  "warnings":[...],"metrics":{"<name>":{"unit","kind","n","noise_floor_pct","splits","exact",
//  "false_positive_rate","p_significant_rate"}}}; NaN is null.
nlohmann::json calibration_to_json(const Calibration& c);

// Table: metric, unit, n, noise floor %, false-positive rate, p<alpha rate.
std::string render_calibration_text(const Calibration& c);

// Reads the noise floors (percent by metric name) from calibration_to_json() output, as
// `compare --noise-floor FILE` takes it. null floors are skipped. Throws isolab::SpecError
// with the JSON pointer for a document that is not a calibration or a floor that is not a
// number >= 0.
std::map<std::string, double> noise_floors_from_json(const nlohmann::json& j);

}  // namespace isolab
