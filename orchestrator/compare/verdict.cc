#include "compare/verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "base/error.h"
#include "base/json_text.h"
#include "cmdline/cpulist.h"
#include "spec/primary.h"

namespace isolab {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

Better better_from_string(const std::string& s) {
  if (s == "lower") return Better::lower;
  if (s == "higher") return Better::higher;
  return Better::none;
}

const char* better_name(Better b) {
  switch (b) {
    case Better::lower:
      return "lower";
    case Better::higher:
      return "higher";
    case Better::none:
      break;
  }
  return "none";
}

const char* metric_kind_name(MetricKind k) {
  switch (k) {
    case MetricKind::count:
      return "count";
    case MetricKind::instructions:
      return "instructions";
    case MetricKind::timing:
      break;
  }
  return "timing";
}

MetricKind metric_kind_of(const std::string& kind, const std::string& unit) {
  if (kind == "count") return MetricKind::count;
  if (kind == "instructions") return MetricKind::instructions;
  if (kind.empty() && (unit == "count" || unit == "1/s")) return MetricKind::count;
  return MetricKind::timing;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::improved:
      return "improved";
    case Verdict::regressed:
      return "regressed";
    case Verdict::no_change:
      return "no significant change";
    case Verdict::inconclusive:
      break;
  }
  return "inconclusive";
}

namespace {

nlohmann::json primary_json(const PrimaryMetric& m) {
  CpuSet set(m.cpus.empty() ? 0 : m.cpus.back() + 1);
  for (unsigned c : m.cpus) set.set(c);
  return {{"metric", m.metric},
          {"cpus", set.to_list()},
          {"row", m.row_name()},
          {"bad", m.higher_is_bad ? "higher" : "lower"},
          {"threshold_pct", m.threshold_pct ? nlohmann::json(*m.threshold_pct) : nlohmann::json()},
          {"source", m.source}};
}

}  // namespace

nlohmann::json settings_to_json(const CompareSettings& s) {
  nlohmann::json primary = nlohmann::json::array();
  for (const auto& m : s.primary) primary.push_back(primary_json(m));
  return {{"alpha", s.alpha},
          {"min_samples", s.min_samples},
          {"threshold_pct", s.default_threshold_pct},
          {"thresholds_pct", s.thresholds_pct},
          {"noise_floors_pct", s.noise_floors_pct},
          {"confidence_level", s.confidence_level},
          {"permutation_resamples", s.permutation_resamples},
          {"seed", s.seed},
          {"tcg_timing_threshold_pct", s.tcg_timing_threshold_pct},
          {"count_floor", s.count_floors},
          {"instructions_threshold_pct", s.instructions_threshold_pct},
          {"instructions_cv_factor", s.instructions_cv_factor},
          {"primary", primary},
          {"primary_origin", s.primary_origin},
          {"relabel_exact_limit", s.relabel_exact_limit},
          {"relabel_resamples", s.relabel_resamples},
          {"test", "exact conditional midrank permutation test (timings)"},
          {"count_test",
           "permutation test of the difference of per-boot means (counts, "
           "instructions)"},
          {"primary_test",
           "one-sided in the bad direction, Holm's step-down over the primary "
           "metrics"},
          {"secondary_test",
           "two-sided, Westfall-Young min-P over joint relabellings of the "
           "boots"},
          {"interval", "inverted permutation test"}};
}

// ---- tests ----

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

// The interval of the metric's change over the strata (see the top of verdict.h).
void add_interval(MetricTest& t, const std::vector<Stratum>& strata, const CompareSettings& s) {
  if (t.a.n == 0 || t.b.n == 0) return;
  const bool relative = t.kind != MetricKind::count;
  const StratumScore score =
      t.kind == MetricKind::timing ? StratumScore::midranks : StratumScore::values;
  const double base = t.kind == MetricKind::timing ? t.a.median : t.a.mean;
  if (relative && !(std::isfinite(base) && base != 0)) return;
  auto interval = [&](ChangeScale k) {
    return permutation_interval(strata, score, k, s.confidence_level, s.interval_exact_limit,
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
  if (with_ci) add_interval(t, {{{a.begin(), a.end()}, {b.begin(), b.end()}}}, settings);
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
  if (with_ci) add_interval(t, strata, settings);
  return t;
}

void add_one_sided_test(MetricTest& t, const std::vector<Stratum>& strata, bool higher_is_bad,
                        const CompareSettings& settings) {
  t.one_sided = stratified_permutation_test(
      strata, t.kind == MetricKind::timing ? StratumScore::midranks : StratumScore::values,
      settings.count_exact_limit, settings.count_resamples, settings.seed ^ kStrataSeed,
      higher_is_bad ? Alternative::greater : Alternative::less);
}

// ---- thresholds ----

double effective_threshold_pct(const MetricInfo& info, const CompareSettings& settings,
                               bool* tcg_applied) {
  if (tcg_applied) *tcg_applied = false;
  if (info.kind == MetricKind::instructions)
    return std::max(settings.own_threshold_pct(info.name).value_or(0.0),
                    settings.instructions_threshold_pct);
  double t = settings.threshold_pct_for(info.name);
  const bool tcg =
      info.kind == MetricKind::timing && info.tcg && settings.tcg_timing_threshold_pct > t;
  if (tcg) t = settings.tcg_timing_threshold_pct;
  if (tcg_applied) *tcg_applied = tcg;
  return t;
}

double metric_threshold_pct(const MetricTest& t, const MetricInfo& info,
                            const CompareSettings& settings, std::string* why) {
  bool tcg = false;
  double threshold = effective_threshold_pct(info, settings, &tcg);
  std::string note;
  if (tcg) {
    note = "threshold " + fmt("%.3g", threshold) +
           "% is the TCG timing threshold (compare.tcg_timing_threshold_pct): cells ran under TCG, "
           "where timings of one kernel varied 2-26% between boots";
  }
  if (info.kind == MetricKind::instructions) {
    const double cv_pct = (t.a.n >= 2 && std::isfinite(t.a.cv)) ? 100.0 * t.a.cv : 0.0;
    const double by_cv = settings.instructions_cv_factor * cv_pct;
    if (by_cv > threshold) {
      threshold = by_cv;
      note = "threshold " + fmt("%.3g", threshold) + "% is " +
             fmt("%.3g", settings.instructions_cv_factor) + " x the CV " + fmt("%.3g", cv_pct) +
             "% of A's boots (compare.instructions_cv_factor)";
    } else if (threshold == settings.instructions_threshold_pct) {
      note = "threshold " + fmt("%.3g", threshold) +
             "% is the instruction threshold (compare.instructions_threshold_pct)";
    }
  }
  if (why) *why = note;
  return threshold;
}

// ---- verdict rules ----

std::string format_count_amount(double v, const std::string& unit) {
  std::string x = fmt("%.3g", v);
  if (unit == "1/s") return x + "/s";
  if (unit == "count" || unit.empty()) return x;
  return x + " " + unit;
}

namespace {

// Everything a rule looks at.
struct Judge {
  const MetricTest& t;
  const CompareSettings& s;
  Better better = Better::none;  // the good direction
  bool primary = false;
  double threshold_pct = 0;
  double floor = 0;  // counts: the absolute floor, metric's unit
  std::string unit;
  double p = 1;  // the p that decides
  double min_p = 1;
};

bool is_relative(const Judge& j) { return j.t.kind != MetricKind::count; }

// The change in the verdict's scale: fraction (timing, instructions) or B - A (counts).
double change_of(const Judge& j) { return is_relative(j) ? j.t.change : j.t.count->diff; }

double margin_of(const Judge& j) {
  if (is_relative(j)) return j.threshold_pct / 100.0;
  return std::max(j.floor, j.threshold_pct / 100.0 * std::fabs(j.t.count->mean_a));
}

// A change (verdict scale) as text: "+3.75%" or "+0.98/s".
std::string amount(const Judge& j, double x) {
  if (std::isinf(x)) return x > 0 ? "+inf" : "-inf";
  if (is_relative(j)) return fmt("%+.2f", 100 * x) + "%";
  return (x > 0 ? "+" : "") + format_count_amount(x, j.unit);
}

std::string n_label(const MetricTest& t) {
  std::string s = "n=" + std::to_string(t.a.n) + "+" + std::to_string(t.b.n);
  if (t.stratified) s += " in " + std::to_string(t.stratified->strata_used) + " host(s)";
  return s;
}

std::string test_name(const Judge& j) {
  const bool values = j.t.kind != MetricKind::timing;
  std::string name = j.t.stratified ? (values ? "stratified permutation" : "stratified van Elteren")
                                    : (values ? "permutation" : "midrank permutation");
  return j.primary ? "one-sided " + name : name;
}

std::string p_label(const Judge& j) {
  if (j.t.family_p) return j.primary ? "Holm p=" : "family-wise p=";
  return j.primary ? "one-sided p=" : "p=";
}

std::string p_clause(const Judge& j) { return p_label(j) + fmt("%.3g", j.p); }

// Whether |change| is beyond the threshold (and, for counts, the floor), with the clause.
bool beyond_threshold(const Judge& j, std::string* clause) {
  if (is_relative(j)) {
    const double c = 100.0 * j.t.change;
    const bool large = std::fabs(c) > j.threshold_pct;
    *clause = "|" + fmt("%.2f", c) + "%| " + (large ? ">" : "<=") + " threshold " +
              fmt("%.2f", j.threshold_pct) + "%";
    return large;
  }
  const CountTest& c = *j.t.count;
  const bool above_floor = std::fabs(c.diff) > j.floor;
  const std::string diff_text = "|B-A| " + format_count_amount(std::fabs(c.diff), j.unit);
  const std::string floor_text = "floor " + format_count_amount(j.floor, j.unit);
  if (!above_floor) {
    *clause = diff_text + " <= " + floor_text;
    return false;
  }
  const bool from_zero = c.mean_a == 0;
  const double rel = 100.0 * c.relative_change;
  const bool large = from_zero || std::fabs(rel) > j.threshold_pct;
  *clause = diff_text + " > " + floor_text + ", " +
            (from_zero ? std::string("A was 0 in every boot")
                       : "|" + fmt("%.2f", rel) + "%| " + (large ? ">" : "<=") + " threshold " +
                             fmt("%.2f", j.threshold_pct) + "%");
  return large;
}

VerdictResult result(const Judge& j, Verdict v, const std::string& reason) {
  VerdictResult r;
  r.verdict = v;
  r.reason = reason;
  r.threshold_pct = j.threshold_pct;
  r.margin_relative = is_relative(j);
  r.margin = (r.margin_relative ? 100.0 : 1.0) * margin_of(j);
  if (j.t.interval) {
    const double scale = r.margin_relative ? 100.0 : 1.0;
    r.cannot_exclude =
        scale * std::max(std::fabs(j.t.interval->low), std::fabs(j.t.interval->high));
  }
  return r;
}

using Rule = std::optional<VerdictResult> (*)(const Judge&);

std::optional<VerdictResult> too_few(const Judge& j) {
  if (j.t.a.n >= j.s.min_samples && j.t.b.n >= j.s.min_samples) return std::nullopt;
  return result(
      j, Verdict::inconclusive,
      n_label(j.t) + " below min_samples " + std::to_string(j.s.min_samples) + " per variant");
}

// Every boot of both variants has the same value: any change would have separated them.
std::optional<VerdictResult> all_equal(const Judge& j) {
  const SampleStats &a = j.t.a, &b = j.t.b;
  if (a.n == 0 || b.n == 0 || a.min != a.max || b.min != b.max || a.min != b.min)
    return std::nullopt;
  return result(j, Verdict::no_change,
                a.min == 0 ? "0 in every boot of both variants"
                           : "the same value in every boot of both variants");
}

std::optional<VerdictResult> undefined_change(const Judge& j) {
  const bool appeared = j.t.kind == MetricKind::instructions && j.t.change > 0;  // +inf
  if (!is_relative(j) || std::isfinite(j.t.change) || appeared) return std::nullopt;
  return result(j, Verdict::inconclusive,
                std::string("relative change undefined (A ") +
                    (j.t.kind == MetricKind::timing ? "median" : "mean") + " is 0)");
}

std::optional<VerdictResult> unreachable(const Judge& j) {
  if (j.min_p < j.s.alpha) return std::nullopt;
  const std::string tail = ", not below alpha " + fmt("%.3g", j.s.alpha);
  if (j.t.kind != MetricKind::timing)
    return result(j, Verdict::inconclusive,
                  n_label(j.t) + ": smallest p the " + test_name(j) +
                      " test can reach with these values is " + fmt("%.3g", j.min_p) + tail +
                      " (too few boots, or too few with a non-zero value)");
  return result(j, Verdict::inconclusive,
                n_label(j.t) + ": smallest attainable " + test_name(j) + " p is " +
                    fmt("%.3g", j.min_p) + tail + " (too few boots)");
}

// Secondary rule 5: significant and beyond the threshold, by "better".
std::optional<VerdictResult> moved(const Judge& j) {
  std::string clause;
  if (!(j.p < j.s.alpha) || !beyond_threshold(j, &clause)) return std::nullopt;
  const std::string why = p_clause(j) + " < alpha " + fmt("%.3g", j.s.alpha) + ", " + clause;
  if (j.better == Better::none)
    return result(j, Verdict::inconclusive, why + ", but the metric has no 'better' direction");
  const bool good = (j.better == Better::lower) == (change_of(j) < 0);
  return result(j, good ? Verdict::improved : Verdict::regressed, why);
}

// Primary rule 5: significant in the bad direction and beyond the threshold.
std::optional<VerdictResult> primary_regressed(const Judge& j) {
  std::string clause;
  const bool bad_way = (j.better == Better::lower) == (change_of(j) > 0);
  if (!(j.p < j.s.alpha) || !bad_way || !beyond_threshold(j, &clause)) return std::nullopt;
  return result(j, Verdict::regressed,
                p_clause(j) + " < alpha " + fmt("%.3g", j.s.alpha) + ", " + clause);
}

std::string interval_text(const Judge& j) {
  const ConfidenceInterval& i = *j.t.interval;
  return fmt("%.3g", 100 * i.level) + "% CI [" + amount(j, i.low) + ", " + amount(j, i.high) + "]";
}

// Primary rule 6: the interval excludes 0 on the good side, beyond the threshold.
std::optional<VerdictResult> primary_improved(const Judge& j) {
  if (!j.t.interval) return std::nullopt;
  std::string clause;
  const bool good_side = j.better == Better::lower ? j.t.interval->high < 0 : j.t.interval->low > 0;
  if (!good_side || !beyond_threshold(j, &clause)) return std::nullopt;
  return result(j, Verdict::improved, interval_text(j) + " excludes 0 on the good side, " + clause);
}

// What the test said, before the interval's clause.
std::string test_clause(const Judge& j) {
  if (!(j.p < j.s.alpha)) return p_clause(j) + " >= alpha " + fmt("%.3g", j.s.alpha);
  std::string clause;
  beyond_threshold(j, &clause);
  return p_clause(j) + " but " + clause;
}

std::string margin_text(const Judge& j) {
  return "+-" + (is_relative(j) ? fmt("%.2f", 100 * margin_of(j)) + "%"
                                : format_count_amount(margin_of(j), j.unit));
}

std::optional<VerdictResult> equivalent(const Judge& j) {
  if (!j.t.interval) return std::nullopt;
  const double m = margin_of(j);
  if (!(j.t.interval->low > -m && j.t.interval->high < m)) return std::nullopt;
  return result(j, Verdict::no_change,
                test_clause(j) + "; " + interval_text(j) + " inside " + margin_text(j));
}

VerdictResult cannot_tell(const Judge& j) {
  if (!j.t.interval)
    return result(j, Verdict::inconclusive,
                  test_clause(j) +
                      "; no interval, so no change of the threshold's size is "
                      "excluded");
  const double worst = std::max(std::fabs(j.t.interval->low), std::fabs(j.t.interval->high));
  return result(j, Verdict::inconclusive,
                test_clause(j) + "; " + interval_text(j) + " reaches beyond " + margin_text(j) +
                    ": these boots cannot exclude a change of " +
                    (std::isinf(worst) ? std::string("any size") : amount(j, worst).substr(1)));
}

template <std::size_t N>
VerdictResult apply_rules(const Judge& j, const Rule (&rules)[N]) {
  for (Rule rule : rules)
    if (auto r = rule(j)) return *r;
  return cannot_tell(j);
}

// Instruction counts: "no significant change" rests on the interval alone, so it is tried before
// the rule that stops a test that cannot reach alpha. A deterministic count jitters by half an
// instruction (a median pair of 14163.0 in ten boots and 14163.5 in two): with those ties the
// smallest p 6 boots a side can reach is 0.227, yet the interval excludes any change of the
// margin's size. An unbounded interval (3 against 3) still falls through to `unreachable`. Counts
// and timings keep the order below (heavy ties there mean more boots are needed).
std::optional<VerdictResult> equivalent_instructions(const Judge& j) {
  if (j.t.kind != MetricKind::instructions) return std::nullopt;
  return equivalent(j);
}

constexpr Rule kSecondaryRules[] = {
    too_few, all_equal, undefined_change, equivalent_instructions, unreachable, moved, equivalent};
constexpr Rule kPrimaryRules[] = {
    too_few,     all_equal,         undefined_change, equivalent_instructions,
    unreachable, primary_regressed, primary_improved, equivalent};

Judge secondary_judge(const MetricTest& t, Better better, double threshold_pct,
                      const CompareSettings& settings, double floor, const std::string& unit) {
  return Judge{t,
               settings,
               better,
               false,
               threshold_pct,
               t.kind == MetricKind::count ? floor : 0,
               unit,
               t.family_p.value_or(t.p_value()),
               t.min_p()};
}

}  // namespace

VerdictResult decide_verdict(const MetricTest& t, Better better, double threshold_pct,
                             const CompareSettings& settings, double count_floor) {
  if (t.kind != MetricKind::timing && !t.count) {
    VerdictResult r;
    r.reason = "no test of the means";
    return r;
  }
  return apply_rules(secondary_judge(t, better, threshold_pct, settings, count_floor, ""),
                     kSecondaryRules);
}

namespace {

VerdictResult with_threshold_note(VerdictResult r, const std::string& why) {
  if (!why.empty()) r.reason += "; " + why;
  return r;
}

}  // namespace

VerdictResult decide_metric_verdict(const MetricTest& t, const MetricInfo& info,
                                    const CompareSettings& settings) {
  std::string why;
  const double threshold = metric_threshold_pct(t, info, settings, &why);
  if (t.kind != MetricKind::timing && !t.count)
    return decide_verdict(t, info.better, threshold, settings);
  const Judge j = secondary_judge(t, info.better, threshold, settings,
                                  settings.count_floor_for(info.unit), info.unit);
  return with_threshold_note(apply_rules(j, kSecondaryRules), why);
}

VerdictResult decide_primary_verdict(const MetricTest& t, const MetricInfo& info,
                                     const PrimaryMetric& primary,
                                     const CompareSettings& settings) {
  std::string why;
  double threshold = metric_threshold_pct(t, info, settings, &why);
  if (primary.threshold_pct) {
    threshold = *primary.threshold_pct;
    why = "threshold " + fmt("%.3g", threshold) + "% declared with the primary metric";
  }
  Judge j = secondary_judge(t, primary.higher_is_bad ? Better::lower : Better::higher, threshold,
                            settings, settings.count_floor_for(info.unit), info.unit);
  j.primary = true;
  if (!t.one_sided || (t.kind != MetricKind::timing && !t.count)) {
    VerdictResult r = result(j, Verdict::inconclusive, "the one-sided test was not computed");
    return r;
  }
  j.p = t.family_p.value_or(t.one_sided->p);
  j.min_p = t.one_sided->min_p;
  return with_threshold_note(apply_rules(j, kPrimaryRules), why);
}

}  // namespace isolab
