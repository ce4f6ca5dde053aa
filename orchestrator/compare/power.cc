#include "compare/power.h"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "base/error.h"
#include "base/number_text.h"
#include "compare/verdict_rules.h"
#include "stats/combinatorics.h"
#include "stats/rng.h"

namespace isolab {

namespace {

// Subsets of `pooled` of size k by their sum: ways[s] for k = the last row.
std::vector<double> subset_sums(std::span<const long> pooled, std::size_t k) {
  const long total = std::accumulate(pooled.begin(), pooled.end(), 0L);
  std::vector<std::vector<double>> ways(k + 1, std::vector<double>(total + 1, 0.0));
  ways[0][0] = 1;
  for (long x : pooled)
    for (std::size_t j = k; j >= 1; --j)
      for (long s = total; s >= x; --s) ways[j][s] += ways[j - 1][s - x];
  return ways[k];
}

long sum_of(std::span<const long> v) { return std::accumulate(v.begin(), v.end(), 0L); }

}  // namespace

double exact_count_p(std::span<const long> a, std::span<const long> b, bool greater) {
  if (a.empty() || b.empty()) return 1;
  std::vector<long> pooled(a.begin(), a.end());
  pooled.insert(pooled.end(), b.begin(), b.end());
  for (long x : pooled)
    if (x < 0) throw Error("exact_count_p: counts must be >= 0");
  const std::vector<double> ways = subset_sums(pooled, b.size());
  const long sb = sum_of(b);
  double hits = 0;
  for (std::size_t s = 0; s < ways.size(); ++s)
    if (greater ? static_cast<long>(s) >= sb : static_cast<long>(s) <= sb) hits += ways[s];
  return std::min(1.0, hits / std::exp(log_choose(pooled.size(), b.size())));
}

namespace {

// The number of size-k subsets of pooled[from..] whose sum with `sum` is >= (greater) or <=
// `target`: every subset, recursively.
double enumerate_splits(const std::vector<long>& pooled, std::size_t from, std::size_t k, long sum,
                        long target, bool greater) {
  if (k == 0) return (greater ? sum >= target : sum <= target) ? 1.0 : 0.0;
  double hits = 0;
  for (std::size_t i = from; i + k <= pooled.size(); ++i)
    hits += enumerate_splits(pooled, i + 1, k - 1, sum + pooled[i], target, greater);
  return hits;
}

// One-sided p of the split, exactly by whichever is cheaper of enumerating the C(N, n_b) splits
// and the subset-sum programme, when that costs at most 2e5 steps; else 2000 seeded random
// splits (p = (1 + hits) / 2001, Phipson & Smyth 2010).
double split_p(const std::vector<long>& a, const std::vector<long>& b, bool greater,
               std::mt19937_64& rng) {
  std::vector<long> pooled(a.begin(), a.end());
  pooled.insert(pooled.end(), b.begin(), b.end());
  const std::size_t n = pooled.size(), k = b.size();
  const double splits = std::exp(log_choose(n, k));
  const double cost_enum = splits * static_cast<double>(k);
  const double cost_dp = static_cast<double>(n * k) * static_cast<double>(sum_of(pooled) + 1);
  const long sb = sum_of(b);
  if (cost_enum <= 2e5 && cost_enum <= cost_dp)
    return std::min(1.0, enumerate_splits(pooled, 0, k, 0, sb, greater) / std::round(splits));
  if (cost_dp <= 2e5) return exact_count_p(a, b, greater);
  std::size_t hits = 0;
  const std::size_t draws = 2000;
  for (std::size_t d = 0; d < draws; ++d) {
    long s = 0;
    for (std::size_t i = 0; i < k; ++i) {
      std::swap(pooled[i], pooled[i + uniform_index(rng, n - i)]);
      s += pooled[i];
    }
    hits += greater ? s >= sb : s <= sb;
  }
  return (1.0 + static_cast<double>(hits)) / (1.0 + static_cast<double>(draws));
}

// Poisson(lambda) by inversion of the uniform u (common random numbers across lambdas); the
// normal approximation above lambda 500.
long poisson_at(double lambda, double u) {
  if (lambda <= 0) return 0;
  if (lambda > 500) {
    static const boost::math::normal_distribution<double> z;
    const double q = boost::math::quantile(z, std::clamp(u, 1e-12, 1 - 1e-12));
    return std::max(0L, std::lround(lambda + std::sqrt(lambda) * q));
  }
  double p = std::exp(-lambda), cdf = p;
  long k = 0;
  while (u > cdf && k < 100000) {
    ++k;
    p *= lambda / static_cast<double>(k);
    cdf += p;
  }
  return k;
}

// The regressed rule's threshold and floor on per-boot means (verdict.h beyond_threshold).
bool beyond(double mean_a, double mean_b, const CountPowerPlan& plan) {
  const double diff = std::fabs(mean_b - mean_a);
  if (!(diff > plan.floor)) return false;
  return mean_a == 0 || 100 * diff / mean_a > plan.threshold_pct;
}

}  // namespace

double count_power(double baseline, double change, bool increase, const CountPowerPlan& plan) {
  const double b_rate = increase ? baseline + change : baseline - change;
  if (b_rate < 0 || plan.per_side < 1 || plan.replicates == 0) return 0;
  const double exposure = plan.window_s * static_cast<double>(plan.cpus);
  std::mt19937_64 rng(plan.seed);
  std::uniform_real_distribution<double> uni(0, 1);
  std::vector<long> a(plan.per_side), b(plan.per_side);
  std::size_t hits = 0;
  for (std::size_t r = 0; r < plan.replicates; ++r) {
    for (auto& x : a) x = poisson_at(baseline * exposure, uni(rng));
    for (auto& x : b) x = poisson_at(b_rate * exposure, uni(rng));
    const double ma = static_cast<double>(sum_of(a)) / (exposure * plan.per_side);
    const double mb = static_cast<double>(sum_of(b)) / (exposure * plan.per_side);
    if ((increase ? mb <= ma : mb >= ma) || !beyond(ma, mb, plan)) continue;
    hits += split_p(a, b, increase, rng) < plan.level;
  }
  return static_cast<double>(hits) / static_cast<double>(plan.replicates);
}

namespace {

// The smallest change with the asked power: a geometric grid from the floor, then 6 bisections.
std::optional<double> smallest_change(double baseline, bool increase, const CountPowerPlan& p) {
  const double cap = increase ? 100 * std::max({baseline, p.floor, 1e-9}) : baseline;
  double lo = 0, hi = -1;
  double c = std::max(p.floor, 1e-6);
  while (c <= cap * (1 + 1e-12)) {
    if (count_power(baseline, c, increase, p) >= p.power) {
      hi = c;
      break;
    }
    lo = c;
    c *= 1.25;
  }
  if (hi < 0 && !increase && baseline > p.floor &&
      count_power(baseline, baseline, false, p) >= p.power)
    hi = baseline;
  if (hi < 0) return std::nullopt;
  for (int i = 0; i < 6; ++i) {
    const double mid = (lo + hi) / 2;
    (count_power(baseline, mid, increase, p) >= p.power ? hi : lo) = mid;
  }
  return hi;
}

// The fewest boots a side up to 40 with the asked power, each at its own level; a size whose best
// p cannot reach its level has power 0 and is not simulated.
std::optional<std::size_t> boots_needed(const DetectTarget& d, bool increase, CountPowerPlan p) {
  for (std::size_t n = 2; n <= 40; ++n) {
    p.per_side = n;
    if (n < p.level_by_per_side.size()) p.level = p.level_by_per_side[n];
    if (best_one_sided_p(n) >= p.level) continue;
    if (count_power(d.baseline, d.change, increase, p) >= p.power) return n;
  }
  return std::nullopt;
}

std::optional<double> window_needed(const DetectTarget& d, bool increase, CountPowerPlan p) {
  static constexpr double kWindows[] = {1,  2,   3,   5,   7,   10,  15,  20,   30,   45,   60,
                                        90, 120, 180, 300, 450, 600, 900, 1200, 1800, 2700, 3600};
  for (double w : kWindows) {
    p.window_s = w;
    if (count_power(d.baseline, d.change, increase, p) >= p.power) return w;
  }
  return std::nullopt;
}

}  // namespace

CountPowerReport count_power_report(const DetectTarget& detect, bool higher_is_bad, bool rate_per_s,
                                    const CountPowerPlan& plan) {
  CountPowerReport r;
  r.best_p = best_one_sided_p(plan.per_side);
  r.reachable = r.best_p < plan.level;
  r.power_increase = count_power(detect.baseline, detect.change, true, plan);
  r.power_decrease = count_power(detect.baseline, detect.change, false, plan);
  r.smallest_increase = smallest_change(detect.baseline, true, plan);
  r.smallest_decrease = smallest_change(detect.baseline, false, plan);
  r.boots_needed = boots_needed(detect, higher_is_bad, plan);
  r.boots_needed_good = boots_needed(detect, !higher_is_bad, plan);
  if (rate_per_s) {
    r.window_needed_s = window_needed(detect, higher_is_bad, plan);
    r.window_needed_good_s = window_needed(detect, !higher_is_bad, plan);
  }
  return r;
}

namespace {

std::string needs(std::optional<std::size_t> boots, std::optional<double> window,
                  const CountPowerPlan& p, bool rate) {
  std::string s = boots ? std::to_string(*boots) + " boots a side" : "more than 40 boots a side";
  if (rate) s += " at " + format_number("%.3g", p.window_s) + " s";
  if (rate)
    s += ", or " +
         (window ? format_number("%.3g", *window) + " s windows"
                 : std::string("no window up to 1 h")) +
         " at " + std::to_string(p.per_side) + " boots";
  return s;
}

}  // namespace

std::string count_power_line(const std::string& row, const std::string& unit, const DetectTarget& d,
                             const CountPowerPlan& p, const CountPowerReport& r) {
  const bool rate = unit == "1/s";
  auto amount = [&](double x) { return format_count_amount(x, unit); };
  std::string s = row + ": detect " + amount(d.change) + " from " + amount(d.baseline) + " in " +
                  (rate ? format_number("%.3g", p.window_s) + " s x " : std::string()) +
                  std::to_string(p.per_side) + " boots a side (" + std::to_string(p.cpus) + " CPU" +
                  (p.cpus == 1 ? "" : "s") + ", level " + format_number("%.3g", p.level) + "): ";
  if (!r.reachable)
    return s + "CANNOT REACH ALPHA: " + std::to_string(p.per_side) +
           " boots a side give at best p = " + format_number("%.3g", r.best_p) + "; it needs " +
           needs(r.boots_needed, std::nullopt, p, false);
  s += "power " + format_number("%.3g", r.power_increase) + " for +" + amount(d.change) + ", " +
       format_number("%.3g", r.power_decrease) + " for -" + amount(d.change) +
       "; smallest detectable (power " + format_number("%.3g", p.power) +
       "): " + (r.smallest_increase ? "+" + amount(*r.smallest_increase) : "none") + ", " +
       (r.smallest_decrease ? "-" + amount(*r.smallest_decrease) : "none");
  s += "; a regression of " + amount(d.change) + " needs " +
       needs(r.boots_needed, r.window_needed_s, p, rate) + "; a benefit of " + amount(d.change) +
       " needs " + needs(r.boots_needed_good, r.window_needed_good_s, p, rate);
  return s;
}

double best_one_sided_p(std::size_t per_side) {
  return per_side ? std::exp(-log_choose(2 * per_side, per_side)) : 1.0;
}

}  // namespace isolab
