// The verdict rules, as a table of rules tried in order.
#include "compare/verdict_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/number_text.h"

namespace isolab {

std::string format_count_amount(double v, const std::string& unit) {
  std::string x = format_number("%.3g", v);
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
  double p = 1;  // the p that decides (secondary: family-wise or own; primary: step-down)
  double min_p = 1;
  const PrimaryFamily* family = nullptr;  // primaries
};

bool is_relative(const Judge& j) { return j.t.kind != MetricKind::count; }

// The change in the verdict's scale: fraction (timing, instructions) or B - A (counts).
double change_of(const Judge& j) { return is_relative(j) ? j.t.change : j.t.count->diff; }

double margin_of(const Judge& j) {
  if (is_relative(j)) return j.threshold_pct / 100.0;
  return std::max(j.floor, j.threshold_pct / 100.0 * std::fabs(j.t.count->mean_a));
}

bool range_decides(const Judge& j) { return j.t.range && j.t.range->applies; }

// The interval the verdict reads: the range rule's while it applies, else the inverted test's.
std::optional<ConfidenceInterval> interval_of(const Judge& j) {
  if (!range_decides(j)) return j.t.interval;
  const RangeRule& r = *j.t.range;
  ConfidenceInterval i;
  i.level = 1 - r.bound;
  const double base = is_relative(j) ? std::fabs(j.t.a.mean) : 1.0;
  if (!(base > 0)) return std::nullopt;
  i.low = r.low / base;
  i.high = r.high / base;
  return i;
}

// A change (verdict scale) as text: "+3.75%" or "+0.98/s".
std::string amount(const Judge& j, double x) {
  if (std::isinf(x)) return x > 0 ? "+inf" : "-inf";
  if (is_relative(j)) return format_number("%+.2f", 100 * x) + "%";
  return (x > 0 ? "+" : "") + format_count_amount(x, j.unit);
}

std::string n_label(const MetricTest& t) {
  std::string s = "n=" + std::to_string(t.a.n) + "+" + std::to_string(t.b.n);
  if (t.stratified) s += " in " + std::to_string(t.stratified->strata_used) + " host(s)";
  return s;
}

std::string test_name(const Judge& j) {
  const bool values = j.primary ? !j.t.one_sided_ranks : j.t.kind != MetricKind::timing;
  std::string name = j.t.stratified ? (values ? "stratified permutation" : "stratified van Elteren")
                                    : (values ? "permutation" : "midrank permutation");
  return j.primary ? "one-sided " + name : name;
}

std::string p_label(const Judge& j) {
  if (j.primary) return j.family ? "step-down p=" : "one-sided p=";
  return j.t.family_p ? "family-wise p=" : "p=";
}

std::string p_clause(const Judge& j) { return p_label(j) + format_number("%.3g", j.p); }

// Whether |change| is beyond the threshold (and, for counts, the floor), with the clause.
bool beyond_threshold(const Judge& j, std::string* clause) {
  if (is_relative(j)) {
    const double c = 100.0 * j.t.change;
    const bool large = std::fabs(c) > j.threshold_pct;
    *clause = "|" + format_number("%.2f", c) + "%| " + (large ? ">" : "<=") + " threshold " +
              format_number("%.2f", j.threshold_pct) + "%";
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
                       : "|" + format_number("%.2f", rel) + "%| " + (large ? ">" : "<=") +
                             " threshold " + format_number("%.2f", j.threshold_pct) + "%");
  return large;
}

VerdictResult result(const Judge& j, Verdict v, const std::string& reason) {
  VerdictResult r;
  r.verdict = v;
  r.reason = reason;
  r.threshold_pct = j.threshold_pct;
  r.margin_relative = is_relative(j);
  r.margin = (r.margin_relative ? 100.0 : 1.0) * margin_of(j);
  if (const auto i = interval_of(j)) {
    const double scale = r.margin_relative ? 100.0 : 1.0;
    r.cannot_exclude = scale * std::max(std::fabs(i->low), std::fabs(i->high));
  }
  return r;
}

std::string interval_text(const Judge& j) {
  const ConfidenceInterval i = *interval_of(j);
  const std::string ends = "[" + amount(j, i.low) + ", " + amount(j, i.high) + "]";
  if (range_decides(j)) return "range " + ends;
  return format_number("%.4g", 100 * i.level) + "% CI " + ends;
}

std::string margin_text(const Judge& j) {
  return "+-" + (is_relative(j) ? format_number("%.2f", 100 * margin_of(j)) + "%"
                                : format_count_amount(margin_of(j), j.unit));
}

bool inside_margin(const Judge& j) {
  const auto i = interval_of(j);
  const double m = margin_of(j);
  return i && i->low > -m && i->high < m;
}

// The verdict of a change shown significant (bad: in the bad direction): regressed or improved
// beyond the threshold, changed below it.
VerdictResult changed(const Judge& j, bool bad, const std::string& why) {
  std::string clause;
  const bool beyond = beyond_threshold(j, &clause);
  const std::string text = why + ", " + clause;
  if (!beyond) return result(j, Verdict::changed_below, text);
  if (j.better == Better::none)
    return result(j, Verdict::inconclusive, text + ", but the metric has no 'better' direction");
  return result(j, bad ? Verdict::regressed : Verdict::improved, text);
}

using Rule = std::optional<VerdictResult> (*)(const Judge&);

std::optional<VerdictResult> too_few(const Judge& j) {
  if (j.t.a.n >= j.s.min_samples && j.t.b.n >= j.s.min_samples) return std::nullopt;
  return result(
      j, Verdict::inconclusive,
      n_label(j.t) + " below min_samples " + std::to_string(j.s.min_samples) + " per variant");
}

// Whether a change (verdict scale) is in the bad direction.
bool bad_way(const Judge& j, double change) {
  return j.better == Better::lower ? change > 0 : j.better == Better::higher && change < 0;
}

// The range rule while every boot of each side lies within the calibrated jitter.
std::optional<VerdictResult> by_range(const Judge& j) {
  if (!range_decides(j)) return std::nullopt;
  const RangeRule& r = *j.t.range;
  const ConfidenceInterval i = *interval_of(j);
  const std::string rule =
      "range rule (every boot of each side within the jitter " + format_number("%.3g", r.jitter) +
      " of " + std::to_string(r.runs) + " calibration run(s); false-alarm bound " +
      format_number("%.3g", r.bound) + "): " + n_label(j.t) + ", " + interval_text(j);
  const bool excludes = i.low > 0 || i.high < 0;
  const bool sig_exact =
      j.family ? (j.family->rejected_bad || j.family->rejected_good) : j.p < j.s.alpha;
  if (excludes) return changed(j, bad_way(j, i.low > 0 ? 1 : -1), rule + " excludes 0");
  if (sig_exact)
    return changed(j, bad_way(j, change_of(j)), rule + "; the exact test: " + p_clause(j));
  if (inside_margin(j)) return result(j, Verdict::no_change, rule + " inside " + margin_text(j));
  return result(j, Verdict::inconclusive, rule + " reaches beyond " + margin_text(j));
}

}  // namespace

bool same_value_in_every_boot(const MetricTest& t) {
  const SampleStats &a = t.a, &b = t.b;
  return a.n > 0 && b.n > 0 && a.min == a.max && b.min == b.max && a.min == b.min;
}

namespace {

// Every boot of both variants has the same value.
std::optional<VerdictResult> all_equal(const Judge& j) {
  if (!same_value_in_every_boot(j.t)) return std::nullopt;
  if (j.t.a.min != 0 || j.t.kind == MetricKind::timing)
    return result(j, Verdict::no_change, "the same value in every boot of both variants");
  const double unseen = 100 * (1 - std::pow(j.s.alpha, 1.0 / static_cast<double>(j.t.b.n)));
  return result(j, Verdict::inconclusive,
                "0 in every boot of both variants: an effect in fewer than " +
                    format_number("%.0f", unseen) + "% of B's " + std::to_string(j.t.b.n) +
                    " boots would leave them all at 0 with probability >= alpha " +
                    format_number("%.3g", j.s.alpha));
}

std::optional<VerdictResult> undefined_change(const Judge& j) {
  const bool appeared = j.t.kind == MetricKind::instructions && j.t.change > 0;  // +inf
  if (!is_relative(j) || std::isfinite(j.t.change) || appeared) return std::nullopt;
  const bool medians = j.t.kind == MetricKind::timing || (j.primary && j.t.one_sided_ranks);
  return result(
      j, Verdict::inconclusive,
      std::string("relative change undefined (A ") + (medians ? "median" : "mean") + " is 0)");
}

bool significant(const Judge& j) {
  return j.family ? (j.family->rejected_bad || j.family->rejected_good) : j.p < j.s.alpha;
}

// What the test said, before the interval's clause.
std::string test_clause(const Judge& j) {
  const double level = j.family ? j.family->level : j.s.alpha;
  if (!significant(j)) return p_clause(j) + " >= alpha " + format_number("%.3g", level);
  std::string clause;
  beyond_threshold(j, &clause);
  return p_clause(j) + " but " + clause;
}

std::optional<VerdictResult> equivalent(const Judge& j) {
  if (!inside_margin(j)) return std::nullopt;
  return result(j, Verdict::no_change,
                test_clause(j) + "; " + interval_text(j) + " inside " + margin_text(j));
}

// Instruction counts: "no significant change" rests on the interval alone, so it is tried before
// the rule that stops a test that cannot reach alpha. A deterministic count jitters by half an
// instruction (a median pair of 14163.0 in ten boots and 14163.5 in two): with those ties the
// smallest p 6 boots a side can reach is 0.227, yet the interval excludes any change of the
// margin's size. A significant change is left to the rules that call it changed.
std::optional<VerdictResult> equivalent_instructions(const Judge& j) {
  if (j.t.kind != MetricKind::instructions || significant(j)) return std::nullopt;
  return equivalent(j);
}

std::optional<VerdictResult> unreachable(const Judge& j) {
  if (j.family) {
    if (j.family->reachable) return std::nullopt;
    const double level = j.family->level / static_cast<double>(j.family->k);
    return result(j, Verdict::inconclusive,
                  n_label(j.t) + ": cannot reach alpha: the smallest p the " + test_name(j) +
                      " test can reach with these values is " + format_number("%.3g", j.min_p) +
                      ", not below the step-down's level " +
                      format_number("%.3g", j.family->level) + " / K " +
                      std::to_string(j.family->k) + " = " + format_number("%.3g", level) +
                      " (too few boots, or too few with a non-zero value)");
  }
  if (j.min_p < j.s.alpha) return std::nullopt;
  const std::string tail = ", not below alpha " + format_number("%.3g", j.s.alpha);
  if (j.t.kind != MetricKind::timing)
    return result(j, Verdict::inconclusive,
                  n_label(j.t) + ": smallest p the " + test_name(j) +
                      " test can reach with these values is " + format_number("%.3g", j.min_p) +
                      tail + " (too few boots, or too few with a non-zero value)");
  return result(j, Verdict::inconclusive,
                n_label(j.t) + ": smallest attainable " + test_name(j) + " p is " +
                    format_number("%.3g", j.min_p) + tail + " (too few boots)");
}

// Secondary rules 6 and 7: significant; by the threshold and "better".
std::optional<VerdictResult> secondary_moved(const Judge& j) {
  if (!(j.p < j.s.alpha)) return std::nullopt;
  return changed(j, bad_way(j, change_of(j)),
                 p_clause(j) + " < alpha " + format_number("%.3g", j.s.alpha));
}

// Primary rules 6-8: the budget's step-down rejected a direction.
std::optional<VerdictResult> primary_moved(const Judge& j) {
  const PrimaryFamily& f = *j.family;
  if (!f.rejected_bad && !f.rejected_good) return std::nullopt;
  const bool bad = f.rejected_bad;
  const double p = bad ? f.adjusted_bad : f.adjusted_good;
  return changed(j, bad,
                 std::string(bad ? "bad" : "good") + "-direction step-down p=" +
                     format_number("%.3g", p) + " < level " + format_number("%.3g", f.level));
}

VerdictResult cannot_tell(const Judge& j) {
  const auto i = interval_of(j);
  if (!i)
    return result(j, Verdict::inconclusive,
                  test_clause(j) +
                      "; no interval, so no change of the threshold's size is "
                      "excluded");
  const double worst = std::max(std::fabs(i->low), std::fabs(i->high));
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

constexpr Rule kSecondaryRules[] = {
    too_few,     by_range,        all_equal, undefined_change, equivalent_instructions,
    unreachable, secondary_moved, equivalent};
constexpr Rule kPrimaryRules[] = {
    too_few,     by_range,      all_equal, undefined_change, equivalent_instructions,
    unreachable, primary_moved, equivalent};

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
               t.min_p(),
               nullptr};
}

// A primary judged without the exit budget: a family of its own two one-sided tests at alpha
// (family_p, when set, as the bad direction's adjusted p).
PrimaryFamily alone(const MetricTest& t, const CompareSettings& s) {
  PrimaryFamily f;
  f.level = s.alpha;
  f.k = 1;
  f.adjusted_bad = t.family_p.value_or(t.one_sided->p);
  f.rejected_bad = f.adjusted_bad < s.alpha;
  f.adjusted_good = t.good_sided ? t.good_sided->p : 1.0;
  f.rejected_good = f.adjusted_good < s.alpha;
  f.p_min = t.one_sided->min_p;
  f.reachable = f.p_min < s.alpha || (t.good_sided && t.good_sided->min_p < s.alpha);
  return f;
}

VerdictResult with_threshold_note(VerdictResult r, const std::string& why) {
  if (!why.empty()) r.reason += "; " + why;
  return r;
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
    why = "threshold " + format_number("%.3g", threshold) + "% declared with the primary metric";
  }
  Judge j = secondary_judge(t, primary.higher_is_bad ? Better::lower : Better::higher, threshold,
                            settings, settings.count_floor_for(info.unit), info.unit);
  j.primary = true;
  if (!t.one_sided || (t.kind != MetricKind::timing && !t.count))
    return result(j, Verdict::inconclusive, "the one-sided tests were not computed");
  const PrimaryFamily family = t.family ? *t.family : alone(t, settings);
  j.family = &family;
  j.p = family.adjusted_bad;
  j.min_p = family.p_min;
  return with_threshold_note(apply_rules(j, kPrimaryRules), why);
}

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

double metric_threshold_pct(const MetricTest&, const MetricInfo& info,
                            const CompareSettings& settings, std::string* why) {
  bool tcg = false;
  const double threshold = effective_threshold_pct(info, settings, &tcg);
  std::string note;
  if (tcg) {
    note = "threshold " + format_number("%.3g", threshold) +
           "% is the TCG timing threshold (compare.tcg_timing_threshold_pct): cells ran under TCG, "
           "where timings of one kernel varied 2-26% between boots";
  } else if (info.kind == MetricKind::instructions &&
             threshold == settings.instructions_threshold_pct) {
    note = "threshold " + format_number("%.3g", threshold) +
           "% is the instruction threshold (compare.instructions_threshold_pct)";
  }
  if (why) *why = note;
  return threshold;
}

}  // namespace isolab
