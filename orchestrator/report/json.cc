#include "report/json.h"

#include "report/format.h"
#include "report/summary.h"

namespace isolab {

using namespace report_detail;

namespace {

nlohmann::json hosts_json(const Comparison& c) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& s : c.hosts)
    hosts.push_back({{"uri", s.uri},
                     {"hostname", s.hostname},
                     {"cpu_model", s.cpu_model},
                     {"fingerprint_sha256", s.fingerprint_sha256},
                     {"cells_a", s.cells_a},
                     {"cells_b", s.cells_b}});
  return hosts;
}

nlohmann::json per_host_json(const MetricRow& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& hr : r.per_host)
    out.push_back(
        {{"host", hr.host},
         {"a", stats_json(hr.test.a, {})},
         {"b", stats_json(hr.test.b, {})},
         {"change_pct", jnum(hr.change_pct)},
         {"p_value", (hr.test.a.n && hr.test.b.n) ? jnum(hr.test.p_value()) : nlohmann::json()},
         {"verdict", verdict_name(hr.verdict.verdict)},
         {"reason", hr.verdict.reason}});
  return out;
}

nlohmann::json count_json(const MetricRow& r, const CompareSettings& s) {
  const CountTest& c = *r.test.count;
  return {{"mean_a", jnum(c.mean_a)},
          {"mean_b", jnum(c.mean_b)},
          {"diff", jnum(c.diff)},
          {"diff_ci_low", c.diff_ci ? jnum(c.diff_ci->low) : nlohmann::json()},
          {"diff_ci_high", c.diff_ci ? jnum(c.diff_ci->high) : nlohmann::json()},
          {"relative_change_pct", jnum(100 * c.relative_change)},
          {"new", c.mean_a == 0 && c.mean_b > 0},
          {"min_p", jnum(c.permutation.min_p)},
          {"reassignments", c.permutation.reassignments},
          {"floor", r.kind == MetricKind::count ? jnum(s.count_floor_for(r.unit)) : jnum(0)}};
}

// The interval in percent (timing, instructions) or the metric's unit (counts); an unbounded
// end is null with its "bounded" flag false.
nlohmann::json interval_json(const MetricRow& r) {
  if (!r.test.interval) return nullptr;
  const ConfidenceInterval& i = *r.test.interval;
  const bool relative = r.kind != MetricKind::count;
  const double scale = relative ? 100.0 : 1.0;
  return {{"low", jnum(scale * i.low)},
          {"high", jnum(scale * i.high)},
          {"low_bounded", std::isfinite(i.low)},
          {"high_bounded", std::isfinite(i.high)},
          {"level", i.level},
          {"unit", relative ? std::string("percent") : r.unit},
          {"reassignments", i.resamples_used}};
}

const char* test_json_name(const MetricRow& r) {
  if (r.kind == MetricKind::timing)
    return r.test.stratified ? "stratified-van-elteren" : "midrank-permutation";
  return r.test.stratified ? "stratified-permutation-mean" : "permutation-mean";
}

nlohmann::json verdict_json(const MetricRow& r) {
  const VerdictResult& v = r.verdict;
  return {{"threshold_pct", jnum(v.threshold_pct)},
          {"margin", jnum(v.margin)},
          {"margin_relative", v.margin_relative},
          {"cannot_exclude", jnum(v.cannot_exclude)},
          {"cannot_exclude_unbounded", std::isinf(v.cannot_exclude)},
          {"verdict", verdict_name(v.verdict)},
          {"reason", v.reason}};
}

nlohmann::json metric_json(const MetricRow& r, const CompareSettings& s) {
  nlohmann::json m = {
      {"name", r.name},
      {"metric", r.metric},
      {"unit", r.unit},
      {"better", r.better},
      {"kind", metric_kind_name(r.kind)},
      {"cpus", cpu_list_text(r.cpus)},
      {"derived", r.derived},
      {"tcg", r.tcg},
      {"role", role_name(r)},
      {"a", stats_json(r.test.a, r.a_values)},
      {"b", stats_json(r.test.b, r.b_values)},
      {"missing_a", r.missing_a},
      {"missing_b", r.missing_b},
      {"change_pct", jnum(r.change_pct)},
      {"ci_low_pct", jopt(r.ci_low_pct)},
      {"ci_high_pct", jopt(r.ci_high_pct)},
      {"interval", interval_json(r)},
      {"test", test_json_name(r)},
      {"p_value", has_both(r) ? jnum(r.test.p_value()) : nlohmann::json()},
      {"p_exact", r.test.p_exact()},
      {"min_p", has_both(r) ? jnum(r.test.min_p()) : nlohmann::json()},
      {"one_sided_p", r.test.one_sided ? jnum(r.test.one_sided->p) : nlohmann::json()},
      {"family_p", jopt(r.test.family_p)},
      {"family", r.test.family_p
                     ? nlohmann::json(r.primary ? "discrete-step-down" : "westfall-young")
                     : nlohmann::json()},
      {"permutation_p", jopt(r.test.permutation_p)},
      {"mann_whitney_p", r.kind == MetricKind::timing && has_both(r)
                             ? jnum(r.test.mann_whitney.p_two_sided)
                             : nlohmann::json()}};
  m.update(verdict_json(r));
  if (r.primary) {
    m["bad"] = r.declared->higher_is_bad ? "higher" : "lower";
    m["declared"] = r.declared->source;
  }
  if (r.test.count) m["count"] = count_json(r, s);
  if (r.test.stratified) {
    m["stratified"] = {{"p", jnum(r.test.stratified->p)},
                       {"min_p", jnum(r.test.stratified->min_p)},
                       {"exact", r.test.stratified->exact},
                       {"reassignments", r.test.stratified->reassignments},
                       {"strata", r.test.stratified->strata_used}};
    m["per_host"] = per_host_json(r);
  }
  return m;
}

nlohmann::json run_notes_json(const Comparison& c) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& n : c.run_notes) j.push_back({{"kind", n.kind}, {"text", n.text}});
  return j;
}

nlohmann::json tails_json(const Comparison& c) {
  auto tail = [](const HistogramTail& h) {
    return nlohmann::json{{"samples", h.samples},          {"overflows", h.overflows},
                          {"p99", jbucket(h.p99)},         {"p99_9", jbucket(h.p99_9)},
                          {"p99_999", jbucket(h.p99_999)}, {"max", jbucket(h.max)}};
  };
  nlohmann::json out = nlohmann::json::array();
  for (const auto& t : c.tails)
    out.push_back(
        {{"histogram", t.histogram}, {"unit", t.unit}, {"a", tail(t.a)}, {"b", tail(t.b)}});
  return out;
}

nlohmann::json profile_changes_json(const Comparison& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : c.profile_changes)
    out.push_back({{"step", p.step},
                   {"cpu", p.cpu},
                   {"function", p.function},
                   {"a", p.a},
                   {"b", p.b},
                   {"cells_a", p.cells_a},
                   {"cells_b", p.cells_b}});
  return out;
}

nlohmann::json latency_traces_json(const Comparison& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : c.latency_traces)
    out.push_back({{"variant", r.side == 0 ? c.variant_a : c.variant_b},
                   {"side", r.side == 0 ? "A" : "B"},
                   {"cell_id", r.cell_id},
                   {"workload", r.workload},
                   {"tracer", r.tracer},
                   {"max_latency_us", jnum(r.max_latency_us)},
                   {"task", r.task},
                   {"cpu", r.cpu ? nlohmann::json(*r.cpu) : nlohmann::json()},
                   {"frames", r.frames},
                   {"file", r.file}});
  return out;
}

nlohmann::json gate_json(const Comparison& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : c.gate)
    out.push_back({{"check", g.check},
                   {"a_pass", g.a_pass},
                   {"a_total", g.a_total},
                   {"b_pass", g.b_pass},
                   {"b_total", g.b_total},
                   {"p", g.p},
                   {"p_min", g.p_min},
                   {"against_b", g.against_b},
                   {"reason", g.reason}});
  return out;
}

nlohmann::json failures_json(const Comparison& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : c.failures)
    out.push_back({{"failure_class", f.failure_class},
                   {"a_cells", f.a_cells},
                   {"a_total", f.a_total},
                   {"b_cells", f.b_cells},
                   {"b_total", f.b_total},
                   {"p", f.p},
                   {"p_min", f.p_min},
                   {"against_b", f.against_b},
                   {"reason", f.reason}});
  return out;
}

nlohmann::json budget_json(const Comparison& c) {
  const ExitBudget& b = c.budget;
  nlohmann::json entries = nlohmann::json::array(), ranges = nlohmann::json::array();
  for (const auto& e : b.entries)
    entries.push_back({{"channel", e.channel},
                       {"name", e.name},
                       {"p", e.p},
                       {"p_min", e.p_min},
                       {"step_down_p", e.adjusted},
                       {"k", e.k},
                       {"rejected", e.rejected},
                       {"reachable", e.reachable}});
  for (const auto& r : b.ranges)
    ranges.push_back({{"row", r.row}, {"bound", r.bound}, {"applied", r.applied}});
  const RetryRow& t = c.retries;
  return {{"alpha", b.alpha},
          {"range_share", b.range_share},
          {"level", b.level},
          {"first_k", b.first_k},
          {"improve_first_k", b.improve_first_k},
          {"entries", entries},
          {"range_rows", ranges},
          {"unreachable_primaries", b.unreachable_primaries},
          {"no_primary_reachable", b.no_primary_reachable},
          {"retries",
           {{"a_cells", t.a_cells},
            {"a_retries", t.a_retries},
            {"b_cells", t.b_cells},
            {"b_retries", t.b_retries},
            {"p", t.p},
            {"p_min", t.p_min},
            {"against_b", t.against_b},
            {"reason", t.reason}}},
          {"secondary_range_rows", c.secondary_range_rows},
          {"secondary_range_bound", c.secondary_range_bound},
          {"calibration_note", c.calibration_note}};
}

nlohmann::json issues_json(const Comparison& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& i : c.issues)
    out.push_back({{"side", i.side},
                   {"variant", i.variant},
                   {"cell_id", i.cell_id},
                   {"status", i.status},
                   {"failure_class",
                    i.failure_class.empty() ? nlohmann::json() : nlohmann::json(i.failure_class)},
                   {"reason", i.reason},
                   {"gate_failures", i.gate_failures},
                   {"kernel_failure", i.kernel_failure},
                   {"against_b", i.against_b}});
  return out;
}

nlohmann::json tally_json(const Comparison& c, bool primary) {
  return {{"improved", c.count(Verdict::improved, primary)},
          {"regressed", c.count(Verdict::regressed, primary)},
          {"changed_below", c.count(Verdict::changed_below, primary)},
          {"no_change", c.count(Verdict::no_change, primary)},
          {"inconclusive", c.count(Verdict::inconclusive, primary)}};
}

nlohmann::json summary_json(const Comparison& c) {
  nlohmann::json missing = nlohmann::json::array();
  for (const MetricRow* r : c.missing_more_in_b())
    missing.push_back(
        {{"metric", r->name}, {"missing_a", r->missing_a}, {"missing_b", r->missing_b}});
  nlohmann::json s = {{"improved", c.count(Verdict::improved)},
                      {"regressed", c.count(Verdict::regressed)},
                      {"changed_below", c.count(Verdict::changed_below)},
                      {"no_change", c.count(Verdict::no_change)},
                      {"inconclusive", c.count(Verdict::inconclusive)},
                      {"primary", tally_json(c, true)},
                      {"secondary", tally_json(c, false)},
                      {"primary_regressions", c.primary_regressions()},
                      {"kernel_failures_b", c.kernel_failures_b()},
                      {"kernel_failure_regressions", c.kernel_failure_regressions()},
                      {"gate_regressions", c.gate_regressions()},
                      {"retry_regressions", c.retry_regressions()},
                      {"new_warnings_in_touched_files", c.new_warnings_in_touched_files()},
                      {"regressions", c.regressions()},
                      {"exit_status", compare_exit_status(c)},
                      {"family",
                       {{"primary", c.family.primary},
                        {"secondary", c.family.secondary},
                        {"relabellings", c.family.relabellings},
                        {"exact", c.family.exact}}},
                      {"missing_more_in_b", missing},
                      {"lines", nlohmann::json::array()}};
  const auto lines = summarize(c);
  s["basis"] = lines.front().text;
  for (const auto& l : lines) s["lines"].push_back(l.detail);
  return s;
}

}  // namespace

nlohmann::json render_json(const Comparison& c) {
  nlohmann::json j = {{"schema", "isolab-comparison"},
                      {"version", 1},
                      {"spec_name", c.spec_name},
                      {"run_a", c.run_a},
                      {"run_b", c.run_b},
                      {"variant_a", c.variant_a},
                      {"variant_b", c.variant_b},
                      {"kernel_a", c.kernel_a},
                      {"kernel_b", c.kernel_b},
                      {"cells_a", c.cells_a},
                      {"cells_b", c.cells_b},
                      {"forced", c.forced},
                      {"differences", c.differences},
                      {"run_notes", run_notes_json(c)},
                      {"settings", settings_to_json(c.settings)},
                      {"stratified", c.stratified},
                      {"hosts", hosts_json(c)},
                      {"pooled_unlike_hosts", c.pooled_unlike_hosts},
                      {"host_differences", c.host_differences},
                      {"version_differences", c.version_differences},
                      {"host_sensitive", c.host_sensitive}};
  j["metrics"] = nlohmann::json::array();
  for (const auto& r : c.metrics) j["metrics"].push_back(metric_json(r, c.settings));
  j["tails"] = tails_json(c);
  j["profile_changes"] = profile_changes_json(c);
  j["latency_traces"] = latency_traces_json(c);
  j["gate"] = gate_json(c);
  j["budgets"] = {{"a", c.budget_a}, {"b", c.budget_b}};
  j["fidelity"] = {{"a", c.fidelity_a}, {"b", c.fidelity_b}};
  j["failures"] = failures_json(c);
  j["budget"] = budget_json(c);
  j["issues"] = issues_json(c);
  j["untrusted"] = nlohmann::json::array();
  for (const auto& u : c.untrusted)
    j["untrusted"].push_back(
        {{"side", u.side}, {"cell_id", u.cell_id}, {"metric", u.metric}, {"reason", u.reason}});
  j["new_build_warnings"] = nullptr;
  if (c.new_warnings) {
    j["new_build_warnings"] = nlohmann::json::array();
    for (const auto& n : *c.new_warnings) {
      nlohmann::json w = build_warning_to_json(n.warning);
      w["in_touched_file"] = n.in_touched_file;
      j["new_build_warnings"].push_back(w);
    }
  }
  j["summary"] = summary_json(c);
  return j;
}

}  // namespace isolab
