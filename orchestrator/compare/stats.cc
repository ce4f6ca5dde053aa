#include "compare/stats.h"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

#include "base/error.h"
#include "base/json_text.h"
#include "compare/rng.h"

namespace isolab {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double sorted_median(const std::vector<double>& s) {
  if (s.empty()) return kNaN;
  const std::size_t n = s.size();
  return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0;
}

// Median of a vector, reordered in place (nth_element): the hot path of the bootstrap.
double median_inplace(std::vector<double>& v) {
  if (v.empty()) return kNaN;
  const std::size_t n = v.size();
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  const double upper = *mid;
  if (n % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), mid);
  return (lower + upper) / 2.0;
}

// Number of arrangements of n_a A's and n_b B's with U_A = u, for u = 0..n_a*n_b, as exact
// integers: coefficients of the Gaussian binomial [n_a+n_b choose n_a]_q built factor by factor
// as prod_{i=1..n_a} (1 - q^(n_b+i)) / (1 - q^i); every partial product is itself a Gaussian
// binomial, hence a polynomial with integer coefficients.
std::vector<std::int64_t> mann_whitney_counts(std::size_t n_a, std::size_t n_b) {
  const std::size_t umax = n_a * n_b;
  std::vector<std::int64_t> poly(umax + 1, 0);
  poly[0] = 1;
  for (std::size_t i = 1; i <= n_a; ++i) {
    const std::size_t up = n_b + i;
    for (std::size_t k = umax; k >= up; --k) {  // multiply by (1 - q^up)
      poly[k] -= poly[k - up];
      if (k == up) break;
    }
    for (std::size_t k = i; k <= umax; ++k) poly[k] += poly[k - i];  // divide by (1 - q^i)
  }
  return poly;
}

std::vector<double> to_vector(std::span<const double> s) { return {s.begin(), s.end()}; }

}  // namespace

SampleStats describe(std::span<const double> values) {
  SampleStats st;
  st.n = values.size();
  if (values.empty()) {
    st.median = st.mean = st.stddev = st.min = st.max = st.cv = kNaN;
    return st;
  }
  for (double v : values) {
    if (!std::isfinite(v)) throw Error("statistics: sample value is not a finite number");
  }
  std::vector<double> s = to_vector(values);
  std::sort(s.begin(), s.end());
  st.median = sorted_median(s);
  st.min = s.front();
  st.max = s.back();
  // Welford's update keeps the variance accurate for large values with small spread
  // (cycle counts around 1e5 differing in the last digits).
  double mean = 0, m2 = 0;
  std::size_t k = 0;
  for (double v : values) {
    ++k;
    const double d = v - mean;
    mean += d / static_cast<double>(k);
    m2 += d * (v - mean);
  }
  st.mean = mean;
  st.stddev = st.n >= 2 ? std::sqrt(m2 / static_cast<double>(st.n - 1)) : kNaN;
  st.cv = (st.n >= 2 && mean != 0) ? st.stddev / std::fabs(mean) : kNaN;
  return st;
}

double median_of(std::span<const double> values) {
  std::vector<double> v = to_vector(values);
  return median_inplace(v);
}

double relative_change(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b) || a == 0) return kNaN;
  return (b - a) / a;
}

namespace {

// The percentile bootstrap shared by the two intervals below: each resample draws |a| cells
// from a and |b| from b with replacement (a first, then b), statistic(ra, rb) gives one value,
// non-finite values are skipped; nullopt when more than half were skipped.
template <class Statistic>
std::optional<ConfidenceInterval> percentile_bootstrap(std::span<const double> a,
                                                       std::span<const double> b, double level,
                                                       std::size_t resamples, std::uint64_t seed,
                                                       Statistic statistic) {
  if (a.empty() || b.empty() || resamples == 0) return std::nullopt;
  if (!(level > 0 && level < 1)) throw Error("bootstrap: confidence level must be in (0, 1)");
  std::mt19937_64 rng(seed);
  std::vector<double> ra(a.size()), rb(b.size()), values;
  values.reserve(resamples);
  for (std::size_t r = 0; r < resamples; ++r) {
    for (auto& x : ra) x = a[uniform_index(rng, a.size())];
    for (auto& x : rb) x = b[uniform_index(rng, b.size())];
    const double v = statistic(ra, rb);
    if (std::isfinite(v)) values.push_back(v);
  }
  if (values.size() * 2 < resamples) return std::nullopt;
  ConfidenceInterval ci;
  ci.level = level;
  ci.resamples_used = values.size();
  ci.low = percentile_nearest_rank(values, 100.0 * (1 - level) / 2);
  ci.high = percentile_nearest_rank(values, 100.0 * (1 + level) / 2);
  return ci;
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

}  // namespace

std::optional<ConfidenceInterval> bootstrap_relative_change_ci(std::span<const double> a,
                                                               std::span<const double> b,
                                                               double level, std::size_t resamples,
                                                               std::uint64_t seed) {
  return percentile_bootstrap(a, b, level, resamples, seed,
                              [](std::vector<double>& ra, std::vector<double>& rb) {
                                return relative_change(median_inplace(ra), median_inplace(rb));
                              });
}

MannWhitneyResult mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  MannWhitneyResult r;
  const std::size_t na = a.size(), nb = b.size();
  if (na == 0 || nb == 0) return r;
  // Midranks of the pooled sample.
  struct Item {
    double v;
    bool from_a;
  };
  std::vector<Item> pooled;
  pooled.reserve(na + nb);
  for (double v : a) pooled.push_back({v, true});
  for (double v : b) pooled.push_back({v, false});
  std::sort(pooled.begin(), pooled.end(), [](const Item& x, const Item& y) { return x.v < y.v; });
  const std::size_t n = pooled.size();
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && pooled[j].v == pooled[i].v) ++j;
    const double t = static_cast<double>(j - i);
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].from_a) rank_sum_a += midrank;
    }
    if (j - i > 1) {
      r.ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double dna = static_cast<double>(na), dnb = static_cast<double>(nb);
  r.u_a = rank_sum_a - dna * (dna + 1) / 2.0;
  const double mean_u = dna * dnb / 2.0;

  if (!r.ties && na <= 25 && nb <= 25) {
    r.exact = true;
    const auto counts = mann_whitney_counts(na, nb);
    const auto u = static_cast<std::size_t>(std::llround(r.u_a));
    long double total = 0, le = 0, ge = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      const auto c = static_cast<long double>(counts[k]);
      total += c;
      if (k <= u) le += c;
      if (k >= u) ge += c;
    }
    const long double p = 2 * std::min(le, ge) / total;
    r.p_two_sided = static_cast<double>(std::min<long double>(1, p));
    return r;
  }

  const double dn = dna + dnb;
  const double var = dna * dnb / 12.0 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (!(var > 0)) {
    r.p_two_sided = 1;
    return r;
  }
  const double dev = std::fabs(r.u_a - mean_u);
  const double z = std::max(0.0, dev - 0.5) / std::sqrt(var);
  const boost::math::normal_distribution<double> normal(0, 1);
  r.p_two_sided = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(normal, z)));
  return r;
}

double mann_whitney_min_p(std::size_t n_a, std::size_t n_b) {
  if (n_a == 0 || n_b == 0) return 1;
  // C(n_a+n_b, n_a) in floating point; exact enough for the comparison with alpha.
  double c = 1;
  for (std::size_t i = 1; i <= n_a; ++i) {
    c = c * static_cast<double>(n_b + i) / static_cast<double>(i);
  }
  return std::min(1.0, 2.0 / c);
}

double permutation_test_median(std::span<const double> a, std::span<const double> b,
                               std::size_t resamples, std::uint64_t seed) {
  const std::size_t na = a.size(), nb = b.size(), n = na + nb;
  if (na == 0 || nb == 0) return 1;
  std::vector<double> pooled = to_vector(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  const double observed = std::fabs(median_of(b) - median_of(a));
  const double tol = 1e-12 * std::max(1.0, std::fabs(observed));
  std::vector<double> ga, gb;
  ga.reserve(na);
  gb.reserve(nb);

  // Number of assignments C(n, na), saturating.
  double assignments = 1;
  for (std::size_t i = 1; i <= na; ++i) {
    assignments = assignments * static_cast<double>(nb + i) / static_cast<double>(i);
  }
  if (n <= 62 && assignments <= static_cast<double>(resamples)) {
    // Exact: enumerate every na-subset of the pooled indices as a bitmask (Gosper's hack).
    std::uint64_t hits = 0, total = 0;
    std::uint64_t mask = (std::uint64_t{1} << na) - 1;
    const std::uint64_t limit = std::uint64_t{1} << n;
    while (mask < limit) {
      ga.clear();
      gb.clear();
      for (std::size_t i = 0; i < n; ++i) ((mask >> i) & 1 ? ga : gb).push_back(pooled[i]);
      const double s = std::fabs(median_inplace(gb) - median_inplace(ga));
      if (s >= observed - tol) ++hits;
      ++total;
      const std::uint64_t c = mask & (~mask + 1);
      const std::uint64_t r = mask + c;
      mask = (((r ^ mask) >> 2) / c) | r;
    }
    return static_cast<double>(hits) / static_cast<double>(total);
  }
  std::mt19937_64 rng(seed);
  std::uint64_t hits = 0;
  std::vector<double> work = pooled;
  for (std::size_t r = 0; r < resamples; ++r) {
    // Partial Fisher-Yates: the first na positions become group A.
    for (std::size_t i = 0; i < na; ++i) {
      std::swap(work[i], work[i + uniform_index(rng, n - i)]);
    }
    ga.assign(work.begin(), work.begin() + static_cast<std::ptrdiff_t>(na));
    gb.assign(work.begin() + static_cast<std::ptrdiff_t>(na), work.end());
    const double s = std::fabs(median_inplace(gb) - median_inplace(ga));
    if (s >= observed - tol) ++hits;
  }
  return static_cast<double>(hits + 1) / static_cast<double>(resamples + 1);
}

namespace {

// C(n, k) in floating point (exact for the sizes compare sees, C(60, 30) ~ 1.2e17 within 1 ulp
// of the true value; only compared with limits and used in ratios).
double binomial(std::size_t n, std::size_t k) {
  if (k > n) return 0;
  k = std::min(k, n - k);
  double c = 1;
  for (std::size_t i = 1; i <= k; ++i) {
    c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
  }
  return c;
}

// Calls visit(sum) for the sum of every k-subset of v (depth-first, running sum).
template <typename Visit>
void for_each_subset_sum(const std::vector<double>& v, std::size_t start, std::size_t k, double sum,
                         Visit& visit) {
  if (k == 0) {
    visit(sum);
    return;
  }
  for (std::size_t i = start; i + k <= v.size(); ++i) {
    for_each_subset_sum(v, i + 1, k - 1, sum + v[i], visit);
  }
}

// The permutation statistic |mean_B - mean_A| as a function of sum(A).
struct MeanDiffStatistic {
  double total;
  double na, nb;
  double operator()(double sum_a) const { return std::fabs((total - sum_a) / nb - sum_a / na); }
};

// Number of index sets that put exactly the multiset of the na smallest values of `sorted`
// in A: C(t, k) for the t copies of the boundary value of which k fall among the na smallest.
double extreme_multiplicity(const std::vector<double>& sorted, std::size_t na) {
  const double boundary = sorted[na - 1];
  const auto lo = std::lower_bound(sorted.begin(), sorted.end(), boundary);
  const auto hi = std::upper_bound(sorted.begin(), sorted.end(), boundary);
  const auto t = static_cast<std::size_t>(hi - lo);
  const std::size_t k = na - static_cast<std::size_t>(lo - sorted.begin());
  return binomial(t, k);
}

double sum_of(std::span<const double> v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

}  // namespace

PermutationMeanResult permutation_test_mean(std::span<const double> a, std::span<const double> b,
                                            std::uint64_t exact_limit, std::size_t resamples,
                                            std::uint64_t seed) {
  PermutationMeanResult r;
  const std::size_t na = a.size(), nb = b.size(), n = na + nb;
  if (na == 0 || nb == 0) return r;
  std::vector<double> pooled = to_vector(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  std::vector<double> sorted = pooled;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.front() == sorted.back()) return r;  // nothing to tell apart

  const MeanDiffStatistic stat{sum_of(pooled), static_cast<double>(na), static_cast<double>(nb)};
  const double observed = stat(sum_of(a));
  const double max_abs = std::max(std::fabs(sorted.front()), std::fabs(sorted.back()));
  const double tol = 1e-9 * (max_abs + observed);
  const double assignments = binomial(n, na);

  // Smallest attainable p: the two extremes (A = the na smallest, A = the na largest).
  const double low =
      stat(std::accumulate(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(na), 0.0));
  const double high =
      stat(std::accumulate(sorted.end() - static_cast<std::ptrdiff_t>(na), sorted.end(), 0.0));
  const double top = std::max(low, high);
  std::vector<double> negated(sorted.rbegin(), sorted.rend());
  for (auto& x : negated) x = -x;  // the na largest values are the na smallest of the negation
  double extremes = 0;
  if (low >= top - tol) extremes += extreme_multiplicity(sorted, na);
  if (high >= top - tol) extremes += extreme_multiplicity(negated, na);
  r.min_p = std::min(1.0, extremes / assignments);

  std::uint64_t hits = 0;
  if (assignments <= static_cast<double>(exact_limit)) {
    // Enumerate the smaller group; sum(A) follows from the pooled total.
    const bool enumerate_a = na <= nb;
    auto visit = [&](double s) {
      const double sum_a = enumerate_a ? s : stat.total - s;
      if (stat(sum_a) >= observed - tol) ++hits;
      ++r.reassignments;
    };
    for_each_subset_sum(pooled, 0, enumerate_a ? na : nb, 0.0, visit);
    r.p = static_cast<double>(hits) / static_cast<double>(r.reassignments);
    return r;
  }
  r.exact = false;
  std::mt19937_64 rng(seed);
  std::vector<double> work = pooled;
  for (std::size_t k = 0; k < resamples; ++k) {
    double sum_a = 0;
    for (std::size_t i = 0; i < na; ++i) {  // partial Fisher-Yates: first na positions are A
      std::swap(work[i], work[i + uniform_index(rng, n - i)]);
      sum_a += work[i];
    }
    if (stat(sum_a) >= observed - tol) ++hits;
  }
  r.reassignments = resamples;
  r.p = static_cast<double>(hits + 1) / static_cast<double>(resamples + 1);
  return r;
}

std::vector<double> midranks(std::span<const double> values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return values[x] < values[y]; });
  std::vector<double> r(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    const double mid = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = mid;
    i = j + 1;
  }
  return r;
}

namespace {

// One usable stratum, prepared: the pooled scores (A first), the weight c_h and E[S_h].
struct PreparedStratum {
  std::vector<double> scores;
  std::size_t na = 0;
  double weight = 1;
  double expected_sum_a = 0;
  double deviation(double sum_a) const { return weight * (sum_a - expected_sum_a); }
};

std::vector<PreparedStratum> prepare_strata(const std::vector<Stratum>& strata,
                                            StratumScore score) {
  std::vector<PreparedStratum> out;
  for (const auto& s : strata) {
    if (s.a.empty() || s.b.empty()) continue;
    PreparedStratum p;
    p.scores = s.a;
    p.scores.insert(p.scores.end(), s.b.begin(), s.b.end());
    const double n = static_cast<double>(p.scores.size());
    if (score == StratumScore::midranks) {
      p.scores = midranks(p.scores);
      p.weight = 1.0 / (n + 1.0);
    }
    p.na = s.a.size();
    p.expected_sum_a = static_cast<double>(p.na) * sum_of(p.scores) / n;
    out.push_back(std::move(p));
  }
  return out;
}

// The null distribution of one stratum's deviation c_h (S_h - E S_h) over its C(N_h, n_a)
// reassignments, as (deviation, number of reassignments) pairs.
using Distribution = std::vector<std::pair<double, std::uint64_t>>;

// Scores that are multiples of 1/2 (midranks always are; integer counts too), doubled, or
// nullopt: their subset sums can then be counted by size and sum instead of enumerated.
std::optional<std::vector<std::uint64_t>> doubled_integers(const std::vector<double>& v) {
  std::vector<std::uint64_t> out;
  for (double x : v) {
    const double d = 2 * x;
    if (!(d >= 0 && d <= 1e6) || d != std::floor(d)) return std::nullopt;
    out.push_back(static_cast<std::uint64_t>(d));
  }
  return out;
}

// ways[k][t]: the number of k-subsets whose doubled scores sum to t (the subset-sum recurrence
// item by item; exact in 64 bits up to C(N, k) < 2^64).
Distribution counted_distribution(const PreparedStratum& s, const std::vector<std::uint64_t>& w) {
  std::uint64_t total = 0;
  for (auto x : w) total += x;
  std::vector<std::vector<std::uint64_t>> ways(s.na + 1, std::vector<std::uint64_t>(total + 1));
  ways[0][0] = 1;
  for (std::size_t i = 0; i < w.size(); ++i)
    for (std::size_t k = std::min(i + 1, s.na); k >= 1; --k)
      for (std::uint64_t t = total; t >= w[i]; --t) {
        ways[k][t] += ways[k - 1][t - w[i]];
        if (t == 0) break;
      }
  Distribution d;
  for (std::uint64_t t = 0; t <= total; ++t)
    if (ways[s.na][t]) d.emplace_back(s.deviation(static_cast<double>(t) / 2), ways[s.na][t]);
  return d;
}

Distribution stratum_distribution(const PreparedStratum& s) {
  if (const auto w = doubled_integers(s.scores)) {
    double cells = 0;  // of the size-by-sum table, bounded to a few MB
    for (auto x : *w) cells += static_cast<double>(x);
    if ((cells + 1) * static_cast<double>(s.na + 1) <= 4e6) return counted_distribution(s, *w);
  }
  std::vector<double> sums;
  auto visit = [&](double sum_a) { sums.push_back(sum_a); };
  for_each_subset_sum(s.scores, 0, s.na, 0.0, visit);
  std::sort(sums.begin(), sums.end());
  Distribution d;
  for (double x : sums) {
    if (!d.empty() && d.back().first == s.deviation(x)) {
      ++d.back().second;
    } else {
      d.emplace_back(s.deviation(x), 1);
    }
  }
  return d;
}

// The test statistic from the sum of A's deviations: |sum| two-sided; D = -sum ("B above A")
// for greater, -D for less.
double oriented(double sum_dev, Alternative alt) {
  switch (alt) {
    case Alternative::greater:
      return -sum_dev;
    case Alternative::less:
      return sum_dev;
    case Alternative::two_sided:
      break;
  }
  return std::fabs(sum_dev);
}

// Counts the combinations of per-stratum deviations whose oriented sum >= threshold, each
// weighted by its number of reassignments.
std::uint64_t count_combinations(const std::vector<Distribution>& dists, std::size_t h,
                                 double partial, double threshold, Alternative alt) {
  if (h == dists.size()) return oriented(partial, alt) >= threshold ? 1 : 0;
  std::uint64_t hits = 0;
  for (const auto& [d, n] : dists[h])
    hits += n * count_combinations(dists, h + 1, partial + d, threshold, alt);
  return hits;
}

// The exact smallest p: the extremes of the statistic's direction(s) (see stats.h).
double extreme_p(double up, double down, double p_up, double p_down, double tol, Alternative alt) {
  if (alt == Alternative::greater) return std::min(1.0, p_down);
  if (alt == Alternative::less) return std::min(1.0, p_up);
  const double top = std::max(up, -down);
  return std::min(1.0, (up >= top - tol ? p_up : 0.0) + (-down >= top - tol ? p_down : 0.0));
}

}  // namespace

StratifiedResult stratified_permutation_test(const std::vector<Stratum>& strata, StratumScore score,
                                             std::uint64_t exact_limit, std::size_t resamples,
                                             std::uint64_t seed, Alternative alternative) {
  StratifiedResult r;
  const std::vector<PreparedStratum> ps = prepare_strata(strata, score);
  r.strata_used = ps.size();
  double observed = 0, up = 0, down = 0, scale = 0, combinations = 1, p_up = 1, p_down = 1;
  bool all_constant = true;
  for (const auto& s : ps) {
    observed += s.deviation(sum_of(std::span<const double>(s.scores).first(s.na)));
    std::vector<double> sorted = s.scores;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.front() != sorted.back()) all_constant = false;
    const auto na = static_cast<std::ptrdiff_t>(s.na);
    up += s.deviation(std::accumulate(sorted.end() - na, sorted.end(), 0.0));
    down += s.deviation(std::accumulate(sorted.begin(), sorted.begin() + na, 0.0));
    std::vector<double> negated(sorted.rbegin(), sorted.rend());
    for (auto& x : negated) x = -x;
    const double c = binomial(s.scores.size(), s.na);
    combinations *= c;
    p_up *= extreme_multiplicity(negated, s.na) / c;
    p_down *= extreme_multiplicity(sorted, s.na) / c;
    scale += s.weight * std::max(std::fabs(sorted.front()), std::fabs(sorted.back())) *
             static_cast<double>(s.scores.size());
  }
  if (ps.empty() || all_constant) return r;
  r.statistic = oriented(observed, alternative);
  const double tol = 1e-9 * (scale + std::fabs(r.statistic));
  r.min_p = extreme_p(up, down, p_up, p_down, tol, alternative);

  if (combinations <= static_cast<double>(exact_limit)) {
    std::vector<Distribution> dists;
    for (const auto& s : ps) dists.push_back(stratum_distribution(s));
    const std::uint64_t hits = count_combinations(dists, 0, 0.0, r.statistic - tol, alternative);
    r.reassignments = static_cast<std::uint64_t>(combinations);
    r.p = static_cast<double>(hits) / combinations;
    return r;
  }
  r.exact = false;
  std::mt19937_64 rng(seed);
  std::vector<std::vector<double>> work;
  for (const auto& s : ps) work.push_back(s.scores);
  std::uint64_t hits = 0;
  for (std::size_t k = 0; k < resamples; ++k) {
    double t = 0;
    for (std::size_t h = 0; h < ps.size(); ++h) {
      auto& w = work[h];
      double sum_a = 0;
      for (std::size_t i = 0; i < ps[h].na; ++i) {  // partial Fisher-Yates within the stratum
        std::swap(w[i], w[i + uniform_index(rng, w.size() - i)]);
        sum_a += w[i];
      }
      t += ps[h].deviation(sum_a);
    }
    if (oriented(t, alternative) >= r.statistic - tol) ++hits;
  }
  r.reassignments = resamples;
  r.p = static_cast<double>(hits + 1) / static_cast<double>(resamples + 1);
  return r;
}

namespace {

// The change that takes a to b: b - a (shift) or b / a - 1 (scale).
double change_of(double a, double b, ChangeScale k) {
  return k == ChangeScale::shift ? b - a : b / a - 1;
}

// The strata with every A value moved by delta: a + delta (shift) or a * (1 + delta) (scale).
std::vector<Stratum> moved_strata(const std::vector<Stratum>& strata, ChangeScale k, double delta) {
  std::vector<Stratum> out = strata;
  for (auto& s : out)
    for (auto& x : s.a) x = k == ChangeScale::shift ? x + delta : x * (1 + delta);
  return out;
}

// Hodges-Lehmann estimate: the median of the within-stratum pairwise changes.
double pairwise_median(const std::vector<Stratum>& strata, ChangeScale k) {
  std::vector<double> d;
  for (const auto& s : strata)
    for (double x : s.a)
      for (double y : s.b) d.push_back(change_of(x, y, k));
  return median_of(d);
}

// The change of the weighted means (weights n_a n_b / N of the stratified statistic).
double weighted_mean_change(const std::vector<Stratum>& strata, ChangeScale k) {
  double wa = 0, wb = 0, w = 0;
  for (const auto& s : strata) {
    const double na = static_cast<double>(s.a.size()), nb = static_cast<double>(s.b.size());
    const double weight = na * nb / (na + nb);
    wa += weight * sum_of(s.a) / na;
    wb += weight * sum_of(s.b) / nb;
    w += weight;
  }
  return k == ChangeScale::shift ? (wb - wa) / w : change_of(wa, wb, k);
}

// A change just beyond which every stratum's moved A lies strictly above (upper) or below its B.
double separation(const std::vector<Stratum>& strata, ChangeScale k, bool upper) {
  double far =
      upper ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  for (const auto& s : strata) {
    const auto [amin, amax] = std::minmax_element(s.a.begin(), s.a.end());
    const auto [bmin, bmax] = std::minmax_element(s.b.begin(), s.b.end());
    far = upper ? std::max(far, change_of(*amin, *bmax, k))
                : std::min(far, change_of(*amax, *bmin, k));
  }
  constexpr double kStep = 1e-6;
  if (k == ChangeScale::scale) return (1 + far) * (upper ? 1 + kStep : 1 - kStep) - 1;
  const double step = kStep * std::max(1.0, std::fabs(far));
  return upper ? far + step : far - step;
}

// Bisects between an accepted change and a rejected one; returns the last accepted change.
// Stops at 1e-6 of the starting bracket (the interval is reported to 3 significant digits).
template <class Accepted>
double bisect(double accepted, double rejected, Accepted ok) {
  const double tol = 1e-6 * std::fabs(rejected - accepted);
  for (int i = 0; i < 64 && std::fabs(rejected - accepted) > tol; ++i) {
    const double mid = (accepted + rejected) / 2;
    (ok(mid) ? accepted : rejected) = mid;
  }
  return accepted;
}

// A rejected change beyond the separation point: the separation itself, else ever farther
// (doubling the distance): the statistic of values is not monotone in the change just past
// separation (the mean of the smaller group can still move more), but the moved A is the only
// extreme far enough out. nullopt when none of 64 doublings is rejected (the test cannot reject
// any change: the interval is unbounded on that side).
template <class Accepted>
std::optional<double> rejected_far(const std::vector<Stratum>& strata, ChangeScale k, bool upper,
                                   Accepted ok) {
  const double sep = separation(strata, k, upper);
  double span = 0;
  for (const auto& s : strata)
    for (const auto* v : {&s.a, &s.b}) {
      const auto [lo, hi] = std::minmax_element(v->begin(), v->end());
      span = std::max(span, std::fabs(*hi - *lo) + std::fabs(*hi));
    }
  span = std::max(span, 1e-12);
  for (int i = 0; i < 64; ++i) {
    const double extra = i == 0 ? 0 : span * std::ldexp(1.0, i - 1);
    const double far = k == ChangeScale::scale
                           ? (upper ? (1 + sep) * (1 + extra) - 1 : (1 + sep) / (1 + extra) - 1)
                           : (upper ? sep + extra : sep - extra);
    if (!ok(far)) return far;
  }
  return std::nullopt;
}

bool usable_for(const std::vector<Stratum>& strata, ChangeScale k) {
  if (strata.empty()) return false;
  if (k == ChangeScale::shift) return true;
  for (const auto& s : strata)
    for (const auto* v : {&s.a, &s.b})
      if (std::any_of(v->begin(), v->end(), [](double x) { return !(x > 0); })) return false;
  return true;
}

}  // namespace

std::optional<ConfidenceInterval> permutation_interval(const std::vector<Stratum>& strata,
                                                       StratumScore score, ChangeScale scale,
                                                       double level, std::uint64_t exact_limit,
                                                       std::size_t resamples, std::uint64_t seed) {
  std::vector<Stratum> used;
  for (const auto& s : strata)
    if (!s.a.empty() && !s.b.empty()) used.push_back(s);
  if (!(level > 0 && level < 1) || !usable_for(used, scale)) return std::nullopt;
  auto test_at = [&](double delta) {
    return stratified_permutation_test(moved_strata(used, scale, delta), score, exact_limit,
                                       resamples, seed);
  };
  auto ok = [&](double delta) { return test_at(delta).p > 1 - level; };
  double center = pairwise_median(used, scale);
  const double other = weighted_mean_change(used, scale);
  if (test_at(other).p > test_at(center).p) center = other;
  ConfidenceInterval ci;
  ci.level = level;
  ci.resamples_used = test_at(center).reassignments;
  ci.low = ci.high = center;
  if (!ok(center)) return ci;  // no change is accepted: the interval is the estimate alone
  for (bool upper : {true, false}) {
    const std::optional<double> far = rejected_far(used, scale, upper, ok);
    const double inf =
        upper ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
    (upper ? ci.high : ci.low) = far ? bisect(center, *far, ok) : inf;
  }
  return ci;
}

std::optional<ConfidenceInterval> bootstrap_mean_difference_ci(std::span<const double> a,
                                                               std::span<const double> b,
                                                               double level, std::size_t resamples,
                                                               std::uint64_t seed) {
  return percentile_bootstrap(
      a, b, level, resamples, seed,
      [](std::vector<double>& ra, std::vector<double>& rb) { return mean_of(rb) - mean_of(ra); });
}

double count_relative_change(double mean_a, double mean_b) {
  if (!std::isfinite(mean_a) || !std::isfinite(mean_b) || mean_a < 0 || mean_b < 0) return kNaN;
  if (mean_a == 0) return mean_b == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return (mean_b - mean_a) / mean_a;
}

double percentile_nearest_rank(std::span<const double> values, double pct) {
  if (values.empty()) return kNaN;
  if (!(pct > 0 && pct <= 100)) throw Error("percentile: pct must be in (0, 100]");
  std::vector<double> s = to_vector(values);
  std::sort(s.begin(), s.end());
  auto rank = static_cast<std::size_t>(std::ceil(pct / 100.0 * static_cast<double>(s.size())));
  rank = std::clamp<std::size_t>(rank, 1, s.size());
  return s[rank - 1];
}

std::uint64_t Histogram::total() const {
  std::uint64_t t = overflows;
  for (const auto& [bucket, count] : counts) t += count;
  return t;
}

namespace {

std::uint64_t json_count(const nlohmann::json& v, const std::string& pointer) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return v.get<std::uint64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d >= 0 && d == std::floor(d) && d < 1.8e19) return static_cast<std::uint64_t>(d);
  }
  throw SpecError(pointer, "expected a non-negative integer count, got " + json_text(v));
}

}  // namespace

Histogram histogram_from_json(const nlohmann::json& j, const std::string& pointer) {
  if (!j.is_object()) throw SpecError(pointer, "histogram must be an object");
  Histogram h;
  auto it = j.find("counts");
  if (it == j.end() || !it->is_object()) {
    throw SpecError(pointer + "/counts", "histogram counts must be an object");
  }
  for (const auto& [key, value] : it->items()) {
    const std::string p = pointer + "/counts/" + json_pointer_token(key);
    if (key.empty() || key.size() > 18 ||
        !std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      throw SpecError(p, "histogram bucket must be a decimal integer (us)");
    }
    h.counts[std::stoll(key)] += json_count(value, p);
  }
  if (auto ov = j.find("overflows"); ov != j.end() && !ov->is_null()) {
    h.overflows = json_count(*ov, pointer + "/overflows");
  }
  return h;
}

void merge_histogram(Histogram& into, const Histogram& from) {
  for (const auto& [bucket, count] : from.counts) into.counts[bucket] += count;
  into.overflows += from.overflows;
}

std::optional<std::int64_t> histogram_percentile(const Histogram& h, double pct) {
  if (!(pct > 0 && pct <= 100)) throw Error("percentile: pct must be in (0, 100]");
  const std::uint64_t total = h.total();
  if (total == 0) return std::nullopt;
  // ceil(pct/100 * total) in integer arithmetic where possible (pct given to 0.1 precision).
  const long double exact = static_cast<long double>(pct) / 100.0L * total;
  auto rank = static_cast<std::uint64_t>(std::ceil(exact - 1e-9L));
  rank = std::clamp<std::uint64_t>(rank, 1, total);
  std::uint64_t cumulative = 0;
  for (const auto& [bucket, count] : h.counts) {
    cumulative += count;
    if (cumulative >= rank) return bucket;
  }
  return std::nullopt;  // rank lies among the overflows
}

HistogramTail histogram_tail(const Histogram& h) {
  HistogramTail t;
  t.samples = h.total();
  t.overflows = h.overflows;
  t.p99 = histogram_percentile(h, 99.0);
  t.p99_9 = histogram_percentile(h, 99.9);
  if (h.overflows == 0) {
    for (auto it = h.counts.rbegin(); it != h.counts.rend(); ++it) {
      if (it->second > 0) {
        t.max = it->first;
        break;
      }
    }
  }
  return t;
}

}  // namespace isolab
