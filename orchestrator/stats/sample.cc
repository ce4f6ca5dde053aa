#include "stats/sample.h"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

#include "base/error.h"
#include "stats/rng.h"

namespace isolab {

namespace {

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
  std::vector<double> s(values.begin(), values.end());
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
  std::vector<double> v(values.begin(), values.end());
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
  std::vector<double> pooled(a.begin(), a.end());
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
  std::vector<double> s(values.begin(), values.end());
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

void merge_histogram(Histogram& into, const Histogram& from) {
  for (const auto& [bucket, count] : from.counts) into.counts[bucket] += count;
  into.overflows += from.overflows;
}

std::optional<std::int64_t> histogram_percentile(const Histogram& h, double pct) {
  if (!(pct > 0 && pct <= 100)) throw Error("percentile: pct must be in (0, 100]");
  const std::uint64_t total = h.total();
  if (total == 0) return std::nullopt;
  // ceil(pct/100 * total) in integer arithmetic where possible (pct given to 0.001 precision).
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
  t.p99_999 = histogram_percentile(h, 99.999);
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
