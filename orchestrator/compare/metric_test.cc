#include "compare/metric_test.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"

namespace isolab {

double MetricTest::p_value() const {
  if (stratified) return stratified->p;
  if (count) return count->permutation.p;
  return rank ? rank->p : mann_whitney.p_two_sided;
}

bool MetricTest::p_exact() const {
  if (stratified) return stratified->exact;
  if (count) return count->permutation.exact;
  return rank ? rank->exact : mann_whitney.exact;
}

double MetricTest::min_p() const {
  if (stratified) return stratified->min_p;
  if (count) return count->permutation.min_p;
  return rank ? rank->min_p : mann_whitney_min_p(a.n, b.n);
}

namespace {

constexpr std::uint64_t kRankSeed = 0x9e3779b97f4a7c15ULL;
constexpr std::uint64_t kStrataSeed = 0x5851f42d4c957f2dULL;
constexpr std::uint64_t kIntervalSeed = 0x2545f4914f6cdd1dULL;

CountTest test_count(std::span<const double> a, std::span<const double> b,
                     const CompareSettings& settings) {
  CountTest c;
  c.mean_a = describe(a).mean;
  c.mean_b = describe(b).mean;
  c.diff = c.mean_b - c.mean_a;
  c.relative_change = count_relative_change(c.mean_a, c.mean_b);
  auto zero = [](double x) { return x == 0; };
  c.all_zero = std::all_of(a.begin(), a.end(), zero) && std::all_of(b.begin(), b.end(), zero);
  c.permutation = permutation_test_mean(a, b, settings.count_exact_limit, settings.count_resamples,
                                        settings.seed ^ kRankSeed);
  return c;
}

bool finite_interval(const ConfidenceInterval& i) {
  return std::isfinite(i.low) && std::isfinite(i.high);
}

// The interval of the metric's change over the strata (see the top of verdict.h) at `level`.
void add_interval(MetricTest& t, const std::vector<Stratum>& strata, const CompareSettings& s,
                  double level) {
  if (t.a.n == 0 || t.b.n == 0) return;
  const bool relative = t.kind != MetricKind::count;
  const StratumScore score =
      t.kind == MetricKind::timing ? StratumScore::midranks : StratumScore::values;
  const double base = t.kind == MetricKind::timing ? t.a.median : t.a.mean;
  if (relative && !(std::isfinite(base) && base != 0)) return;
  auto interval = [&](ChangeScale k) {
    return permutation_interval(strata, score, k, level, s.interval_exact_limit,
                                s.interval_resamples, s.seed ^ kIntervalSeed);
  };
  if (relative) t.interval = interval(ChangeScale::scale);
  if (!t.interval) {
    t.interval = interval(ChangeScale::shift);
    if (t.interval && relative) {
      t.interval->low /= std::fabs(base);
      t.interval->high /= std::fabs(base);
    }
  }
  if (!t.interval || !finite_interval(*t.interval)) return;
  if (relative) t.ci = t.interval;
  if (t.count && t.kind == MetricKind::count) t.count->diff_ci = t.interval;
}

MetricTest test_core(std::span<const double> a, std::span<const double> b,
                     const CompareSettings& settings, bool with_ci, MetricKind kind) {
  MetricTest t;
  t.kind = kind;
  t.a = describe(a);
  t.b = describe(b);
  t.ci_requested = with_ci;
  if (kind != MetricKind::timing) {
    t.count = test_count(a, b, settings);
    // Counts and instruction counts are >= 0: from 0 in every A boot to more in B is +inf
    // ("new": the idle control CPU that executed no kernel instruction now does), not undefined.
    t.change = t.count->relative_change;
    return t;
  }
  t.change = relative_change(t.a.median, t.b.median);
  t.mann_whitney = mann_whitney_u(a, b);
  const std::vector<Stratum> one = {{{a.begin(), a.end()}, {b.begin(), b.end()}}};
  t.rank = stratified_permutation_test(one, StratumScore::midranks, settings.count_exact_limit,
                                       settings.count_resamples, settings.seed ^ kRankSeed);
  if (settings.permutation_resamples > 0 && !a.empty() && !b.empty()) {
    t.permutation_p =
        permutation_test_median(a, b, settings.permutation_resamples, settings.seed ^ kRankSeed);
  }
  return t;
}

}  // namespace

MetricTest test_metric(std::span<const double> a, std::span<const double> b,
                       const CompareSettings& settings, bool with_ci, MetricKind kind) {
  MetricTest t = test_core(a, b, settings, with_ci, kind);
  if (with_ci)
    add_interval(t, {{{a.begin(), a.end()}, {b.begin(), b.end()}}}, settings,
                 settings.confidence_level);
  return t;
}

MetricTest test_metric_stratified(const std::vector<Stratum>& strata,
                                  const CompareSettings& settings, bool with_ci, MetricKind kind) {
  std::vector<double> a, b;
  for (const auto& s : strata) {
    a.insert(a.end(), s.a.begin(), s.a.end());
    b.insert(b.end(), s.b.begin(), s.b.end());
  }
  MetricTest t = test_core(a, b, settings, with_ci, kind);
  t.stratified = stratified_permutation_test(
      strata, kind == MetricKind::timing ? StratumScore::midranks : StratumScore::values,
      settings.count_exact_limit, settings.count_resamples, settings.seed ^ kStrataSeed);
  if (with_ci) add_interval(t, strata, settings, settings.confidence_level);
  return t;
}

void set_interval(MetricTest& t, const std::vector<Stratum>& strata,
                  const CompareSettings& settings, double confidence) {
  t.interval.reset();
  t.ci.reset();
  if (t.count) t.count->diff_ci.reset();
  if (!(confidence > 0 && confidence < 1)) return;
  add_interval(t, strata, settings, confidence);
}

StratumScore primary_score(MetricKind kind, bool ranks) {
  return ranks || kind == MetricKind::timing ? StratumScore::midranks : StratumScore::values;
}

StratifiedResult primary_one_sided_test(const std::vector<Stratum>& strata, StratumScore score,
                                        bool greater, std::uint64_t exact_limit,
                                        std::size_t resamples, std::uint64_t seed) {
  return stratified_permutation_test(strata, score, exact_limit, resamples, seed,
                                     greater ? Alternative::greater : Alternative::less);
}

void add_one_sided_test(MetricTest& t, const std::vector<Stratum>& strata, bool higher_is_bad,
                        const CompareSettings& settings, bool ranks) {
  const StratumScore score = primary_score(t.kind, ranks);
  t.one_sided_ranks = score == StratumScore::midranks;
  if (ranks && t.kind == MetricKind::instructions)
    t.change = relative_change(t.a.median, t.b.median);
  auto test = [&](bool greater) {
    return primary_one_sided_test(strata, score, greater, settings.count_exact_limit,
                                  settings.count_resamples, settings.seed ^ kStrataSeed);
  };
  t.one_sided = test(higher_is_bad);
  t.good_sided = test(!higher_is_bad);
}

}  // namespace isolab
