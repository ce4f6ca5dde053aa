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
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace isolab {

// The value of a statistic the data cannot define (fewer values than it needs, a zero
// denominator): a quiet NaN, as every function below returns it.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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
  // The tail the field gates on beside the maximum (oslat and cyclictest budgets: p99.999 in
  // ns or us). Below 100 000 samples the nearest rank of p99.999 is the highest sample.
  std::optional<std::int64_t> p99_999;
  std::optional<std::int64_t> max;  // highest non-empty bucket; nullopt when overflows > 0
};
HistogramTail histogram_tail(const Histogram& h);

}  // namespace isolab
