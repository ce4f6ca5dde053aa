// Exact permutation tests of two variants' per-boot values: of the difference of means, and
// stratified by measurement host (with the confidence interval that inverts it). The unit is
// one value per boot; compare/verdict.cc picks the test of each metric.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "stats/sample.h"

namespace isolab {

// Two-sided permutation test of the difference of means, for per-boot counts and event rates
// (values with many ties, often all 0 on one side).
//
// Statistic: |mean(B) - mean(A)|. With the pooled total S fixed it is a monotone function of
// sum(A), so the test is the classic two-sample permutation test on the sum (Fisher, "The
// Design of Experiments", 1935, sec. 21; Good, "Permutation, Parametric and Bootstrap Tests of
// Hypotheses", 3rd ed. 2005, ch. 3). Chosen over the midrank sum because the mean is the
// quantity the verdict reports and the absolute floor applies to (expected events per second),
// and because it keeps the magnitudes: a boot with 9 vmstat_update runs weighs more than one
// with 1, which ranks (a sea of tied zeros) throw away. Ties need no correction: reassignment
// is over boots, whatever their values.
// p = (number of reassignments of the pooled boots to groups of sizes |a|, |b| whose statistic
// is >= the observed one, with a tolerance of 1e-9 * (max |value| + observed)) / (number of
// reassignments). All C(N, |a|) reassignments are enumerated when there are at most
// `exact_limit` of them; otherwise `resamples` random reassignments (seeded mt19937_64, partial
// Fisher-Yates) give p = (1 + hits) / (1 + resamples) (Phipson & Smyth 2010, "Permutation
// P-values Should Never Be Zero", Stat. Appl. Genet. Mol. Biol. 9(1)).
// min_p is the p of the most extreme reassignment, exactly, from combinatorics: the largest
// statistic is reached only when A holds the |a| smallest or the |a| largest pooled values;
// each extreme is reached by C(t, k) index sets (t copies of the boundary value, k of them in
// A), so min_p = (sum over the extremes whose statistic is the largest of C(t, k)) / C(N, |a|).
// 5 vs 5 fully separated distinct values (or {1,1,1,1,1} vs {0,0,0,0,0}): 2/252 = 0.0079.
// {0,0,0,0,1} vs {0,0,0,0,0}: every reassignment has statistic 0.2, so p = min_p = 1.
// Empty a or b, or every pooled value equal: p = min_p = 1.
struct PermutationMeanResult {
  double p = 1;
  double min_p = 1;
  bool exact = true;                // enumerated, not sampled
  std::uint64_t reassignments = 0;  // enumerated, or random ones drawn
};
PermutationMeanResult permutation_test_mean(std::span<const double> a, std::span<const double> b,
                                            std::uint64_t exact_limit = 1000000,
                                            std::size_t resamples = 20000, std::uint64_t seed = 1);

// The cells of one stratum (one measurement host): its A values and its B values.
struct Stratum {
  std::vector<double> a;
  std::vector<double> b;
};

// What the stratified test computes per stratum before the reassignment: the raw values (for
// counts: a stratified permutation test of the difference of means) or the midranks of the
// stratum's pooled values (for timings: the van Elteren stratified rank-sum test).
enum class StratumScore { values, midranks };

// The alternative hypothesis of a test: B's values differ from A's (two_sided), are larger
// (greater) or are smaller (less) than A's.
enum class Alternative { two_sided, greater, less };

// Stratified permutation test: labels are reassigned only within each stratum (the host is a
// blocking factor, so a host effect cannot look like a variant effect), and the strata are
// combined in one statistic
//   T = | sum_h c_h (S_h - n_a,h * total_h / N_h) |   (two-sided; D = -sum_h c_h (...) is
//                                                      "B above A": greater tests D, less -D)
// where S_h is the sum of A's scores in stratum h, total_h the sum of its pooled scores, and
// c_h = 1 for values (T is then | sum_h w_h (mean_B,h - mean_A,h) | with w_h = n_a,h n_b,h / N_h,
// the weights of the Cochran-Mantel-Haenszel family), c_h = 1 / (N_h + 1) for midranks (van
// Elteren 1960, "On the combination of independent two-sample tests of Wilcoxon", Bull. Inst.
// Internat. Statist. 37, 351-361; the locally most powerful weights). Its null distribution is
// taken exactly, not from van Elteren's normal approximation: every combination of within-stratum
// reassignments (the product of C(N_h, n_a,h)) is enumerated when there are at most exact_limit
// of them, else `resamples` random within-stratum reassignments give p = (1 + hits) /
// (1 + resamples) as in permutation_test_mean. Strata missing a side carry no information and
// are skipped (strata_used counts the others). min_p is exact: the largest T is reached only
// when every stratum is at its own extreme in the same direction, so min_p is the sum over the
// directions reaching it of prod_h (multiplicity of that extreme) / C(N_h, n_a,h), with the tie
// multiplicities of permutation_test_mean (one-sided: only the extreme of its direction). One
// stratum with values gives exactly the p and min_p of permutation_test_mean; one stratum of
// midranks is the exact conditional Wilcoxon-Mann-Whitney test, ties included (the null
// distribution of the midrank sum given the observed ties; Lehmann, "Nonparametrics: Statistical
// Methods Based on Ranks", 1975, ch. 1 sec. 4). No usable stratum, or every stratum constant:
// p = min_p = 1. Values must be finite.
struct StratifiedResult {
  double p = 1;
  double min_p = 1;
  bool exact = true;
  std::uint64_t reassignments = 0;  // enumerated, or random ones drawn
  std::size_t strata_used = 0;
  double statistic = 0;  // the observed T (two-sided) or D, -D (one-sided)
};
StratifiedResult stratified_permutation_test(const std::vector<Stratum>& strata, StratumScore score,
                                             std::uint64_t exact_limit = 1000000,
                                             std::size_t resamples = 20000, std::uint64_t seed = 1,
                                             Alternative alternative = Alternative::two_sided);

// How a change of B against A is expressed: shift (B = A + delta, in the values' unit) or scale
// (B = A * (1 + delta), delta a fraction: the relative change).
enum class ChangeScale { shift, scale };

// Confidence interval of the change of B against A by inverting the two-sided stratified
// permutation test: the set of changes delta for which the test of (A moved by delta) against B
// is not rejected at 1 - level, i.e. p(delta) > 1 - level (Lehmann, "Nonparametrics", 1975,
// ch. 2 sec. 6; for the midrank score on one stratum this is the Moses / Hodges-Lehmann interval
// of the shift, on the scale of ratios when `scale` is ChangeScale::scale). Every stratum's A
// values are moved by the same delta. Its coverage is at least `level` for any sample size when
// B is A moved by delta (the test is exact), unlike the percentile bootstrap, which undercovers
// at 5 boots a side (see tests/unit/stats_interval_test.cc).
// The ends are found by bisection (to 1e-6 of the bracket) from the center (the
// Hodges-Lehmann estimate: median of the within-stratum pairwise changes, or the weighted mean
// difference when its p is larger) outwards to where every stratum's moved A lies beyond its B;
// p(delta) is a step function, so the interval is the connected set of accepted changes around
// the center. An end is -infinity / +infinity when even complete separation is not rejected
// (too few boots: 3 against 3 can never reach p < 0.05). p(delta) uses exact enumeration up to
// exact_limit reassignments, else the same `resamples` seeded random reassignments at every delta
// (a deterministic step function). resamples_used is the number of reassignments per test.
// nullopt when no stratum has both sides, when level is not in (0, 1), or, for scale, when a
// value is <= 0 (a ratio needs positive values).
std::optional<ConfidenceInterval> permutation_interval(
    const std::vector<Stratum>& strata, StratumScore score, ChangeScale scale, double level = 0.95,
    std::uint64_t exact_limit = 2000, std::size_t resamples = 2000, std::uint64_t seed = 1);

}  // namespace isolab
