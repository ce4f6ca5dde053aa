// Power of compare's own primary rule, before a run (docs/verdicts.md "Counts with power"):
// a Poisson model of a count primary's per-boot events in its window, tested by the primary
// rule's test (compare/metric_test.h primary_one_sided_test, on the values) at the step-down's
// level and held to the regressed rule's threshold and floor (compare/verdict_rules.h).
//
// Model: a boot of A counts N ~ Poisson(baseline x window x cpus) events, a boot of B
// Poisson((baseline +- change) x window x cpus); the per-boot value is N / (window x cpus) in
// 1/s (a rate per CPU; for a count per boot window is 1 and cpus 1). The test is exact: the
// one-sided p of the per-boot sums over every split of the 2n boots, counted by the number of
// subsets of each size and sum (a dynamic programme over the integer counts). Power is the share of
// seeded replicates whose p is below the level and whose change passes the threshold and the floor
// (compare/verdict_rules.h), estimated from `replicates` draws with common random numbers across
// changes (Poisson by inversion of one uniform per boot; the normal approximation above a mean of
// 500 events). The test of a replicate is exact (every split, or the subset-sum programme) while
// that costs at most 2e5 steps, else 2000 seeded random splits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "spec/primary.h"

namespace isolab {

// The one-sided exact p of compare's permutation test of means for integer-valued per-boot
// counts: P(sum of n_b values drawn from the pooled counts >= sum(b)) (greater) or <= (less).
// Equals primary_one_sided_test's p on one stratum of values, computed by the subset-sum
// programme instead of enumeration. Values must be non-negative integers (else isolab::Error).
double exact_count_p(std::span<const long> a, std::span<const long> b, bool greater);

// What the plan gives a count primary.
struct CountPowerPlan {
  double window_s = 1;       // the step's window per boot, s (1 for a count per boot)
  std::size_t cpus = 1;      // CPUs whose values are averaged into the boot's value
  std::size_t per_side = 5;  // boots per variant
  double level = 0.05;       // the step-down's per-hypothesis level (alpha / m)
  // The level at each number of boots a side (index: boots a side) where it depends on it, as
  // when the range rule's share of alpha shrinks with more boots; boots_needed reads it. Empty:
  // `level` at every number of boots.
  std::vector<double> level_by_per_side;
  double threshold_pct = 2.0;  // the regressed rule's threshold, percent of A's mean
  double floor = 0.1;          // the count floor, in the metric's unit
  double power = 0.8;          // the power asked
  std::size_t replicates = 400;
  std::uint64_t seed = 1;
};

// Power of the plan to see a change of `change` (metric's unit) from `baseline`: increase
// (B = baseline + change, the test "greater") or decrease (B = baseline - change, "less";
// power 0 when change > baseline).
double count_power(double baseline, double change, bool increase, const CountPowerPlan& plan);

// The smallest one-sided p of the exact permutation test with `per_side` boots a side and no
// ties, 1 / C(2 per_side, per_side) (0.0143 at 4, 0.00397 at 5); 1 when per_side is 0.
double best_one_sided_p(std::size_t per_side);

// The plan's answer for one count primary with a declared detect (primary.h DetectTarget).
struct CountPowerReport {
  double best_p = 1;       // 1 / C(2n, n): the smallest p n boots a side can give
  bool reachable = false;  // best_p < level
  double power_increase = 0, power_decrease = 0;  // at the declared change
  // The smallest change detected with the asked power (metric's unit), each direction; nullopt
  // when none up to 100 x the baseline (increase) or the baseline itself (decrease) is.
  std::optional<double> smallest_increase, smallest_decrease;
  // For the declared change, in the direction of a regression (increase when higher is bad):
  // the fewest boots per variant (up to 40; each at its level of level_by_per_side) at this
  // window, and the shortest window (up to
  // 3600 s, for a rate) at these boots, that reach the asked power; nullopt when none does.
  std::optional<std::size_t> boots_needed;
  std::optional<double> window_needed_s;
  // The same in the good direction (a benefit the series must show).
  std::optional<std::size_t> boots_needed_good;
  std::optional<double> window_needed_good_s;
};
CountPowerReport count_power_report(const DetectTarget& detect, bool higher_is_bad, bool rate_per_s,
                                    const CountPowerPlan& plan);

// One line of it for the dry run and calibrate:
//   "vmstat-idle.noise.vmstat_update_per_s[cpu6]: detect 0.2/s from 0.4/s in 5 s x 5 boots:
//    power 0.31 (increase), 0.12 (decrease); smallest detectable: +0.61/s, -0.4/s; 0.2/s needs
//    13 boots a side at 5 s, or 14 s at 5 boots"
std::string count_power_line(const std::string& row, const std::string& unit,
                             const DetectTarget& detect, const CountPowerPlan& plan,
                             const CountPowerReport& r);

}  // namespace isolab
