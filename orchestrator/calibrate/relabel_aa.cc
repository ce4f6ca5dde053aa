#include "calibrate/relabel_aa.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "base/error.h"
#include "compare/compare.h"
#include "compare/verdict_rules.h"
#include "stats/multiplicity.h"

namespace isolab {

namespace {

std::string str_of(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// The cells to relabel (non-warm-up cells of either variant) and their design.
struct Pool {
  std::vector<std::size_t> cells;  // indices into run["cells"]
  RelabelDesign design;
};

Pool pool_cells(const nlohmann::json& run, const std::string& va, const std::string& vb) {
  Pool p;
  std::vector<std::string> hosts;
  const auto& cells = run["cells"];
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto& c = cells[i];
    const std::string v = str_of(c, "variant");
    if ((v != va && v != vb) || (c.contains("warmup") && c["warmup"] == true)) continue;
    const std::string host = str_of(c.contains("host") ? c["host"] : nlohmann::json(), "uri");
    auto at = std::find(hosts.begin(), hosts.end(), host);
    if (at == hosts.end()) at = hosts.insert(hosts.end(), host);
    p.cells.push_back(i);
    p.design.in_a.push_back(v == va);
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
  const auto order = input.is_object() ? input.value("variant_order", nlohmann::json()) : nullptr;
  const bool named = !options.variant_a.empty() && !options.variant_b.empty();
  if (!named &&
      (!order.is_array() || order.size() < 2 || !order[0].is_string() || !order[1].is_string()))
    throw SpecError("/variant_order", "an A/A relabelling needs variant_order with two variants");
  if (!input.contains("cells") || !input["cells"].is_array())
    throw SpecError("/cells", "result.json must have a cells array");
  AaRelabelResult r;
  r.run_id = str_of(input, "run_id");
  r.variant_a = !options.variant_a.empty() ? options.variant_a : order[0].get<std::string>();
  r.variant_b = !options.variant_b.empty() ? options.variant_b : order[1].get<std::string>();
  for (const std::string& v : {r.variant_a, r.variant_b})
    if (!input.contains("variants") || !input["variants"].is_object() ||
        !input["variants"].contains(v))
      throw Error("A/A relabelling: run " + r.run_id + " has no variant '" + v + "'");
  nlohmann::json run = input;
  const Pool pool = pool_cells(run, r.variant_a, r.variant_b);
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
  for (std::size_t k = 0; k < labels.size(); ++k) {
    for (std::size_t j = 0; j < pool.cells.size(); ++j)
      run["cells"][pool.cells[j]]["variant"] = labels[k][j] ? r.variant_a : r.variant_b;
    const Comparison c = compare_runs(run, r.variant_a, run, r.variant_b, s, false);
    const std::set<std::string> causes = causes_of(c);
    if (k == 0) r.observed_exit_1 = !causes.empty();
    count(causes, r.exit_1, r.causes);
    count(uncorrected_causes_of(c, s), r.uncorrected_exit_1, r.uncorrected_causes);
  }
  return r;
}

}  // namespace isolab
