#include "calibrate/calibrate_stats.h"

#include <algorithm>
#include <array>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "base/error.h"
#include "stats/rng.h"

namespace isolab {

namespace {

double sign(double d) { return d > 0 ? 1.0 : d < 0 ? -1.0 : 0.0; }

// What one stratum adds to the three statistics for one reordering of its values.
using Contribution = std::array<double, 3>;  // trend S_h, odd/even, halves

// A stratum prepared for reordering: its values, scores and the positions of each split's
// first side.
struct PreparedStratum {
  std::vector<double> values, scores;
  std::vector<bool> odd, half;
  double weight = 1, odd_mean_part = 0, half_mean_part = 0;
};

PreparedStratum prepare(const DriftStratum& s, MetricKind kind) {
  PreparedStratum p;
  const std::size_t n = s.values.size();
  p.values = s.values;
  p.scores = kind == MetricKind::timing ? midranks(s.values) : s.values;
  p.weight = kind == MetricKind::timing ? 1.0 / static_cast<double>(n + 1) : 1.0;
  const double total = std::accumulate(p.scores.begin(), p.scores.end(), 0.0);
  std::size_t n_odd = 0, n_half = 0;
  for (std::size_t i = 0; i < n; ++i) {
    p.odd.push_back(i % 2 == 0);  // boots 1, 3, 5, ... (1-based)
    p.half.push_back(i < s.first_half.size() && s.first_half[i]);
    n_odd += p.odd.back();
    n_half += p.half.back();
  }
  p.odd_mean_part = n ? static_cast<double>(n_odd) * total / static_cast<double>(n) : 0;
  p.half_mean_part = n ? static_cast<double>(n_half) * total / static_cast<double>(n) : 0;
  // A split with one side empty carries no information.
  if (n_odd == 0 || n_odd == n) p.odd.assign(n, false), p.odd_mean_part = 0;
  if (n_half == 0 || n_half == n) p.half.assign(n, false), p.half_mean_part = 0;
  return p;
}

// The contribution of the reordering `order` (position i holds value order[i]).
Contribution contribution(const PreparedStratum& p, const std::vector<std::size_t>& order) {
  Contribution c{0, 0, 0};
  const std::size_t n = order.size();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) c[0] += sign(p.values[order[j]] - p.values[order[i]]);
  for (std::size_t i = 0; i < n; ++i) {
    if (p.odd[i]) c[1] += p.scores[order[i]];
    if (p.half[i]) c[2] += p.scores[order[i]];
  }
  c[1] = p.weight * (c[1] - p.odd_mean_part);
  c[2] = p.weight * (c[2] - p.half_mean_part);
  return c;
}

std::vector<std::size_t> identity(std::size_t n) {
  std::vector<std::size_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Every reordering of one stratum.
std::vector<Contribution> all_contributions(const PreparedStratum& p) {
  std::vector<Contribution> out;
  std::vector<std::size_t> order = identity(p.values.size());
  do out.push_back(contribution(p, order));
  while (std::next_permutation(order.begin(), order.end()));
  return out;
}

Contribution absolute_sum(const std::vector<const Contribution*>& parts) {
  Contribution t{0, 0, 0};
  for (const Contribution* c : parts)
    for (int k = 0; k < 3; ++k) t[k] += (*c)[k];
  for (auto& x : t) x = std::fabs(x);
  return t;
}

// The statistics of every combination of the strata's reorderings (odometer order).
std::vector<Contribution> enumerate_reference(const std::vector<PreparedStratum>& strata) {
  std::vector<std::vector<Contribution>> lists;
  for (const auto& s : strata) lists.push_back(all_contributions(s));
  std::vector<std::size_t> at(lists.size(), 0);
  std::vector<Contribution> ref;
  std::vector<const Contribution*> parts(lists.size());
  for (;;) {
    for (std::size_t h = 0; h < lists.size(); ++h) parts[h] = &lists[h][at[h]];
    ref.push_back(absolute_sum(parts));
    std::size_t h = 0;
    while (h < lists.size() && ++at[h] == lists[h].size()) at[h++] = 0;
    if (h == lists.size()) return ref;
  }
}

// The observed statistics first, then `resamples` random within-stratum reorderings.
std::vector<Contribution> sample_reference(const std::vector<PreparedStratum>& strata,
                                           std::size_t resamples, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Contribution> ref;
  std::vector<Contribution> cs(strata.size());
  std::vector<const Contribution*> parts;
  for (const auto& c : cs) parts.push_back(&c);
  for (std::size_t r = 0; r <= resamples; ++r) {
    for (std::size_t h = 0; h < strata.size(); ++h) {
      std::vector<std::size_t> order = identity(strata[h].values.size());
      if (r > 0)
        for (std::size_t i = order.size(); i > 1; --i)
          std::swap(order[i - 1], order[uniform_index(rng, i)]);
      cs[h] = contribution(strata[h], order);
    }
    ref.push_back(absolute_sum(parts));
  }
  return ref;
}

// Share of `sorted` (ascending) at least t, with a relative tolerance.
double upper_share(const std::vector<double>& sorted, double t) {
  const double cut = t - 1e-9 * std::max(1.0, std::fabs(t));
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), cut);
  return static_cast<double>(sorted.end() - it) / static_cast<double>(sorted.size());
}

double log_factorial_product(const std::vector<PreparedStratum>& strata) {
  double s = 0;
  for (const auto& p : strata) s += std::lgamma(static_cast<double>(p.values.size()) + 1);
  return s;
}

}  // namespace

double mann_kendall_s(std::span<const double> values) {
  double s = 0;
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t j = i + 1; j < values.size(); ++j) s += sign(values[j] - values[i]);
  return s;
}

DriftTests drift_tests(const std::vector<DriftStratum>& strata, MetricKind kind,
                       std::uint64_t exact_limit, std::size_t resamples, std::uint64_t seed) {
  DriftTests r;
  std::vector<PreparedStratum> prepared;
  double pairs = 0;
  for (const auto& s : strata) {
    if (s.values.empty()) continue;
    prepared.push_back(prepare(s, kind));
    const double n = static_cast<double>(s.values.size());
    pairs += n * (n - 1) / 2;
    for (double v : s.values) r.testable = r.testable || v != s.values.front();
  }
  r.kendall_tau = kNaN;
  if (prepared.empty()) return r;
  r.exact = log_factorial_product(prepared) <= std::log(static_cast<double>(exact_limit)) + 1e-9;
  std::vector<Contribution> ref =
      r.exact ? enumerate_reference(prepared) : sample_reference(prepared, resamples, seed);
  Contribution observed{0, 0, 0};
  {
    std::vector<Contribution> obs;
    for (const auto& p : prepared) obs.push_back(contribution(p, identity(p.values.size())));
    std::vector<const Contribution*> parts;
    for (const auto& c : obs) parts.push_back(&c);
    observed = absolute_sum(parts);
    double s = 0;
    for (const auto& c : obs) s += c[0];
    r.trend.statistic = s;  // signed S; the test uses |S|
    if (pairs > 0) r.kendall_tau = s / pairs;
  }
  std::array<std::vector<double>, 3> sorted;
  for (int k = 0; k < 3; ++k) {
    for (const auto& c : ref) sorted[k].push_back(c[k]);
    std::sort(sorted[k].begin(), sorted[k].end());
  }
  r.trend.p = upper_share(sorted[0], observed[0]);
  r.odd_even = {observed[1], upper_share(sorted[1], observed[1])};
  r.halves = {observed[2], upper_share(sorted[2], observed[2])};
  const double min_obs = std::min({r.trend.p, r.odd_even.p, r.halves.p});
  std::size_t hits = 0;
  for (const auto& c : ref) {
    double m = 1;
    for (int k = 0; k < 3; ++k) m = std::min(m, upper_share(sorted[k], c[k]));
    hits += m <= min_obs * (1 + 1e-12);
  }
  r.combined_p = static_cast<double>(hits) / static_cast<double>(ref.size());
  r.permutations = ref.size();
  return r;
}

BinomialInterval clopper_pearson(std::size_t k, std::size_t n, double level) {
  if (n == 0 || k > n || !(level > 0 && level < 1))
    throw Error("clopper_pearson: need 0 <= k <= n, n > 0 and a level in (0, 1)");
  BinomialInterval b;
  b.level = level;
  const double kd = static_cast<double>(k), nd = static_cast<double>(n);
  b.low = k == 0 ? 0.0 : boost::math::ibeta_inv(kd, nd - kd + 1, (1 - level) / 2);
  b.high = k == n ? 1.0 : boost::math::ibeta_inv(kd + 1, nd - kd, (1 + level) / 2);
  return b;
}

WithinRunSpread within_run_spread(const std::vector<std::vector<double>>& strata) {
  WithinRunSpread w;
  double sum = 0, ss = 0;
  std::size_t groups = 0;
  for (const auto& s : strata) {
    if (s.empty()) continue;
    ++groups;
    const double m = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
    for (double v : s) ss += (v - m) * (v - m);
    sum += std::accumulate(s.begin(), s.end(), 0.0);
    w.n += s.size();
  }
  w.mean = w.n ? sum / static_cast<double>(w.n) : kNaN;
  w.within_sd = w.n > groups ? std::sqrt(ss / static_cast<double>(w.n - groups)) : kNaN;
  w.cv = w.mean != 0 ? w.within_sd / std::fabs(w.mean) : kNaN;
  w.dispersion = w.mean != 0 ? w.within_sd * w.within_sd / w.mean : kNaN;
  return w;
}

BetweenRunSpread between_run_spread(const std::vector<std::vector<double>>& runs) {
  BetweenRunSpread b;
  b.means_cv = b.within_sd = b.between_sd = b.icc = kNaN;
  double n = 0, total = 0, ssw = 0, n2 = 0;
  for (const auto& r : runs) {
    if (r.empty()) continue;
    const double m = std::accumulate(r.begin(), r.end(), 0.0) / static_cast<double>(r.size());
    b.run_means.push_back(m);
    for (double v : r) ssw += (v - m) * (v - m);
    n += static_cast<double>(r.size());
    n2 += static_cast<double>(r.size() * r.size());
    total += m * static_cast<double>(r.size());
  }
  const double k = static_cast<double>(b.run_means.size());
  if (k < 2) return b;
  const SampleStats ms = describe(b.run_means);
  if (ms.mean != 0) b.means_cv = ms.stddev / std::fabs(ms.mean);
  if (n - k < 1) return b;
  const double grand = total / n;
  double ssb = 0;
  std::size_t i = 0;
  for (const auto& r : runs)
    if (!r.empty()) {
      const double d = b.run_means[i++] - grand;
      ssb += static_cast<double>(r.size()) * d * d;
    }
  const double msb = ssb / (k - 1), msw = ssw / (n - k);
  const double n0 = (n - n2 / n) / (k - 1);
  const double between_var = std::max(0.0, (msb - msw) / n0);
  b.within_sd = std::sqrt(msw);
  b.between_sd = std::sqrt(between_var);
  b.icc = between_var + msw > 0 ? between_var / (between_var + msw) : kNaN;
  return b;
}

namespace {

// The index draws of the MDE simulation: A's then B's indices per replicate.
std::vector<std::vector<std::size_t>> mde_draws(std::size_t n, std::size_t per_side,
                                                std::size_t replicates, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::size_t>> draws;
  const bool without = 2 * per_side <= n;
  for (std::size_t r = 0; r < replicates; ++r) {
    std::vector<std::size_t> idx = identity(n);
    if (without) {
      for (std::size_t i = 0; i < 2 * per_side; ++i)
        std::swap(idx[i], idx[i + uniform_index(rng, n - i)]);
      idx.resize(2 * per_side);
    } else {
      idx.resize(2 * per_side);
      for (auto& x : idx) x = uniform_index(rng, n);
    }
    draws.push_back(std::move(idx));
  }
  return draws;
}

// Whether the rule calls B above A (verdict.h: significant and beyond the threshold).
bool detected(const std::vector<double>& a, const std::vector<double>& b, MetricKind kind,
              const DetectionRule& rule) {
  const bool timing = kind == MetricKind::timing;
  const double ca = timing ? median_of(a) : describe(a).mean;
  const double cb = timing ? median_of(b) : describe(b).mean;
  if (!(cb > ca)) return false;
  if (kind == MetricKind::count && !(cb - ca > rule.floor)) return false;
  if (ca != 0 && !(100 * (cb - ca) / std::fabs(ca) > rule.threshold_pct)) return false;
  return primary_rule_p(a, b, kind) < rule.level;
}

// Simulated power of the rule at a shift of `shift` (unit of the values).
double simulated_power(std::span<const double> values,
                       const std::vector<std::vector<std::size_t>>& draws, std::size_t per_side,
                       double shift, MetricKind kind, const DetectionRule& rule) {
  std::size_t hits = 0;
  std::vector<double> a(per_side), b(per_side);
  for (std::size_t r = 0; r < draws.size(); ++r) {
    for (std::size_t i = 0; i < per_side; ++i) {
      a[i] = values[draws[r][i]];
      b[i] = values[draws[r][per_side + i]] + shift;
    }
    hits += detected(a, b, kind, rule);
  }
  return static_cast<double>(hits) / static_cast<double>(draws.size());
}

}  // namespace

double primary_rule_p(std::span<const double> a, std::span<const double> b, MetricKind kind) {
  const Stratum s{{a.begin(), a.end()}, {b.begin(), b.end()}};
  return primary_one_sided_test({s}, primary_score(kind, false), true, 20000, 1000, 1).p;
}

MinimumDetectableEffect minimum_detectable_effect(std::span<const double> values,
                                                  std::size_t per_side, MetricKind kind,
                                                  const DetectionRule& rule, double power,
                                                  std::size_t replicates, std::uint64_t seed) {
  static constexpr double kGrid[] = {1,  2,  3,  5,   7,   10,  15,  20,
                                     30, 50, 70, 100, 150, 200, 300, 500};
  MinimumDetectableEffect m;
  m.per_side = per_side;
  m.replicates = replicates;
  m.delta_pct = m.delta = kNaN;
  if (values.empty() || per_side < 2 || replicates == 0) return m;
  const double scale = std::fabs(std::accumulate(values.begin(), values.end(), 0.0) /
                                 static_cast<double>(values.size()));
  if (!(scale > 0)) return m;
  const auto draws = mde_draws(values.size(), per_side, replicates, seed);
  auto power_at = [&](double pct) {
    return simulated_power(values, draws, per_side, pct / 100 * scale, kind, rule);
  };
  double lo = 0, hi = kNaN, hi_power = 0;
  for (double g : kGrid) {
    const double pw = power_at(g);
    if (pw >= power) {
      hi = g, hi_power = pw;
      break;
    }
    lo = g;
  }
  if (std::isnan(hi)) return m;
  for (int i = 0; i < 6; ++i) {
    const double mid = (lo + hi) / 2, pw = power_at(mid);
    if (pw >= power)
      hi = mid, hi_power = pw;
    else
      lo = mid;
  }
  m.delta_pct = hi;
  m.delta = hi / 100 * scale;
  m.power = hi_power;
  m.reached = true;
  return m;
}

}  // namespace isolab
