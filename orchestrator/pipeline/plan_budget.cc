#include "pipeline/plan_budget.h"

#include <algorithm>

#include "base/number_text.h"
#include "compare/power.h"
#include "compare/verdict_rules.h"
#include "spec/compare_settings.h"
#include "stats/range_rule.h"

namespace isolab {

namespace {

// The workload a metric belongs to ("vmstat-idle" of "vmstat-idle.noise.x"), or nullptr.
const WorkloadSpec* workload_of(const Spec& spec, const std::string& metric) {
  const std::string name = metric.substr(0, metric.find('.'));
  for (const auto& w : spec.workloads)
    if (w.name == name) return &w;
  return nullptr;
}

// The range rule's calibration of a primary when the rule can apply at `per_side` boots a side
// (a calibrated jitter, and at least 2 boots a side: stats/range_rule.h), else nullptr.
const MetricCalibrationFacts* range_facts(const CompareSettings& s, const PrimaryMetric& p,
                                          std::size_t per_side) {
  const MetricCalibrationFacts* f = s.calibrated(p.metric);
  return f && f->jitter && per_side >= 2 ? f : nullptr;
}

// The step-down's first level at `per_side` boots a side: alpha less the range rows' shares
// (range_rule_bound at that size), over the number of primaries.
double per_hypothesis_at(const CompareSettings& s, std::size_t per_side) {
  double share = 0;
  for (const auto& p : s.primary)
    if (const MetricCalibrationFacts* f = range_facts(s, p, per_side))
      share += range_rule_bound(per_side, per_side, f->runs);
  const double level = std::max(0.0, s.alpha - share);
  return s.primary.empty() ? level : level / static_cast<double>(s.primary.size());
}

// The detect line of a count primary: its window from the workload's duration_s; the boots it
// needs each at the level of that many boots.
std::string power_line(const Spec& spec, const PrimaryMetric& p, const CompareSettings& s,
                       double per_hypothesis) {
  const bool rate = p.metric.size() > 6 && p.metric.compare(p.metric.size() - 6, 6, "_per_s") == 0;
  const std::string unit = rate ? "1/s" : "count";
  CountPowerPlan plan;
  plan.per_side = static_cast<std::size_t>(spec.repetitions);
  plan.level = per_hypothesis;
  plan.threshold_pct = p.threshold_pct.value_or(s.threshold_pct_for(p.metric));
  plan.floor = s.count_floor_for(unit);
  plan.cpus = p.cpus.empty() ? 1 : p.cpus.size();
  plan.replicates = 300;
  for (std::size_t n = 0; n <= 40; ++n) plan.level_by_per_side.push_back(per_hypothesis_at(s, n));
  if (rate) {
    const WorkloadSpec* w = workload_of(spec, p.metric);
    if (!w || w->duration_s <= 0)
      return p.row_name() + ": detect " + format_count_amount(p.detect->change, unit) +
             ": no power calculation: the window of " +
             (w ? "step " + w->name + " is counted in iterations, not known before the run"
                : std::string("its step is not in the spec"));
    plan.window_s = w->duration_s;
  }
  return count_power_line(p.row_name(), unit, *p.detect, plan,
                          count_power_report(*p.detect, p.higher_is_bad, rate, plan));
}

}  // namespace

PlanBudget plan_budget(const Spec& spec) {
  const CompareSettings s = settings_from_json(spec.compare);
  PlanBudget b;
  b.per_side = static_cast<std::size_t>(std::max(0, spec.repetitions));
  b.alpha = s.alpha;
  const double best_p = best_one_sided_p(b.per_side);
  for (const auto& p : s.primary) {
    PlannedPrimary pp;
    pp.row = p.row_name();
    pp.best_p = best_p;
    if (const MetricCalibrationFacts* f = range_facts(s, p, b.per_side)) {
      pp.range = true;
      pp.range_bound = range_rule_bound(b.per_side, b.per_side, f->runs);
      b.range_share += pp.range_bound;
    }
    b.primaries.push_back(pp);
  }
  b.level = std::max(0.0, b.alpha - b.range_share);
  b.per_hypothesis = b.primaries.empty() ? b.level : b.level / double(b.primaries.size());
  std::size_t reachable = 0;
  for (std::size_t i = 0; i < b.primaries.size(); ++i) {
    PlannedPrimary& pp = b.primaries[i];
    pp.reachable = pp.range || pp.best_p < b.per_hypothesis;
    reachable += pp.reachable;
    if (s.primary[i].detect) pp.power = power_line(spec, s.primary[i], s, b.per_hypothesis);
    if (!pp.reachable)
      b.warnings.push_back(
          pp.row + " cannot reach alpha at " + std::to_string(b.per_side) +
          " boots a side: its exact test gives at best p = " + format_number("%.3g", pp.best_p) +
          ", not below " + format_number("%.3g", b.level) + " / " +
          std::to_string(b.primaries.size()) + " = " + format_number("%.3g", b.per_hypothesis) +
          " when every primary can reach it");
    else if (pp.power.find("CANNOT REACH ALPHA") != std::string::npos)
      b.warnings.push_back(pp.power);
  }
  for (std::size_t n = 1; n <= 40 && !b.fewest_per_side; ++n)
    if (best_one_sided_p(n) < per_hypothesis_at(s, n)) b.fewest_per_side = n;
  b.none_reachable = !b.primaries.empty() && reachable == 0;
  if (b.none_reachable)
    b.warnings.push_back(
        "no primary metric can reach alpha at " + std::to_string(b.per_side) +
        " boots a side: compare will exit 3 (nothing could be detected) unless rows turn out "
        "constant or something else is counted against B; raise repetitions" +
        (b.fewest_per_side ? " to at least " + std::to_string(*b.fewest_per_side) : ""));
  return b;
}

std::string plan_budget_text(const PlanBudget& b) {
  std::string s;
  if (b.primaries.empty()) return s;
  s += "  one alpha budget of " + format_number("%.3g", b.alpha) + " for the exit status: ";
  if (b.range_share > 0)
    s += "the range rule's rows take " + format_number("%.3g", b.range_share) +
         " (their false-alarm bounds), ";
  s += "the discrete step-down over the primaries, kernel failure classes, gate checks and "
       "retried boots runs at " +
       format_number("%.3g", b.level) +
       "; with every primary able to reach it, the first level is " +
       format_number("%.3g", b.level) + " / " + std::to_string(b.primaries.size()) + " = " +
       format_number("%.3g", b.per_hypothesis) + "\n";
  s += "  at " + std::to_string(b.per_side) + " boots a side each exact test gives at best p = " +
       format_number("%.3g", b.primaries.front().best_p) + ":\n";
  for (const auto& p : b.primaries) {
    s += "    " + p.row + ": ";
    if (p.range)
      s += "range rule while its boots agree within the calibrated jitter (share " +
           format_number("%.3g", p.range_bound) + "), else the exact test" +
           (p.best_p < b.per_hypothesis ? "" : ", which CANNOT REACH ALPHA");
    else
      s += p.reachable ? "can reach alpha" : "CANNOT REACH ALPHA";
    s += "\n";
    if (!p.power.empty()) s += "      " + p.power + "\n";
  }
  if (b.fewest_per_side && *b.fewest_per_side > b.per_side)
    s += "  every primary's exact test can reach its level from " +
         std::to_string(*b.fewest_per_side) + " boots a side\n";
  for (const auto& w : b.warnings)
    if (w.rfind("no primary metric", 0) == 0) s += "  WARNING: " + w + "\n";
  return s;
}

nlohmann::json to_json(const PlanBudget& b) {
  nlohmann::json primaries = nlohmann::json::array();
  for (const auto& p : b.primaries)
    primaries.push_back({{"row", p.row},
                         {"range", p.range},
                         {"range_bound", p.range_bound},
                         {"best_p", p.best_p},
                         {"reachable", p.reachable},
                         {"power", p.power}});
  return {{"per_side", b.per_side},
          {"alpha", b.alpha},
          {"range_share", b.range_share},
          {"level", b.level},
          {"per_hypothesis", b.per_hypothesis},
          {"none_reachable", b.none_reachable},
          {"fewest_per_side",
           b.fewest_per_side ? nlohmann::json(*b.fewest_per_side) : nlohmann::json(nullptr)},
          {"warnings", b.warnings},
          {"primaries", primaries}};
}

}  // namespace isolab
