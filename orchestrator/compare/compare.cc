#include "compare/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <tuple>

#include "base/error.h"
#include "cmdline/cpulist.h"
#include "compare/comparable.h"
#include "compare/exit_status.h"
#include "compare/metric_test.h"
#include "compare/verdict_rules.h"
#include "results/cell_facts.h"
#include "results/result.h"
#include "results/run_facts.h"
#include "stats/multiplicity.h"
#include "stats/range_rule.h"

namespace isolab {

namespace {

// Adds the gate rows of one variant's cells to the summary (side 0 = A, 1 = B).
void add_gate_rows(const results::RunResult& run, const std::string& variant, int side,
                   std::vector<GateSummaryRow>& rows) {
  for (const auto& c : run.cells) {
    if (c.variant.value_or("") != variant || c.is_warmup()) continue;
    for (const auto& r : results::gate_rows(c)) {
      if (!r.check.is_string()) continue;
      const std::string check = r.check.get<std::string>();
      auto it = std::find_if(rows.begin(), rows.end(),
                             [&](const GateSummaryRow& g) { return g.check == check; });
      if (it == rows.end()) {
        GateSummaryRow g;
        g.check = check;
        it = rows.insert(rows.end(), g);
      }
      const bool pass = r.pass.value_or(false);
      (side == 0 ? it->a_total : it->b_total)++;
      if (pass) (side == 0 ? it->a_pass : it->b_pass)++;
    }
  }
}

// "madvise_pageout+0x1a/0x40" -> "madvise_pageout".
std::string frame_name(const std::string& f) { return f.substr(0, f.find('+')); }

// Adds the latency traces of one variant's ok, non-warm-up cells (side 0 = A, 1 = B). Fields
// of the wrong type are skipped (the metric, not this summary, is what is tested).
void add_latency_traces(const results::RunResult& run, const std::string& variant, int side,
                        std::vector<LatencyTraceRow>& rows) {
  for (const auto& c : run.cells) {
    if (c.variant.value_or("") != variant || c.is_warmup() || !c.is_ok()) continue;
    for (const auto& t : results::latency_traces(c)) {
      LatencyTraceRow r;
      r.side = side;
      r.cell_id = c.id.value_or("");
      r.workload = t.workload;
      r.tracer = t.tracer;
      r.max_latency_us = t.max_latency_us;
      r.task = t.task;
      r.cpu = t.cpu;
      for (const auto& f : t.switch_frames) r.frames.push_back(frame_name(f));
      r.file = t.file;
      rows.push_back(std::move(r));
    }
  }
}

// The block of a host URI: its index in `hosts`, cells without a host last.
std::size_t host_block(const std::vector<HostSummary>& hosts, const std::string& uri) {
  for (std::size_t h = 0; h < hosts.size(); ++h)
    if (hosts[h].uri == uri) return h;
  return hosts.size();
}

// The values of one row split by host, in the order of `hosts` (cells without a host last).
std::vector<Stratum> row_strata(const MetricRow& row, const VariantData& a, const VariantData& b,
                                const std::vector<HostSummary>& hosts) {
  std::vector<Stratum> strata(hosts.size() + 1);
  for (std::size_t i = 0; i < row.a_values.size(); ++i)
    strata[host_block(hosts, a.ok_cell_hosts[row.a_cells[i]])].a.push_back(row.a_values[i]);
  for (std::size_t i = 0; i < row.b_values.size(); ++i)
    strata[host_block(hosts, b.ok_cell_hosts[row.b_cells[i]])].b.push_back(row.b_values[i]);
  return strata;
}

// ---- rows ----

// The row's values on one side: the cells' aggregates, or the mean of each cell's values on
// `cpus` (cells with only nulls there contribute nothing). Throws isolab::Error naming the cell
// when one of `cpus` is not among its "cpus".
void side_values(const MetricSamples* s, const std::vector<unsigned>& cpus,
                 std::vector<double>& values, std::vector<std::size_t>& cells) {
  if (!s) return;
  for (std::size_t k = 0; k < s->values.size(); ++k) {
    if (cpus.empty()) {
      values.push_back(s->values[k]);
      cells.push_back(s->ok_index[k]);
      continue;
    }
    double sum = 0;
    std::size_t n = 0;
    for (unsigned cpu : cpus) {
      const auto& traced = s->cpus[k];
      const auto at = std::find(traced.begin(), traced.end(), cpu);
      if (at == traced.end() ||
          static_cast<std::size_t>(at - traced.begin()) >= s->cell_values[k].size())
        throw Error("CPU " + std::to_string(cpu) + " is not among the CPUs of its values in cell " +
                    s->cell_ids[k]);
      const double v = s->cell_values[k][static_cast<std::size_t>(at - traced.begin())];
      if (!std::isnan(v)) sum += v, ++n;
    }
    if (n == 0) continue;
    values.push_back(sum / static_cast<double>(n));
    cells.push_back(s->ok_index[k]);
  }
}

MetricRow make_row(const std::string& metric, const VariantData& a, const VariantData& b,
                   const std::vector<unsigned>& cpus) {
  const MetricSamples* sa = find_samples(a, metric);
  const MetricSamples* sb = find_samples(b, metric);
  MetricRow row;
  row.name = cpu_row_name(metric, cpus);
  row.metric = metric;
  row.derived = !cpus.empty();
  const MetricSamples* any = sb ? sb : sa;
  if (any) {
    row.unit = any->unit;
    row.better = any->better;
    row.kind = any->metric_kind();
  }
  std::set<unsigned> traced;
  for (const MetricSamples* s : {sa, sb}) {
    if (!s) continue;
    row.tcg = row.tcg || s->accelerators.count("tcg") > 0;
    for (const auto& cell : s->cpus) traced.insert(cell.begin(), cell.end());
  }
  row.cpus = cpus.empty() ? std::vector<unsigned>(traced.begin(), traced.end()) : cpus;
  side_values(sa, cpus, row.a_values, row.a_cells);
  side_values(sb, cpus, row.b_values, row.b_cells);
  row.missing_a = a.cells_ok - row.a_values.size();
  row.missing_b = b.cells_ok - row.b_values.size();
  return row;
}

void check_agreement(const std::string& name, const MetricSamples* sa, const MetricSamples* sb) {
  if (!sa || !sb) return;
  if (sa->unit == sb->unit && sa->better == sb->better && sa->metric_kind() == sb->metric_kind())
    return;
  throw Error("metric " + name + ": A and B disagree on unit/better/kind (A: " + sa->unit + ", " +
              sa->better + ", " + metric_kind_name(sa->metric_kind()) + "; B: " + sb->unit + ", " +
              sb->better + ", " + metric_kind_name(sb->metric_kind()) + ")");
}

// The metric's row and, for a count metric traced on two or more CPUs, one row per CPU.
void add_metric_rows(const std::string& name, const VariantData& a, const VariantData& b,
                     std::vector<MetricRow>& rows) {
  check_agreement(name, find_samples(a, name), find_samples(b, name));
  rows.push_back(make_row(name, a, b, {}));
  const MetricRow& whole = rows.back();
  if (whole.kind != MetricKind::count || whole.cpus.size() < 2) return;
  const std::vector<unsigned> cpus = whole.cpus;
  for (unsigned cpu : cpus) rows.push_back(make_row(name, a, b, {cpu}));
}

// Marks (or adds) the row a declared primary metric decides.
void add_primary(const PrimaryMetric& p, const VariantData& a, const VariantData& b,
                 std::vector<MetricRow>& rows) {
  const std::string name = p.row_name();
  auto it =
      std::find_if(rows.begin(), rows.end(), [&](const MetricRow& r) { return r.name == name; });
  const bool measured = find_samples(a, p.metric) || find_samples(b, p.metric);
  // An instruction metric (insns_per_*, wakeup_insns_*: the plugin's, workload/insn_cell.h)
  // of runs that could not count instructions (KVM) is reported as not measured, not an error.
  if (!measured && p.metric.find("insns_") != std::string::npos &&
      !a.insn_counts_unavailable.empty() && !b.insn_counts_unavailable.empty()) {
    MetricRow row;
    row.name = name;
    row.metric = p.metric;
    row.kind = MetricKind::instructions;
    row.primary = true;
    row.declared = p;
    row.not_measured = a.insn_counts_unavailable;
    rows.push_back(std::move(row));
    return;
  }
  if (!measured && a.cells_ok > 0 && b.cells_ok > 0)
    throw Error("primary metric " + p.metric + " (" + p.source +
                ") is in no contributing cell of either variant");
  if (it == rows.end()) {
    try {
      rows.push_back(make_row(p.metric, a, b, p.cpus));
    } catch (const Error& e) {
      if (!p.source.empty() && p.source[0] == '/') throw SpecError(p.source + "/cpus", e.what());
      throw Error(p.source + ": " + e.what());
    }
    it = rows.end() - 1;
  }
  it->primary = true;
  it->declared = p;
}

std::vector<MetricRow> build_rows(const VariantData& a, const VariantData& b,
                                  const CompareSettings& settings) {
  std::set<std::string> names;
  for (const auto& [n, s] : a.metrics) names.insert(n);
  for (const auto& [n, s] : b.metrics) names.insert(n);
  std::vector<MetricRow> rows;
  for (const auto& name : names) add_metric_rows(name, a, b, rows);
  for (const auto& p : settings.primary) add_primary(p, a, b, rows);
  std::sort(rows.begin(), rows.end(),
            [](const MetricRow& x, const MetricRow& y) { return x.name < y.name; });
  return rows;
}

// ---- tests and verdicts ----

MetricInfo row_info(const MetricRow& row) {
  return {row.metric, row.unit, row.kind, better_from_string(row.better), row.tcg};
}

void test_row(MetricRow& row, const VariantData& a, const VariantData& b, const Comparison& cmp,
              const CompareSettings& settings) {
  if (!row.not_measured.empty()) return;
  const std::vector<Stratum> strata = row_strata(row, a, b, cmp.hosts);
  const bool with_ci = !settings.exit_status_only;
  if (cmp.stratified) {
    row.test = test_metric_stratified(strata, settings, with_ci, row.kind);
    for (std::size_t h = 0; h < cmp.hosts.size(); ++h) {
      HostMetricRow hr;
      hr.host = cmp.hosts[h].uri;
      hr.test = test_metric(strata[h].a, strata[h].b, settings, false, row.kind);
      hr.change_pct = 100.0 * hr.test.change;
      hr.verdict = decide_metric_verdict(hr.test, row_info(row), settings);
      row.per_host.push_back(std::move(hr));
    }
  } else {
    row.test = test_metric(row.a_values, row.b_values, settings, with_ci, row.kind);
  }
  if (row.primary)
    add_one_sided_test(row.test, strata, row.declared->higher_is_bad, settings,
                       row.declared->ranks);
  row.change_pct = 100.0 * row.test.change;
  if (row.test.ci) {
    row.ci_low_pct = 100.0 * row.test.ci->low;
    row.ci_high_pct = 100.0 * row.test.ci->high;
  }
}

// The range rule (stats/range_rule.h) on the rows of instruction metrics with a calibrated
// jitter: every primary such row (its share is declared: compare/budget.h), and the secondary
// ones when their two-sided bounds sum to at most alpha.
void add_range_rules(Comparison& cmp, const CompareSettings& settings) {
  std::vector<MetricRow*> secondary;
  double bound = 0;
  for (auto& r : cmp.metrics) {
    const MetricCalibrationFacts* f = settings.calibrated(r.metric);
    if (r.kind != MetricKind::instructions || !f || !f->jitter || !r.not_measured.empty()) continue;
    RangeRule rule = range_rule(r.a_values, r.b_values, *f->jitter, f->runs);
    if (r.primary) {
      r.test.range = rule;
      continue;
    }
    bound += 2 * rule.bound;
    r.test.range = rule;
    secondary.push_back(&r);
  }
  if (bound > settings.alpha) {
    for (MetricRow* r : secondary) r->test.range.reset();
    return;
  }
  cmp.secondary_range_rows = secondary.size();
  cmp.secondary_range_bound = bound;
}

// The primaries' intervals at the budget's level: one-sided bounds at 1 - level / K each.
void primary_intervals(Comparison& cmp, const VariantData& a, const VariantData& b,
                       const CompareSettings& settings) {
  if (settings.exit_status_only) return;
  const double per_side = cmp.budget.level / static_cast<double>(cmp.budget.first_k);
  for (auto& row : cmp.metrics) {
    if (!row.primary || !row.not_measured.empty()) continue;
    set_interval(row.test, row_strata(row, a, b, cmp.hosts), settings, 1 - 2 * per_side);
    row.ci_low_pct.reset();
    row.ci_high_pct.reset();
    if (row.test.ci) {
      row.ci_low_pct = 100.0 * row.test.ci->low;
      row.ci_high_pct = 100.0 * row.test.ci->high;
    }
  }
}

constexpr std::uint64_t kRelabelSeed = 0x7f4a7c159e3779b9ULL;

// Westfall-Young min-P over the secondary rows with values on both sides.
void adjust_secondary(Comparison& cmp, const VariantData& a, const VariantData& b,
                      const CompareSettings& settings) {
  if (settings.exit_status_only) return;
  RelabelDesign design;
  for (const VariantData* d : {&a, &b})
    for (const auto& uri : d->ok_cell_hosts) {
      design.in_a.push_back(d == &a);
      design.block.push_back(cmp.stratified ? host_block(cmp.hosts, uri) : 0);
    }
  std::vector<MetricRow*> rows;
  std::vector<FamilyMetric> family;
  for (auto& r : cmp.metrics) {
    if (r.primary || r.a_values.empty() || r.b_values.empty()) continue;
    FamilyMetric m;
    m.values.assign(design.in_a.size(), std::numeric_limits<double>::quiet_NaN());
    for (std::size_t i = 0; i < r.a_values.size(); ++i) m.values[r.a_cells[i]] = r.a_values[i];
    for (std::size_t i = 0; i < r.b_values.size(); ++i)
      m.values[a.cells_ok + r.b_cells[i]] = r.b_values[i];
    m.score = r.kind == MetricKind::timing ? StratumScore::midranks : StratumScore::values;
    rows.push_back(&r);
    family.push_back(std::move(m));
  }
  if (rows.empty()) return;
  const Relabellings labels =
      relabellings(design, settings.relabel_exact_limit, settings.relabel_resamples,
                   settings.seed ^ kRelabelSeed);
  const FamilyResult f = westfall_young_min_p(design, family, labels);
  for (std::size_t k = 0; k < rows.size(); ++k)
    rows[k]->test.family_p = std::max(f.adjusted_p[k], rows[k]->test.p_value());
  cmp.family.secondary = rows.size();
  cmp.family.relabellings = f.relabellings;
  cmp.family.exact = f.exact;
}

void decide_row(MetricRow& row, const CompareSettings& settings) {
  if (!row.not_measured.empty()) {
    row.verdict = {Verdict::inconclusive, "not measured: " + row.not_measured};
    return;
  }
  const MetricInfo info = row_info(row);
  row.verdict = row.primary ? decide_primary_verdict(row.test, info, *row.declared, settings)
                            : decide_metric_verdict(row.test, info, settings);
  if (row.a_values.empty() != row.b_values.empty() && row.missing_a + row.missing_b > 0)
    row.verdict.reason = std::string("metric missing in ") + (row.a_values.empty() ? "A" : "B");
}

bool host_sensitive(const VariantData& a, const VariantData& b) {
  if (a.spec_overcommit || b.spec_overcommit) return true;
  for (const VariantData* d : {&a, &b})
    for (const auto& c : d->cells)
      if (c.accelerator == "tcg" || c.overcommitted) return true;
  return false;
}

// Kernel failures, the gate and the retries as rates (their p and smallest p).
void weigh_outcomes(Comparison& cmp, const VariantData& a, const VariantData& b) {
  cmp.host_sensitive = host_sensitive(a, b);
  cmp.failures = weigh_failures(a.cells, b.cells);
  cmp.retries = weigh_retries(a.cells, b.cells);
  weigh_gate(cmp.gate);
}

// Which B issues count against B, once the budget has weighed the failure classes.
void mark_issues(Comparison& cmp, const VariantData& b) {
  for (auto& issue : cmp.issues) {
    if (issue.side != "B" || !issue.kernel_failure) continue;
    const auto cell = std::find_if(b.cells.begin(), b.cells.end(),
                                   [&](const CellRecord& c) { return c.id == issue.cell_id; });
    const std::string klass = cell == b.cells.end() ? "" : failure_weight_class(*cell);
    for (const auto& f : cmp.failures)
      if (f.failure_class == klass) issue.against_b = f.against_b;
  }
}

// The header of a comparison: ids, variants, kernels, key differences (refused unless force).
Comparison comparison_header(const results::RunResult& run_a, const std::string& variant_a,
                             const results::RunResult& run_b, const std::string& variant_b,
                             const VariantData& a, const VariantData& b, bool force) {
  Comparison cmp;
  cmp.run_a = run_a.run_id.value_or("");
  cmp.run_b = run_b.run_id.value_or("");
  cmp.same_run = (&run_a == &run_b) || (!cmp.run_a.empty() && cmp.run_a == cmp.run_b);
  std::vector<std::string> diffs;
  if (!cmp.same_run)
    diffs = comparison_key_differences(results::run_facts(run_a), results::run_facts(run_b));
  if (!a.cell_accelerators.empty() && !b.cell_accelerators.empty() &&
      a.cell_accelerators != b.cell_accelerators) {
    auto join = [](const std::set<std::string>& s) {
      std::string out;
      for (const auto& x : s) out += (out.empty() ? "" : ",") + x;
      return out;
    };
    diffs.push_back("cells.accelerator: A=" + join(a.cell_accelerators) +
                    ", B=" + join(b.cell_accelerators));
  }
  for (auto& d : metric_source_differences(a, b)) diffs.push_back(std::move(d));
  if (!diffs.empty()) {
    if (!force) throw ComparisonRefused(diffs);
    cmp.forced = true;
    cmp.differences = diffs;
  }
  cmp.spec_name = run_b.spec_name.value_or(run_a.spec_name.value_or(""));
  cmp.variant_a = variant_a;
  cmp.variant_b = variant_b;
  cmp.kernel_a = a.kernel_release;
  cmp.kernel_b = b.kernel_release;
  cmp.cells_a = a.cells_ok;
  cmp.cells_b = b.cells_ok;
  cmp.version_differences = tool_version_differences(a, b);
  return cmp;
}

void add_tails(Comparison& cmp, VariantData& a, VariantData& b) {
  std::set<std::string> hnames;
  for (const auto& [n, h] : a.histograms) hnames.insert(n);
  for (const auto& [n, h] : b.histograms) hnames.insert(n);
  for (const auto& n : hnames) {
    TailRow t;
    t.histogram = n;
    t.unit = b.histogram_units.count(n) ? b.histogram_units[n] : a.histogram_units[n];
    if (a.histograms.count(n)) t.a = histogram_tail(a.histograms[n]);
    if (b.histograms.count(n)) t.b = histogram_tail(b.histograms[n]);
    cmp.tails.push_back(std::move(t));
  }
}

// The metric rows built and tested; the failures, gate and retries weighed; the exit budget
// spent; the secondary family adjusted; every row decided; then the tails.
void test_and_decide(Comparison& cmp, VariantData& a, VariantData& b,
                     const CompareSettings& settings) {
  cmp.metrics = build_rows(a, b, settings);
  for (auto& row : cmp.metrics) test_row(row, a, b, cmp, settings);
  add_range_rules(cmp, settings);
  weigh_outcomes(cmp, a, b);
  apply_exit_budget(cmp);
  primary_intervals(cmp, a, b, settings);
  cmp.family.primary = static_cast<std::size_t>(
      std::count_if(cmp.budget.entries.begin(), cmp.budget.entries.end(),
                    [](const BudgetEntry& e) { return e.channel == "primary"; }));
  adjust_secondary(cmp, a, b, settings);
  for (auto& row : cmp.metrics) decide_row(row, settings);
  add_tails(cmp, a, b);
}

void add_issues(Comparison& cmp, VariantData& a, VariantData& b) {
  for (auto* side : {&a, &b}) {
    for (auto& i : side->issues) {
      i.side = side == &a ? "A" : "B";
      cmp.issues.push_back(std::move(i));
    }
    for (auto& u : side->untrusted) {
      u.side = side == &a ? "A" : "B";
      cmp.untrusted.push_back(std::move(u));
    }
  }
}

}  // namespace

Comparison compare_runs(const results::RunResult& ra, const std::string& variant_a,
                        const results::RunResult& rb, const std::string& variant_b,
                        const CompareSettings& settings, bool force) {
  const bool same = (&ra == &rb) || (!ra.run_id.value_or("").empty() && ra.run_id == rb.run_id);
  if (same && variant_a == variant_b) {
    throw Error("A and B are the same variant '" + variant_a + "' of the same run");
  }
  VariantData a = extract_variant(ra, variant_a);
  VariantData b = extract_variant(rb, variant_b);
  Comparison cmp = comparison_header(ra, variant_a, rb, variant_b, a, b, force);
  add_gate_rows(ra, variant_a, 0, cmp.gate);
  add_gate_rows(rb, variant_b, 1, cmp.gate);
  add_latency_traces(ra, variant_a, 0, cmp.latency_traces);
  add_latency_traces(rb, variant_b, 1, cmp.latency_traces);
  cmp.budget_a = results::recorded_budget_verdict(ra, variant_a);
  cmp.budget_b = results::recorded_budget_verdict(rb, variant_b);
  cmp.fidelity_a = results::fidelity_summary(ra);
  cmp.fidelity_b = results::fidelity_summary(rb);
  cmp.settings = settings;
  cmp.calibration_note =
      check_calibration(cmp.settings, results::run_facts(ra), results::run_facts(rb));
  if (a.build_warnings && b.build_warnings)
    cmp.new_warnings = new_build_warnings(*a.build_warnings, *b.build_warnings, b.touched_files);
  cmp.hosts = host_summaries(a, b);
  cmp.stratified = cmp.hosts.size() >= 2;
  if (auto hd = host_fingerprint_differences(cmp.hosts, a, b); !hd.empty()) {
    if (!settings.pool_hosts) throw ComparisonRefused(hd, "--pool-hosts");
    cmp.pooled_unlike_hosts = true;
    cmp.host_differences = hd;
  }
  test_and_decide(cmp, a, b, cmp.settings);
  cmp.profile_changes = profile_changes(ra, variant_a, rb, variant_b);
  add_issues(cmp, a, b);
  mark_issues(cmp, b);
  return cmp;
}

Comparison compare_runs(const nlohmann::json& run_a, const std::string& variant_a,
                        const nlohmann::json& run_b, const std::string& variant_b,
                        const CompareSettings& settings, bool force) {
  const results::RunResult ra = results::result_from_json(run_a);
  if (&run_a == &run_b) return compare_runs(ra, variant_a, ra, variant_b, settings, force);
  return compare_runs(ra, variant_a, results::result_from_json(run_b), variant_b, settings, force);
}

Comparison compare_run_variants(const results::RunResult& r, const CompareSettings& settings) {
  if (!r.variant_order || r.variant_order->size() < 2) {
    throw SpecError("/variant_order",
                    "a one-run comparison needs variant_order with two variant names");
  }
  return compare_runs(r, (*r.variant_order)[0], r, (*r.variant_order)[1], settings, false);
}

Comparison compare_run_variants(const nlohmann::json& run, const CompareSettings& settings) {
  return compare_run_variants(results::result_from_json(run), settings);
}

}  // namespace isolab
