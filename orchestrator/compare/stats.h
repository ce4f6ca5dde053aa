// Sample statistics for A/B comparisons of kernel measurements.
//
// The unit of replication is the cell (one boot of one variant): every function here takes one
// value per cell. Values must be finite; callers drop missing values (JSON null) before calling.
//
// Conventions used by every function below:
// - relative change of B against A is a fraction: (median_B - median_A) / median_A
//   (-0.0375 means "B is 3.75% below A"); reports multiply by 100.
// - randomness comes only from a std::mt19937_64 seeded by the caller, with our own unbiased
//   index draw (rejection sampling), so results are identical on every platform and run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace isolab {

// Per-metric descriptive statistics of one variant's cell values.
struct SampleStats {
  std::size_t n = 0;
  double median = 0;  // middle value; mean of the two middle values for even n
  double mean = 0;
  double stddev = 0;  // sample standard deviation (divisor n-1); NaN when n < 2
  double min = 0;
  double max = 0;
  double cv = 0;  // coefficient of variation stddev/|mean|; NaN when n < 2 or mean == 0
};

// Describes values. Empty input gives n = 0 and NaN for every other field. Throws isolab::Error
// if a value is NaN or infinite.
SampleStats describe(std::span<const double> values);

// Median as in describe(); NaN for an empty input.
double median_of(std::span<const double> values);

// Relative change (b - a) / a as a fraction. NaN when a == 0 or either value is not finite
// (the change of a metric whose baseline is 0, e.g. "0 vmstat_update events", is undefined).
double relative_change(double a, double b);

// Two-sided percentile bootstrap confidence interval of relative_change(median(A), median(B)).
// Each resample draws |a| cells from a and |b| cells from b with replacement (cells are resampled
// within their variant), computes the relative change of the medians, and the interval is the
// (1-level)/2 and (1+level)/2 nearest-rank quantiles of the resampled changes (Efron &
// Tibshirani, "An Introduction to the Bootstrap", 1993, ch. 13, percentile interval).
// Resamples whose A median is 0 are skipped; nullopt when a or b is empty, or when more than
// half of the resamples were skipped. Fractions, not percent.
struct ConfidenceInterval {
  double low = 0;
  double high = 0;
  double level = 0.95;
  std::size_t resamples_used = 0;
};
std::optional<ConfidenceInterval> bootstrap_relative_change_ci(std::span<const double> a,
                                                               std::span<const double> b,
                                                               double level = 0.95,
                                                               std::size_t resamples = 2000,
                                                               std::uint64_t seed = 1);

// Two-sided Mann-Whitney U test (Wilcoxon rank-sum) of A against B.
// u_a counts pairs (x in A, y in B) with x > y, ties counting 1/2.
// - Exact null distribution when there are no ties and n_a, n_b <= 25: the number of
//   arrangements with U = u is the coefficient of q^u in the Gaussian binomial coefficient
//   [n_a+n_b choose n_a]_q, i.e. the recurrence of Mann & Whitney (1947), "On a test of whether
//   one of two random variables is stochastically larger than the other", Ann. Math. Statist.
//   18(1), 50-60. p = min(1, 2 * min(P(U <= u), P(U >= u))).
// - Otherwise the normal approximation with midranks, tie-corrected variance
//   n_a n_b / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1))) and a 0.5 continuity correction
//   (the textbook formula, e.g. Hollander & Wolfe, "Nonparametric Statistical Methods", ch. 4);
//   Phi from Boost.Math normal distribution. All values tied gives p = 1.
// Empty a or b gives p = 1.
struct MannWhitneyResult {
  double u_a = 0;
  double p_two_sided = 1;
  bool exact = false;
  bool ties = false;
};
MannWhitneyResult mann_whitney_u(std::span<const double> a, std::span<const double> b);

// Smallest two-sided p-value the exact Mann-Whitney test can reach with sizes n_a and n_b
// (complete separation): min(1, 2 / C(n_a+n_b, n_a)). 3 vs 3 gives 0.1, so with 3 cells per
// variant no difference can be significant at alpha = 0.05.
double mann_whitney_min_p(std::size_t n_a, std::size_t n_b);

// Two-sided permutation test of |median(B) - median(A)|: the pooled cells are reassigned to the
// two groups (sizes kept) and p is the fraction of assignments whose statistic is >= the
// observed one (with a 1e-12 relative tolerance). All C(N, n_a) assignments are enumerated when
// there are at most `resamples` of them (exact p); otherwise `resamples` random assignments are
// drawn and p = (1 + hits) / (1 + resamples) (Phipson & Smyth 2010). Empty input gives 1.
double permutation_test_median(std::span<const double> a, std::span<const double> b,
                               std::size_t resamples = 2000, std::uint64_t seed = 1);

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
// at 5 boots a side (see tests/unit/compare_interval_test.cc).
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

// Midranks (1-based, ties get the mean of their ranks) of the values, in input order.
std::vector<double> midranks(std::span<const double> values);

// Two-sided percentile bootstrap confidence interval of mean(B) - mean(A), in the values' own
// unit (not a fraction): resampling within each variant as bootstrap_relative_change_ci does.
// nullopt when a or b is empty or resamples == 0. Throws isolab::Error when level is not in
// (0, 1).
std::optional<ConfidenceInterval> bootstrap_mean_difference_ci(std::span<const double> a,
                                                               std::span<const double> b,
                                                               double level = 0.95,
                                                               std::size_t resamples = 2000,
                                                               std::uint64_t seed = 1);

// Relative change of the means of a count metric, as a fraction: (mean_b - mean_a) / mean_a
// when mean_a > 0; 0 when both are 0; +infinity when mean_a is 0 and mean_b > 0 (an event
// that was absent in every A boot appeared: "new", never NaN). NaN only for a negative or
// non-finite input (counts and rates are >= 0).
double count_relative_change(double mean_a, double mean_b);

// Nearest-rank percentile of a plain sample (0 < pct <= 100): the value at 1-based rank
// ceil(pct/100 * n) of the sorted values. NaN for an empty sample.
double percentile_nearest_rank(std::span<const double> values, double pct);

// A latency histogram as cyclictest reports it: bucket (integer us) -> number of samples, plus
// the count of samples beyond the last bucket (overflows).
struct Histogram {
  std::map<std::int64_t, std::uint64_t> counts;
  std::uint64_t overflows = 0;
  std::uint64_t total() const;  // sum of counts + overflows
};

// Parses {"unit":"us","counts":{"17":3,...},"overflows":0}. Keys must be decimal integers
// >= 0, counts integers >= 0. Throws isolab::SpecError with pointer + "/counts/<key>" for a bad
// entry. A missing "overflows" is 0.
Histogram histogram_from_json(const nlohmann::json& j, const std::string& pointer);

// Adds every bucket and the overflow count of `from` into `into` (merging boots).
void merge_histogram(Histogram& into, const Histogram& from);

// Tail of a (merged) histogram by the nearest-rank definition: the P-th percentile is the
// smallest bucket b such that the number of samples in buckets <= b is at least
// ceil(P/100 * total), total including overflows. nullopt when the histogram is empty or that
// rank falls among the overflows (the value is beyond the histogram's range).
std::optional<std::int64_t> histogram_percentile(const Histogram& h, double pct);

struct HistogramTail {
  std::uint64_t samples = 0;
  std::uint64_t overflows = 0;
  std::optional<std::int64_t> p99;
  std::optional<std::int64_t> p99_9;
  std::optional<std::int64_t> max;  // highest non-empty bucket; nullopt when overflows > 0
};
HistogramTail histogram_tail(const Histogram& h);

}  // namespace isolab
