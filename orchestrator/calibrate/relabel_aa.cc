#include "calibrate/relabel_aa.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "base/error.h"
#include "compare/compare.h"
#include "compare/verdict_rules.h"
#include "results/result.h"
#include "results/run_facts.h"
#include "stats/multiplicity.h"

namespace isolab {

namespace {

// The cells to relabel (non-warm-up cells of either variant) and their design.
struct Pool {
  std::vector<std::size_t> cells;  // indices into cells[]
  RelabelDesign design;
};

Pool pool_cells(const nlohmann::json& run, const std::string& va, const std::string& vb) {
  Pool p;
  std::vector<std::string> hosts;
  const std::vector<results::CellLabel> cells = results::cell_labels(run);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const results::CellLabel& c = cells[i];
    if ((c.variant != va && c.variant != vb) || c.warmup) continue;
    auto at = std::find(hosts.begin(), hosts.end(), c.host_uri);
    if (at == hosts.end()) at = hosts.insert(hosts.end(), c.host_uri);
    p.cells.push_back(i);
    p.design.in_a.push_back(c.variant == va);
    p.design.block.push_back(static_cast<std::size_t>(at - hosts.begin()));
  }
  return p;
}

// The causes of exit 1 under compare's rules.
std::set<std::string> causes_of(const Comparison& c) {
  std::set<std::string> out;
  for (const auto& r : c.metrics)
    if (r.primary && r.verdict.verdict == Verdict::regressed) out.insert("primary " + r.name);
  for (const auto& f : c.failures)
    if (f.against_b) out.insert("kernel failure " + f.failure_class);
  for (const auto& g : c.gate)
    if (g.against_b) out.insert("gate " + g.check);
  if (c.new_warnings_in_touched_files() > 0) out.insert("new build warnings");
  return out;
}

// The causes under the per-metric rule: every metric row (not derived) alone, two-sided at
// alpha, every kernel failure of B, new warnings in touched files.
std::set<std::string> uncorrected_causes_of(const Comparison& c, const CompareSettings& s) {
  std::set<std::string> out;
  for (const auto& r : c.metrics) {
    if (r.derived) continue;
    MetricTest own = r.test;
    own.family_p.reset();
    const MetricInfo info{r.metric, r.unit, r.kind, better_from_string(r.better), r.tcg};
    if (decide_metric_verdict(own, info, s).verdict == Verdict::regressed) out.insert(r.name);
  }
  for (const auto& i : c.issues)
    if (i.side == "B" && i.kernel_failure) out.insert("kernel failure " + i.failure_class);
  if (c.new_warnings_in_touched_files() > 0) out.insert("new build warnings");
  return out;
}

void count(const std::set<std::string>& causes, std::size_t& total,
           std::map<std::string, std::size_t>& by_cause) {
  if (!causes.empty()) ++total;
  for (const auto& c : causes) ++by_cause[c];
}

}  // namespace

AaRelabelResult relabel_aa(const nlohmann::json& input, const CompareSettings& settings,
                           const AaRelabelOptions& options) {
  const auto order = results::compared_variants(input);
  const bool named = !options.variant_a.empty() && !options.variant_b.empty();
  if (!named && !order)
    throw SpecError("/variant_order", "an A/A relabelling needs variant_order with two variants");
  if (!results::has_cells(input)) throw SpecError("/cells", "result.json must have a cells array");
  AaRelabelResult r;
  r.run_id = results::run_id_of(input);
  r.variant_a = !options.variant_a.empty() ? options.variant_a : order->first;
  r.variant_b = !options.variant_b.empty() ? options.variant_b : order->second;
  for (const std::string& v : {r.variant_a, r.variant_b})
    if (!results::records_variant(input, v))
      throw Error("A/A relabelling: run " + r.run_id + " has no variant '" + v + "'");
  const Pool pool = pool_cells(input, r.variant_a, r.variant_b);
  if (pool.cells.empty()) throw Error("A/A relabelling: no cell of either variant to relabel");
  r.cells_a =
      static_cast<std::size_t>(std::count(pool.design.in_a.begin(), pool.design.in_a.end(), true));
  r.cells_b = pool.cells.size() - r.cells_a;
  CompareSettings s = settings;
  s.exit_status_only = true;
  for (const auto& p : s.primary) r.primary.push_back(p.row_name());
  r.primary_origin = s.primary_origin;
  const Relabellings labels =
      relabellings(pool.design, options.exact_limit, options.resamples, options.seed);
  r.relabellings = labels.size();
  r.exact = labels.exact;
  results::RunResult run = results::result_from_json(input);
  for (std::size_t k = 0; k < labels.size(); ++k) {
    for (std::size_t j = 0; j < pool.cells.size(); ++j)
      run.cells[pool.cells[j]].variant = labels[k][j] ? r.variant_a : r.variant_b;
    const Comparison c = compare_runs(run, r.variant_a, run, r.variant_b, s, false);
    const std::set<std::string> causes = causes_of(c);
    if (k == 0) r.observed_exit_1 = !causes.empty();
    count(causes, r.exit_1, r.causes);
    count(uncorrected_causes_of(c, s), r.uncorrected_exit_1, r.uncorrected_causes);
  }
  return r;
}

}  // namespace isolab
