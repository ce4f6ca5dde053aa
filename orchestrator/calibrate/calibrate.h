// A/A calibration: how a metric behaves over boots of one kernel, and whether the host drifted.
//
// Input: one or more A/A runs (result.json documents): runs whose pooled variants are the same
// kernel (`isolab run --aa`), or one variant of a run. The variants pooled are strata: every
// test below reorders boots within a variant only, so a level difference between variants
// (a run that is not A/A) does not read as drift; such a run gets a warning.
//
// Boot order: the order the run's cells ran: by cells[].started_at when every cell has it
// (stable, so equal seconds keep the recorded order), else the order of cells[] (each cell is
// appended when it ends). A boot's position counts every cell of the run (warm-ups and failed
// cells too); the first half is the positions < cells / 2.
//
// Per metric and run (calibrate_stats.h for each formula and its source):
//   - drift: the seasonal Mann-Kendall trend test against boot order, the odd-against-even and
//     first-half-against-second-half splits, each with its exact permutation p, and their exact
//     min-p combination (drift_p); the run's testable metrics (not constant in every variant)
//     are Holm-corrected together, and a metric with Holm-adjusted drift_p < alpha is drifting;
//   - spread: CV (pooled within-variant sd / |mean|) and, for counts, the index of dispersion;
//   - MDE: the smallest shift (percent of the mean and in the metric's unit) compare's primary
//     rule detects with power 0.8 with the run's boots per side (boots per pooled variant): its
//     one-sided exact test at the step-down's level alpha / m (m the spec's primary metrics, at
//     least 1) and the metric's threshold and floor (calibrate_stats.h DetectionRule),
//     simulated from the run's pooled values: as they are in an A/A run (same build_key and
//     kernel_release), else each variant centred on the run's mean;
//   - span: max - min of one kernel's boots in the run (every pooled boot of an A/A run, else
//     the largest of the variants' spans); over runs, the jitter of an instruction metric is the
//     largest span, and jitter_runs the runs that had two or more boots of it: the range rule's
//     J and K (stats/range_rule.h), written for compare.calibration;
//   - noise_floor_pct: 95th percentile (nearest rank) of |relative change| between the halves
//     of equal splits of those pooled values (of medians for timings, of means for counts),
//     over the splits of every run: every C(n, n/2) split when n is even and there are at most
//     `splits`, else `splits` random ones. compare --noise-floor raises thresholds to it.
// Over runs: between_runs (two or more runs with the metric): the run means' CV and the
// one-way random-effects variance split (within sd, between sd, ICC); false alarms: each run's
// own A-vs-B comparison through compare_run_variants / compare_exit_status (variants pooled[0]
// against pooled[1]; a one-variant run's boots alternately as A and B in boot order), counted
// when it exits 1, with a 95% Clopper-Pearson interval of the rate (its upper end the bound
// on the exit status's false-alarm rate these runs support); exit status 3 (nothing could be
// detected) is counted apart. Count power: for each primary metric that declares "detect", the
// Poisson power calculation of compare/power.h at the runs' boots per side and the window of
// its step (the spec's duration_s).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/calibrate_stats.h"
#include "compare/verdict.h"
#include "spec/compare_settings.h"

namespace isolab {

// The power at which the minimum detectable effects are stated.
inline constexpr double kCalibrationPower = 0.8;

struct CalibrationOptions {
  std::size_t splits = 1000;  // noise floor splits (see above)
  std::uint64_t seed = 1;
  // Variants pooled in every run; empty = the run's variant_order (or every variant with cells
  // when there is none).
  std::vector<std::string> variants;
  std::size_t power_replicates = 200;  // MDE simulation replicates per shift
  std::uint64_t drift_exact_limit = 500000;
  std::size_t drift_resamples = 20000;
};

// One metric in one run. n == 0: the run has no value of the metric (the rest is default).
struct RunMetricCalibration {
  std::size_t n = 0;  // boots with a value, all pooled variants
  WithinRunSpread spread;
  DriftTests drift;
  double drift_p_holm = 1;  // Holm-adjusted drift.combined_p over the run's testable metrics
  bool drifting = false;    // drift_p_holm < alpha
  MinimumDetectableEffect mde;
  double noise_floor_pct = 0;  // this run's splits; NaN when there are none
  double span = 0;             // max - min of one kernel's boots (see the top of this file)
};

struct MetricCalibration {
  std::string name;
  std::string unit;
  MetricKind kind = MetricKind::timing;
  double threshold_pct = 0;                // compare's threshold for it (effective_threshold_pct)
  std::vector<RunMetricCalibration> runs;  // parallel to Calibration::runs
  std::optional<BetweenRunSpread> between_runs;
  double noise_floor_pct = 0;  // over every run's splits; NaN when there are none
  // Instruction metrics: the range rule's jitter (largest span of a run) and the runs it rests
  // on; NaN and 0 for other kinds or without a run of two boots.
  double jitter = 0;
  std::size_t jitter_runs = 0;
};

// One run: what was pooled, in which order, and its own A-vs-B comparison.
struct RunCalibration {
  std::string run_id;
  std::vector<std::string> variants;    // pooled (the strata)
  std::vector<std::string> boot_order;  // ids of the pooled variants' boots, in boot order
  std::string boot_order_source;        // "cells[].started_at" or "cells[] order"
  std::size_t testable_metrics = 0;
  std::vector<std::string> drifting_metrics;  // sorted by name
  int compare_exit_status = -1;               // 0 or 1; -1 when the comparison could not be made
  std::string compare_note;                   // what was compared ("A vs B"), or why not
  std::vector<std::string> warnings;
};

struct FalseAlarms {
  std::size_t alarms = 0;       // runs whose comparison exits 1
  std::size_t comparisons = 0;  // runs whose comparison could be made
  std::size_t unreachable = 0;  // of them, exit status 3 (no primary could reach alpha)
  BinomialInterval interval;    // Clopper-Pearson, 95%, of alarms / comparisons
};

struct Calibration {
  std::vector<RunCalibration> runs;
  std::vector<MetricCalibration> metrics;  // sorted by name
  CompareSettings settings;                // the first run's spec compare settings
  std::uint64_t seed = 0;
  std::size_t splits = 0;
  nlohmann::json comparison_key;  // of the runs (all equal); null when they have none
  std::optional<FalseAlarms> false_alarms;
  std::vector<std::string> power;  // compare/power.h count_power_line per detect primary
  std::vector<std::string> warnings;
};

// Runs the method above over runs (result.json documents). Throws isolab::Error as
// extract_variant does, when runs is empty or splits == 0, or when two runs' comparison keys
// differ (the differences as comparison_key_differences names them).
Calibration calibrate_runs(const std::vector<nlohmann::json>& runs, const CompareSettings& settings,
                           const CalibrationOptions& options = {});

}  // namespace isolab
