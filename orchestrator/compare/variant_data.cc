// Reading one variant of a run into VariantData (extract_variant), and the failure classes and
// build warnings it carries.
#include "compare/variant_data.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "results/cell_facts.h"
#include "results/histogram.h"
#include "results/lenient.h"
#include "results/metric_record.h"
#include "results/result.h"
#include "results/run_facts.h"
#include "results/variant_facts.h"

namespace isolab {

namespace {

// "check: expected X, effective Y (detail)" of a failed gate row.
std::string gate_row_text(const results::GateRow& row) {
  std::string s = (row.check.is_string() ? row.check.get<std::string>() : "?") + ": expected " +
                  results::value_text(row.expected) + ", effective " +
                  results::value_text(row.effective);
  if (row.detail.is_string() && !row.detail.get_ref<const std::string&>().empty())
    s += " (" + row.detail.get<std::string>() + ")";
  return s;
}

}  // namespace

bool is_kernel_failure_class(const std::string& c) {
  static const std::set<std::string> kernel = {"build",   "boot",      "panic", "oops",
                                               "warning", "rcu_stall", "lockup"};
  return kernel.count(c) > 0;
}

std::vector<NewBuildWarning> new_build_warnings(const std::vector<BuildWarning>& a,
                                                const std::vector<BuildWarning>& b,
                                                const std::set<std::string>& touched) {
  auto key = [](const BuildWarning& w) { return std::tie(w.file, w.klass, w.message); };
  std::set<std::tuple<const std::string&, const std::string&, const std::string&>> in_a;
  for (const auto& w : a) in_a.insert(key(w));
  std::vector<NewBuildWarning> out;
  std::set<std::tuple<const std::string&, const std::string&, const std::string&>> listed;
  for (const auto& w : b) {
    if (in_a.count(key(w)) || !listed.insert(key(w)).second) continue;
    out.push_back({w, touched.count(w.file) > 0});
  }
  return out;
}

namespace {

// An invalid or failed cell as compare lists it.
CellIssue cell_issue(const results::CellRecord& c, std::size_t i, const std::string& variant,
                     const std::string& status, bool warmup) {
  CellIssue issue;
  issue.variant = variant;
  issue.cell_id = c.id_or("cell " + std::to_string(i));
  issue.status = status;
  issue.failure_class = c.failure_class_name();
  issue.reason = c.reason.value_or("");
  for (const auto& row : results::gate_rows(c))
    if (!row.pass.value_or(true)) issue.gate_failures.push_back(gate_row_text(row));
  issue.kernel_failure = is_kernel_failure_class(issue.failure_class);
  if (warmup) issue.reason = "(warmup) " + issue.reason;
  return issue;
}

// unit/better/kind of the metric, the same in every cell of the variant.
void check_metric_fields(MetricSamples& s, const results::MetricRecord& m, const std::string& mp) {
  if (s.cell_ids.empty() && s.unit.empty() && s.better.empty() && s.kind.empty()) {
    s.unit = m.unit;
    s.better = m.better;
    s.kind = m.kind;
  } else if (s.better != m.better || s.unit != m.unit || s.kind != m.kind) {
    throw SpecError(mp, "unit/better/kind (" + m.unit + ", " + m.better + ", " + m.kind +
                            ") differ from earlier cells of the variant (" + s.unit + ", " +
                            s.better + ", " + s.kind + ")");
  }
}

// Where a contributing cell's values go.
struct OkCell {
  std::string id;
  std::string accelerator;
  std::string host;
  std::size_t index = 0;  // among the variant's contributing cells
};

void read_cell_metric(const results::MetricEntry& e, const OkCell& cell, VariantData& d) {
  const results::MetricRecord m = results::metric_record(e);
  auto& s = d.metrics[e.name];
  check_metric_fields(s, m, e.pointer);
  std::vector<unsigned> cpus = results::metric_cpus(e);
  if (m.values.empty()) return;
  if (!m.untrustworthy.empty()) {
    d.untrusted.push_back({"", cell.id, e.name, m.untrustworthy});
    return;
  }
  if (s.metric_kind() != MetricKind::timing) results::check_non_negative(m, e.pointer);
  s.values.push_back(m.aggregated());
  s.cell_ids.push_back(cell.id);
  s.hosts.push_back(cell.host);
  s.cpus.push_back(std::move(cpus));
  s.cell_values.push_back(m.slots);
  s.ok_index.push_back(cell.index);
  if (!cell.accelerator.empty()) s.accelerators.insert(cell.accelerator);
  if (!m.source.empty()) s.sources.insert(m.source);
}

void read_ok_cell(const results::CellRecord& c, const std::string& cp, const OkCell& cell,
                  VariantData& d) {
  for (const auto& e : results::metric_entries(c, cp)) read_cell_metric(e, cell, d);
  for (auto& h : results::cell_histograms(c, cp)) {
    merge_histogram(d.histograms[h.name], h.histogram);
    if (!d.histogram_units.count(h.name)) d.histogram_units[h.name] = h.unit;
  }
}

void read_variant_facts(const results::RunResult& run, const std::string& variant, VariantData& d) {
  d.run_id = run.run_id.value_or("");
  d.variant = variant;
  d.spec_overcommit = results::spec_overcommit(run);
  if (const results::VariantRecord* v = run.variant(variant)) {
    d.kernel_release = v->kernel_release.value_or("");
    results::BuildFacts build = results::build_facts(*v, "/variants/" + variant);
    d.build_warnings = std::move(build.warnings);
    d.touched_files = std::move(build.touched_files);
  }
}

void check_variant_named(const results::RunResult& run, const std::string& variant) {
  const auto names = run.variant_names();
  if (std::find(names.begin(), names.end(), variant) != names.end()) return;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw Error("variant '" + variant + "' is not in run " + run.run_id.value_or("(no run_id)") +
              " (variants: " + (list.empty() ? "none" : list) + ")");
}

}  // namespace

namespace {

// Keeps VariantData::insn_counts_unavailable true to its contract over the contributing cells
// in order: set from the first cell, cleared by any cell whose counts were measured.
void note_insn_counts(const results::CellRecord& cell, bool first, VariantData& d) {
  const std::optional<std::string> missing = results::insn_counts_missing(cell);
  if (!missing) {
    d.insn_counts_unavailable.clear();
  } else if (first) {
    d.insn_counts_unavailable = *missing;
  }
}

}  // namespace

namespace {

// The cell's boots that failed as infrastructure: its earlier_attempts (each one such a boot,
// booted again), and the cell itself when it ended failed as infrastructure.
std::size_t infrastructure_failures(const results::CellRecord& c, const std::string& status) {
  std::size_t n = results::earlier_attempts(c);
  if (status == "failed" && c.failure_class_name() == "infrastructure") ++n;
  return n;
}

// The status of a cell of the variant being read: required there.
std::string checked_status(const results::CellRecord& c, const std::string& cp) {
  if (!c.status)
    throw SpecError(cp + "/status", "cell status must be ok, invalid or failed, got (absent)");
  return std::string(results::to_string(*c.status));
}

void note_tool_versions(const results::CellRecord& c, VariantData& d) {
  for (const auto& v : results::tool_versions(c))
    d.tool_versions[v.workload + ": " + v.tool].insert(v.version);
}

// One contributing cell (status ok, not a warm-up) of the variant.
void read_contributing_cell(const results::CellRecord& c, const std::string& cp,
                            const std::string& cell_id, VariantData& d) {
  const std::string acc = c.accelerator.value_or("");
  if (!acc.empty()) d.cell_accelerators.insert(acc);
  const std::optional<results::CellHost> host = results::cell_host(c);
  const std::string host_uri = host ? host->uri : "";
  if (!host_uri.empty()) d.hosts[host_uri] = *host;
  read_ok_cell(c, cp, {cell_id, acc, host_uri, d.cells_ok}, d);
  note_insn_counts(c, d.cells_ok == 0, d);
  note_tool_versions(c, d);
  d.ok_cell_ids.push_back(cell_id);
  d.ok_cell_hosts.push_back(host_uri);
  ++d.cells_ok;
}

}  // namespace

VariantData extract_variant(const results::RunResult& run, const std::string& variant) {
  check_variant_named(run, variant);
  VariantData d;
  read_variant_facts(run, variant, d);
  for (std::size_t i = 0; i < run.cells.size(); ++i) {
    const results::CellRecord& c = run.cells[i];
    if (c.variant.value_or("") != variant) continue;
    const std::string cp = "/cells/" + std::to_string(i);
    const std::string status = checked_status(c, cp);
    const std::string cell_id = c.id_or("cell " + std::to_string(i));
    d.cells.push_back({cell_id, status, c.failure_class_name(), c.reason.value_or(""),
                       c.accelerator.value_or(""), c.overcommitted.value_or(false).value_or(false),
                       c.is_warmup(), infrastructure_failures(c, status)});
    if (status != "ok") {
      d.issues.push_back(cell_issue(c, i, variant, status, c.is_warmup()));
      continue;
    }
    if (!c.is_warmup()) read_contributing_cell(c, cp, cell_id, d);
  }
  return d;
}

VariantData extract_variant(const nlohmann::json& run, const std::string& variant) {
  return extract_variant(results::result_from_json(run), variant);
}

const MetricSamples* find_samples(const VariantData& d, const std::string& metric) {
  const auto it = d.metrics.find(metric);
  return it == d.metrics.end() ? nullptr : &it->second;
}

}  // namespace isolab
