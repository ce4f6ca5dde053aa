#include "stats/permutation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

#include "base/error.h"
#include "stats/rng.h"
#include "stats/sample.h"

namespace isolab {

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
  std::vector<double> pooled(a.begin(), a.end());
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

}  // namespace isolab
