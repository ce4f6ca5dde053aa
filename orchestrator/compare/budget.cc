#include "compare/budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "base/error.h"
#include "compare/compare.h"
#include "compare/multiplicity.h"
#include "compare/permutation.h"

namespace isolab {

namespace {

// The smallest K >= 1 with #{i in rest : p_min_i * K < level} <= K.
std::size_t tarone_k(const std::vector<std::size_t>& rest, std::span<const double> p_min,
                     double level) {
  for (std::size_t k = 1;; ++k) {
    std::size_t m = 0;
    for (std::size_t i : rest) m += p_min[i] * static_cast<double>(k) < level;
    if (m <= k) return k;
  }
}

std::string p3(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", p);
  return buf;
}

std::string boots_text(std::size_t n, std::size_t total) {
  return std::to_string(n) + " of " + std::to_string(total) + " boot" + (total == 1 ? "" : "s");
}

}  // namespace

DiscreteStepDown discrete_step_down(std::span<const double> p, std::span<const double> p_min,
                                    double level) {
  if (p.size() != p_min.size()) throw Error("discrete_step_down: p and p_min differ in length");
  const std::size_t m = p.size();
  DiscreteStepDown out;
  out.rejected.assign(m, false);
  out.adjusted.assign(m, 1.0);
  out.k.assign(m, 0);
  out.reachable.assign(m, false);
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return p[x] != p[y] ? p[x] < p[y] : p_min[x] < p_min[y];
  });
  std::vector<std::size_t> rest = order;
  out.first_k = tarone_k(rest, p_min, level);
  for (std::size_t i = 0; i < m; ++i)
    out.reachable[i] = p_min[i] * static_cast<double>(out.first_k) < level;
  double running = 0;
  bool stopped = false;
  for (std::size_t j = 0; j < m; ++j) {
    const std::size_t h = order[j];
    const std::size_t k = tarone_k(rest, p_min, level);
    running = std::max(running, std::min(1.0, static_cast<double>(k) * p[h]));
    out.adjusted[h] = running;
    if (stopped) continue;
    out.k[h] = k;
    if (!(p[h] * static_cast<double>(k) < level)) {
      stopped = true;
      continue;
    }
    out.rejected[h] = true;
    rest.erase(std::find(rest.begin(), rest.end(), h));
  }
  return out;
}

double fisher_min_p(std::size_t a_events, std::size_t a_total, std::size_t b_events,
                    std::size_t b_total) {
  const std::size_t k = a_events + b_events;
  const std::size_t in_b = std::min(k, b_total);
  return fisher_exact_greater(k - in_b, a_total, in_b, b_total);
}

namespace {

// Kernel-failure classes in report order.
constexpr const char* kFailureClasses[] = {"build", "boot",    "boot_timeout", "panic",
                                           "oops",  "warning", "rcu_stall",    "lockup"};

std::size_t cells_with(const std::vector<CellRecord>& cells, const std::string& klass) {
  return static_cast<std::size_t>(std::count_if(
      cells.begin(), cells.end(), [&](const auto& c) { return failure_weight_class(c) == klass; }));
}

}  // namespace

std::vector<FailureRow> weigh_failures(const std::vector<CellRecord>& a,
                                       const std::vector<CellRecord>& b) {
  std::vector<FailureRow> rows;
  for (const char* klass : kFailureClasses) {
    FailureRow f;
    f.failure_class = klass;
    f.a_cells = cells_with(a, klass);
    f.b_cells = cells_with(b, klass);
    if (f.a_cells == 0 && f.b_cells == 0) continue;
    f.a_total = a.size();
    f.b_total = b.size();
    f.p = fisher_exact_greater(f.a_cells, f.a_total, f.b_cells, f.b_total);
    f.p_min = fisher_min_p(f.a_cells, f.a_total, f.b_cells, f.b_total);
    f.reason = "B " + boots_text(f.b_cells, f.b_total) + ", A " + boots_text(f.a_cells, f.a_total) +
               "; one-sided Fisher p = " + p3(f.p) + " (smallest possible " + p3(f.p_min) + ")";
    rows.push_back(std::move(f));
  }
  return rows;
}

void weigh_gate(std::vector<GateSummaryRow>& rows) {
  for (auto& g : rows) {
    const std::size_t a_fail = g.a_total - g.a_pass, b_fail = g.b_total - g.b_pass;
    g.p = g.p_min = 1;
    g.against_b = false;
    g.reason.clear();
    if (b_fail == 0) continue;
    g.p = fisher_exact_greater(a_fail, g.a_total, b_fail, g.b_total);
    g.p_min = fisher_min_p(a_fail, g.a_total, b_fail, g.b_total);
    g.reason = "B failed it in " + boots_text(b_fail, g.b_total) + ", A in " +
               boots_text(a_fail, g.a_total) + "; one-sided Fisher p = " + p3(g.p) +
               " (smallest possible " + p3(g.p_min) + ")";
  }
}

RetryRow weigh_retries(const std::vector<CellRecord>& a, const std::vector<CellRecord>& b) {
  RetryRow r;
  Stratum s;
  for (const auto& c : a) s.a.push_back(static_cast<double>(c.retries));
  for (const auto& c : b) s.b.push_back(static_cast<double>(c.retries));
  r.a_cells = a.size();
  r.b_cells = b.size();
  for (const auto& c : a) r.a_retries += c.retries;
  for (const auto& c : b) r.b_retries += c.retries;
  if (r.a_retries + r.b_retries == 0) return r;
  const StratifiedResult t = stratified_permutation_test({s}, StratumScore::values, 1000000, 20000,
                                                         0x72657472, Alternative::greater);
  r.p = t.p;
  r.p_min = t.min_p;
  r.reason = "infrastructure failures booted again: B " + std::to_string(r.b_retries) + " in " +
             std::to_string(r.b_cells) + " boots, A " + std::to_string(r.a_retries) + " in " +
             std::to_string(r.a_cells) + "; one-sided exact p = " + p3(r.p) +
             " (smallest possible " + p3(r.p_min) + ")";
  return r;
}

namespace {

std::string verdict_suffix(bool counted, double adjusted) {
  return counted ? ": counted against B (step-down p = " + p3(adjusted) + ")"
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
