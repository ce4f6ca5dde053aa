// Comparison settings and the per-metric verdict rules.
//
// Two kinds of metric (MetricKind): timings (latencies, cycles, bogo ops/s: continuous, and
// under TCG they vary 2-26% between boots of the same kernel on the 2-core host, case O7) and
// counts (per-CPU events on the isolated CPUs: vmstat_update runs, ticks, IPIs, IRQs, as
// events per second or events per boot: many ties, often 0 in every boot).
//
// Timing metrics. The verdict is decided by, in this order:
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
// The two-sided Mann-Whitney U test (stats.h) drives the verdict; the bootstrap CI describes
// the size of the change and gates step 6; the permutation test of the median difference is
// reported beside it for reference only.
// threshold = max(per-metric or default threshold, calibrated noise floor of the metric, and,
// when any contributing cell of either side ran under TCG, tcg_timing_threshold_pct): a timing
// change smaller than the boot-to-boot variation of the emulator is not evidence (case O7 of
// ../shared/cases/README.md: 2-26% on this machine). The reason then names the TCG threshold.
//
// Count metrics ("kind":"count", or older files with unit "count" or "1/s"). The per-boot
// sample is the cell's aggregate (the mean rate over the traced isolated CPUs, or the cell's
// count); the verdict is decided by, in this order:
//  1. n_A < min_samples or n_B < min_samples                       -> inconclusive
//  2. every value 0 in every boot of both variants                 -> no significant change
//     (the event never happened on the isolated CPUs: that is a result, not a missing one)
//  3. metric has no "better" direction                              -> inconclusive
//  4. the smallest p the permutation test can reach with these
//     pooled values is >= alpha (few boots, or ties: one boot with
//     one event against all zeros can never be significant)         -> inconclusive
//  5. permutation p < alpha AND |mean_B - mean_A| > count floor AND
//     (mean_A == 0 OR |relative change of means| > threshold)      -> improved / regressed,
//     by the sign of mean_B - mean_A and "better"
//  6. otherwise (the reason says which condition failed)           -> no significant change
// The test is the exact two-sided permutation test of |mean_B - mean_A| over boots
// (stats.h permutation_test_mean: exact with ties, enumerated up to 1e6 reassignments, else
// Monte Carlo with Phipson & Smyth's (1 + hits) / (1 + resamples)); Mann-Whitney's exact table
// assumes no ties and its normal approximation is poor for 5 boots of mostly zeros. The size of
// the change is the difference of per-boot means with a percentile bootstrap CI (Efron &
// Tibshirani 1993, ch. 13) and the relative change of means, +infinity ("new") from 0.
// The count floor (count_floor_for: 0.1 events/s per CPU for unit "1/s", 1 event for "count")
// keeps a significant but negligible difference (a few stray events over the whole run) from
// moving the verdict; the relative threshold is max(threshold_pct, noise floor) as for timings,
// without the TCG threshold: an event count does not scale with emulation speed the way a
// timing does. The CI-width rule 6 of timings does not apply: with an all-zero side the
// bootstrap CI of a difference of means is as wide as A's spread, which says nothing about
// whether a change of the threshold's size could be seen.
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

enum class MetricKind { timing, count };

// "timing" / "count".
const char* metric_kind_name(MetricKind k);

// The kind of a metric from its result.json fields: count when kind is "count", or when kind
// is empty (absent) and unit is "count" or "1/s"; timing otherwise.
MetricKind metric_kind_of(const std::string& kind, const std::string& unit);

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
  double max_ci_width_factor = 4.0;  // timing rule 6 above
  // Smallest threshold of a timing metric when a contributing cell ran under TCG, percent;
  // 0 disables. Default 25: boot-to-boot timing variation on this machine is 2-26% (case O7).
  double tcg_timing_threshold_pct = 25.0;
  // Absolute floor of |mean_B - mean_A| for count metrics, by unit (see count_floor_for).
  std::map<std::string, double> count_floors = {{"1/s", 0.1}, {"count", 1.0}};
  // Permutation test of count metrics: enumerate up to this many reassignments, else draw
  // count_resamples random ones.
  std::uint64_t count_exact_limit = 1000000;
  std::size_t count_resamples = 20000;
  // Combine cells of hosts whose fingerprints differ (compare --pool-hosts; not read from a
  // spec): see compare_runs.
  bool pool_hosts = false;

  // The threshold of rule 5 for a metric, percent: max(configured threshold, noise floor).
  double threshold_pct_for(const std::string& metric) const;
  // The count floor of a unit: count_floors[unit] when present; else the "1/s" entry for a
  // unit ending in "/s" and the "count" entry otherwise (0 when that entry is absent too).
  double count_floor_for(const std::string& unit) const;
};

// Reads the spec's optional "compare" object:
//   {"alpha":0.05,"min_samples":3,"threshold_pct":2.0,"thresholds_pct":{"latency.*":10},
//    "bootstrap_resamples":2000,"confidence_level":0.95,"permutation_resamples":2000,
//    "seed":1,"max_ci_width_factor":4,"tcg_timing_threshold_pct":25,
//    "count_floor":0.1 | {"1/s":0.1,"count":1}}
// count_floor as a number sets the floor of every count metric in its own unit; as an object it
// sets the floors of the units it names (the others keep their defaults).
// Every field is optional; null or a missing section gives the defaults. Throws
// isolab::SpecError with the JSON pointer of a bad or unknown field, e.g. "/compare/alpha:
// must be a number in (0, 1)". `pointer` is where the section sits in its document.
CompareSettings settings_from_json(const nlohmann::json& section,
                                   const std::string& pointer = "/compare");
nlohmann::json settings_to_json(const CompareSettings& s);

// The statistics of a count metric (means are per-boot means, in the metric's unit).
struct CountTest {
  double mean_a = 0;
  double mean_b = 0;
  double diff = 0;                            // mean_b - mean_a
  std::optional<ConfidenceInterval> diff_ci;  // of diff, same unit; nullopt when not computed
  double relative_change = 0;                 // count_relative_change(mean_a, mean_b)
  bool all_zero = false;                      // every value of both sides is 0
  PermutationMeanResult permutation;
};

// The statistics of one metric for samples a (variant A cells) and b (variant B cells).
struct MetricTest {
  MetricKind kind = MetricKind::timing;
  SampleStats a;
  SampleStats b;
  // timing: relative change of medians; count: relative change of means (+inf for 0 -> >0).
  // Fraction; NaN when undefined.
  double change = 0;
  std::optional<ConfidenceInterval> ci;  // timing: fraction; nullopt when undefined/not computed
  bool ci_requested = false;             // test_metric was asked for the CI
  MannWhitneyResult mann_whitney;        // timing only (left default for counts)
  std::optional<double> permutation_p;   // timing, informational; nullopt when resamples == 0
  std::optional<CountTest> count;        // count only
  // Cells from several hosts: the stratified test (stats.h stratified_permutation_test; values
  // for counts, van Elteren midranks for timings). When set it replaces Mann-Whitney's and the
  // pooled permutation test's p and smallest attainable p in the verdict rules; the sample
  // statistics, change and CI above stay those of the pooled cells.
  std::optional<StratifiedResult> stratified;

  // The p-value that drives the verdict: the stratified p when set, else the permutation p for
  // counts, Mann-Whitney's for timings.
  double p_value() const;
  bool p_exact() const;
};

// test_metric on the pooled cells of all strata, plus `stratified` (always set, also for one
// stratum) from stratified_permutation_test with the settings' count_exact_limit,
// count_resamples and seed.
MetricTest test_metric_stratified(const std::vector<Stratum>& strata,
                                  const CompareSettings& settings, bool with_ci, MetricKind kind);

// Computes MetricTest with the settings' bootstrap/permutation parameters and seed, by kind.
// When with_ci is false the bootstraps are skipped (calibration: the verdict needs no CI for
// counts and only rule 5 for timings).
MetricTest test_metric(std::span<const double> a, std::span<const double> b,
                       const CompareSettings& settings, bool with_ci = true,
                       MetricKind kind = MetricKind::timing);

struct VerdictResult {
  Verdict verdict = Verdict::inconclusive;
  std::string reason;  // one line saying which rule decided, with the numbers
  double threshold_pct = 0;
};

// Applies the rules at the top of this file for t.kind with the given threshold (percent) and,
// for counts, the absolute floor count_floor (metric's unit).
VerdictResult decide_verdict(const MetricTest& t, Better better, double threshold_pct,
                             const CompareSettings& settings, double count_floor = 0);

// An amount of a count metric for reports and reasons, 3 significant digits: "0.98/s" for unit
// "1/s", "9" for unit "count" (or none), "3 events" for another unit.
std::string format_count_amount(double value, const std::string& unit);

// What the verdict needs to know about a metric besides its samples.
struct MetricInfo {
  std::string name;
  std::string unit;
  MetricKind kind = MetricKind::timing;
  Better better = Better::none;
  bool tcg = false;  // a contributing cell of either side ran under TCG
};

// The threshold of a metric, percent: threshold_pct_for(name), raised to
// tcg_timing_threshold_pct for a timing metric with info.tcg. *tcg_applied (when given) says
// whether the TCG threshold is the one in force.
double effective_threshold_pct(const MetricInfo& info, const CompareSettings& settings,
                               bool* tcg_applied = nullptr);

// The verdict compare and calibrate both use: decide_verdict with effective_threshold_pct and
// count_floor_for(info.unit); when the TCG threshold is in force the reason says so.
VerdictResult decide_metric_verdict(const MetricTest& t, const MetricInfo& info,
                                    const CompareSettings& settings);

}  // namespace isolab
