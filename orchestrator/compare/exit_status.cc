#include "compare/exit_status.h"

#include <algorithm>

#include "base/number_text.h"
#include "stats/step_down.h"

namespace isolab {

int compare_exit_status(const Comparison& c) {
  if (c.regressions() > 0) return 1;
  return c.budget.no_primary_reachable ? 3 : 0;
}

namespace {

std::string verdict_suffix(bool counted, double adjusted) {
  return counted ? ": counted against B (step-down p = " + format_number("%.3g", adjusted) + ")"
                 : ": not counted against B";
}

// The regression family's entries, in channel order, with where each one's outcome goes.
struct Family {
  std::vector<BudgetEntry> entries;
  std::vector<MetricRow*> primary;  // parallel to the primary entries (the first ones)
};

Family regression_family(Comparison& c) {
  Family f;
  for (auto& r : c.metrics) {
    if (!r.primary || !r.not_measured.empty() || !r.test.one_sided) continue;
    f.entries.push_back({"primary", r.name, r.test.one_sided->p, r.test.one_sided->min_p});
    f.primary.push_back(&r);
  }
  for (const auto& x : c.failures)
    f.entries.push_back({"kernel failure", x.failure_class, x.p, x.p_min});
  for (const auto& g : c.gate)
    if (!g.reason.empty()) f.entries.push_back({"gate", g.check, g.p, g.p_min});
  if (c.retries.a_retries + c.retries.b_retries > 0)
    f.entries.push_back({"retried boots", "", c.retries.p, c.retries.p_min});
  return f;
}

DiscreteStepDown run_family(std::vector<BudgetEntry>& entries, double level) {
  std::vector<double> p, p_min;
  for (const auto& e : entries) p.push_back(e.p), p_min.push_back(e.p_min);
  DiscreteStepDown d = discrete_step_down(p, p_min, level);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    entries[i].adjusted = d.adjusted[i];
    entries[i].k = d.k[i];
    entries[i].rejected = d.rejected[i];
    entries[i].reachable = d.reachable[i];
  }
  return d;
}

// Kernel failures, gate checks and retries: against_b from the step-down.
void mark_channels(Comparison& c, const std::vector<BudgetEntry>& entries) {
  for (const auto& e : entries) {
    if (e.channel == "kernel failure") {
      for (auto& f : c.failures)
        if (f.failure_class == e.name)
          f.against_b = e.rejected, f.reason += verdict_suffix(e.rejected, e.adjusted);
    } else if (e.channel == "gate") {
      for (auto& g : c.gate)
        if (g.check == e.name)
          g.against_b = e.rejected, g.reason += verdict_suffix(e.rejected, e.adjusted);
    } else if (e.channel == "retried boots") {
      c.retries.against_b = e.rejected;
      c.retries.reason += verdict_suffix(e.rejected, e.adjusted);
    }
  }
}

// The range rule's declared shares: every primary with a calibrated jitter (MetricTest::range).
void range_shares(Comparison& c) {
  for (const auto& r : c.metrics)
    if (r.primary && r.test.range) {
      c.budget.ranges.push_back({r.name, r.test.range->bound, r.test.range->applies});
      c.budget.range_share += r.test.range->bound;
    }
}

}  // namespace

void apply_exit_budget(Comparison& c) {
  ExitBudget& b = c.budget;
  b = ExitBudget{};
  b.alpha = c.settings.alpha;
  range_shares(c);
  b.level = std::max(0.0, b.alpha - b.range_share);
  Family bad = regression_family(c);
  const DiscreteStepDown d = run_family(bad.entries, b.level);
  b.first_k = d.first_k;
  mark_channels(c, bad.entries);
  // The improvement family: the primaries' good-direction tests at the same level.
  std::vector<BudgetEntry> good;
  for (MetricRow* r : bad.primary)
    good.push_back({"primary", r->name, r->test.good_sided ? r->test.good_sided->p : 1.0,
                    r->test.good_sided ? r->test.good_sided->min_p : 1.0});
  b.improve_first_k = run_family(good, b.level).first_k;
  for (std::size_t i = 0; i < bad.primary.size(); ++i) {
    MetricRow& r = *bad.primary[i];
    PrimaryFamily f;
    f.level = b.level;
    f.k = b.first_k;
    f.adjusted_bad = bad.entries[i].adjusted;
    f.rejected_bad = bad.entries[i].rejected;
    f.adjusted_good = good[i].adjusted;
    f.rejected_good = good[i].rejected;
    f.reachable = bad.entries[i].reachable || good[i].reachable;
    f.p_min = bad.entries[i].p_min;
    r.test.family = f;
    r.test.family_p = f.adjusted_bad;
    const bool by_range = r.test.range && r.test.range->applies;
    if (!f.reachable && !by_range) b.unreachable_primaries.push_back(r.name);
  }
  b.entries = std::move(bad.entries);
  std::size_t declared = 0;
  for (const auto& r : c.metrics) declared += r.primary && r.not_measured.empty();
  b.no_primary_reachable = declared > 0 && b.unreachable_primaries.size() == declared;
}

}  // namespace isolab
