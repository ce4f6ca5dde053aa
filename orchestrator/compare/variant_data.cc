// Reading one variant of a run into VariantData (extract_variant), and the failure classes and
// build warnings it carries.
#include "compare/variant_data.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/json_text.h"
#include "cmdline/cpulist.h"
#include "compare/json_fields.h"
#include "results/result.h"

namespace isolab {

using namespace compare_detail;

namespace {

double aggregate(const std::string& how, const std::vector<double>& v) {
  if (how == "max") return *std::max_element(v.begin(), v.end());
  if (how == "min") return *std::min_element(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  if (how == "sum") return sum;
  return sum / static_cast<double>(v.size());
}

// The metric's "kind": "count", "timing", or "" when absent or null.
std::string metric_kind_field(const nlohmann::json& m, const std::string& mp) {
  const nlohmann::json k = field(m, "kind");
  if (k.is_null()) return "";
  if (!k.is_string() || (k != "count" && k != "timing" && k != "instructions")) {
    throw SpecError(
        mp + "/kind",
        "metric kind must be \"count\", \"timing\" or \"instructions\", got " + json_text(k));
  }
  return k.get<std::string>();
}

// The metric's "cpus" (traced CPU numbers), empty when absent or null.
std::vector<unsigned> metric_cpus(const nlohmann::json& m, const std::string& mp) {
  const nlohmann::json c = field(m, "cpus");
  std::vector<unsigned> cpus;
  if (c.is_null()) return cpus;
  if (!c.is_array()) throw SpecError(mp + "/cpus", "cpus must be an array of CPU numbers");
  for (std::size_t k = 0; k < c.size(); ++k) {
    const auto& v = c[k];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
        v.get<std::int64_t>() >= static_cast<std::int64_t>(kMaxCpus)) {
      throw SpecError(mp + "/cpus/" + std::to_string(k), "a CPU number must be an integer in 0.." +
                                                             std::to_string(kMaxCpus - 1) +
                                                             ", got " + json_text(v));
    }
    cpus.push_back(static_cast<unsigned>(v.get<std::int64_t>()));
  }
  return cpus;
}

// Counts and event rates cannot be negative: the values array of a count metric is checked
// before it is aggregated. `raw` is the JSON array (for the index of the bad value).
void check_count_values(const std::vector<double>& values, const nlohmann::json& raw,
                        const std::string& mp) {
  if (std::all_of(values.begin(), values.end(), [](double v) { return v >= 0; })) return;
  for (std::size_t k = 0; k < raw.size(); ++k) {
    if (raw[k].is_number() && raw[k].get<double>() < 0) {
      throw SpecError(
          mp + "/values/" + std::to_string(k),
          "a count, event rate or instruction count must be >= 0, got " + json_text(raw[k]));
    }
  }
}

std::string gate_row_text(const nlohmann::json& row) {
  std::string s = str_or(row, "check", "?") + ": expected " + value_text(field(row, "expected")) +
                  ", effective " + value_text(field(row, "effective"));
  const std::string detail = str_or(row, "detail");
  if (!detail.empty()) s += " (" + detail + ")";
  return s;
}

}  // namespace

bool is_kernel_failure_class(const std::string& c) {
  static const std::set<std::string> kernel = {"build",   "boot",      "panic", "oops",
                                               "warning", "rcu_stall", "lockup"};
  return kernel.count(c) > 0;
}

namespace {

// variants.<v>.build_warnings / touched_files (written by pipeline/run.cc).
void read_build_facts(const results::VariantRecord& v, const std::string& ptr, VariantData& d) {
  if (const auto& w = v.build_warnings; w && w->is_array()) {
    d.build_warnings.emplace();
    for (std::size_t i = 0; i < w->size(); ++i) {
      try {
        d.build_warnings->push_back(build_warning_from_json((*w)[i]));
      } catch (const Error& e) {
        throw SpecError(ptr + "/build_warnings/" + std::to_string(i), e.what());
      }
    }
  }
  if (const auto& t = v.touched_files; t && t->is_array())
    for (const auto& f : *t)
      if (f.is_string()) d.touched_files.insert(f.get<std::string>());
}

}  // namespace

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
  if (const auto& g = c.field("gate"); g.is_object()) {
    if (auto rows = g.find("rows"); rows != g.end() && rows->is_array()) {
      for (const auto& row : *rows) {
        if (row.is_object() && !bool_or(row, "pass", true)) {
          issue.gate_failures.push_back(gate_row_text(row));
        }
      }
    }
  }
  issue.kernel_failure = is_kernel_failure_class(issue.failure_class);
  if (warmup) issue.reason = "(warmup) " + issue.reason;
  return issue;
}

// The finite values of a metric's "values" array (nulls skipped) and the array itself with NaN
// for null (parallel to "cpus").
void read_values(const nlohmann::json& m, const std::string& mp, std::vector<double>& values,
                 std::vector<double>& raw) {
  auto vs = m.find("values");
  if (vs == m.end() || !vs->is_array()) {
    throw SpecError(mp + "/values", "metric values must be an array");
  }
  for (std::size_t k = 0; k < vs->size(); ++k) {
    const auto& v = (*vs)[k];
    if (v.is_null()) {  // missing (e.g. usr+sys rate not accounted)
      raw.push_back(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    if (!v.is_number() || !std::isfinite(v.get<double>())) {
      throw SpecError(mp + "/values/" + std::to_string(k),
                      "metric value must be a finite number or null, got " + value_text(v));
    }
    values.push_back(v.get<double>());
    raw.push_back(values.back());
  }
}

// unit/better/kind of the metric, the same in every cell of the variant.
void check_metric_fields(MetricSamples& s, const nlohmann::json& m, const std::string& mp) {
  const std::string unit = str_or(m, "unit");
  const std::string better = str_or(m, "better");
  const std::string kind = metric_kind_field(m, mp);
  if (s.cell_ids.empty() && s.unit.empty() && s.better.empty() && s.kind.empty()) {
    s.unit = unit;
    s.better = better;
    s.kind = kind;
  } else if (s.better != better || s.unit != unit || s.kind != kind) {
    throw SpecError(mp, "unit/better/kind (" + unit + ", " + better + ", " + kind +
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

void read_cell_metric(const std::string& name, const nlohmann::json& m, const std::string& mp,
                      const OkCell& cell, VariantData& d) {
  if (!m.is_object()) throw SpecError(mp, "metric must be an object");
  const nlohmann::json agg = field(m, "aggregate");
  const std::string how = agg.is_null() ? "mean" : str_or(m, "aggregate", "?");
  if (how != "mean" && how != "max" && how != "min" && how != "sum") {
    throw SpecError(mp + "/aggregate",
                    "aggregate must be mean, max, min or sum, got " + json_text(agg));
  }
  std::vector<double> values, raw;
  read_values(m, mp, values, raw);
  auto& s = d.metrics[name];
  check_metric_fields(s, m, mp);
  std::vector<unsigned> cpus = metric_cpus(m, mp);
  if (values.empty()) return;
  if (const std::string why = str_or(m, "untrustworthy"); !why.empty()) {
    d.untrusted.push_back({"", cell.id, name, why});
    return;
  }
  if (s.metric_kind() != MetricKind::timing) check_count_values(values, m["values"], mp);
  s.values.push_back(aggregate(how, values));
  s.cell_ids.push_back(cell.id);
  s.hosts.push_back(cell.host);
  s.cpus.push_back(std::move(cpus));
  s.cell_values.push_back(std::move(raw));
  s.ok_index.push_back(cell.index);
  if (!cell.accelerator.empty()) s.accelerators.insert(cell.accelerator);
  if (const std::string source = str_or(m, "source"); !source.empty()) s.sources.insert(source);
}

// The reader (results/result.h) has checked that metrics and histograms are objects or null.
void read_ok_cell(const results::CellRecord& c, const std::string& cp, const OkCell& cell,
                  VariantData& d) {
  if (const auto& ms = c.metrics; ms && !ms->is_null()) {
    for (const auto& [name, m] : ms->items())
      read_cell_metric(name, m, cp + "/metrics/" + json_pointer_token(name), cell, d);
  }
  if (const auto& hs = c.histograms; hs && !hs->is_null()) {
    for (const auto& [name, h] : hs->items()) {
      const std::string hp = cp + "/histograms/" + json_pointer_token(name);
      merge_histogram(d.histograms[name], histogram_from_json(h, hp));
      if (!d.histogram_units.count(name)) d.histogram_units[name] = str_or(h, "unit", "us");
    }
  }
}

void read_variant_facts(const results::RunResult& run, const std::string& variant, VariantData& d) {
  d.run_id = run.run_id.value_or("");
  d.variant = variant;
  d.spec_overcommit = bool_or(run.spec.value_or(nullptr), "overcommit", false);
  if (const results::VariantRecord* v = run.variant(variant)) {
    d.kernel_release = v->kernel_release.value_or("");
    read_build_facts(*v, "/variants/" + variant, d);
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
  const nlohmann::json& ic = cell.field("insn_counts");
  const bool unavailable = ic.is_object() && field(ic, "source").is_null();
  if (!unavailable) {
    d.insn_counts_unavailable.clear();
  } else if (first) {
    d.insn_counts_unavailable = str_or(ic, "reason", "no instruction counts recorded");
  }
}

}  // namespace

namespace {

// The cell's boots that failed as infrastructure: its earlier_attempts (each one such a boot,
// booted again), and the cell itself when it ended failed as infrastructure.
std::size_t infrastructure_failures(const results::CellRecord& c, const std::string& status) {
  const nlohmann::json& earlier = c.field("earlier_attempts");
  std::size_t n = earlier.is_array() ? earlier.size() : 0;
  if (status == "failed" && c.failure_class_name() == "infrastructure") ++n;
  return n;
}

// The status of a cell of the variant being read: required there.
std::string checked_status(const results::CellRecord& c, const std::string& cp) {
  if (!c.status)
    throw SpecError(cp + "/status", "cell status must be ok, invalid or failed, got (absent)");
  return std::string(results::to_string(*c.status));
}

// cells[].tool_versions ({"<workload>": {"<tool>": "<version>"}}); other shapes are skipped.
void note_tool_versions(const nlohmann::json& versions, VariantData& d) {
  if (!versions.is_object()) return;
  for (const auto& [workload, tools] : versions.items())
    if (tools.is_object())
      for (const auto& [tool, version] : tools.items())
        if (version.is_string()) d.tool_versions[workload + ": " + tool].insert(version);
}

// One contributing cell (status ok, not a warm-up) of the variant.
void read_contributing_cell(const results::CellRecord& c, const std::string& cp,
                            const std::string& cell_id, VariantData& d) {
  const std::string acc = c.accelerator.value_or("");
  if (!acc.empty()) d.cell_accelerators.insert(acc);
  const nlohmann::json& host = c.field("host");
  const std::string host_uri = str_or(host, "uri");
  if (!host_uri.empty()) d.hosts[host_uri] = host;
  read_ok_cell(c, cp, {cell_id, acc, host_uri, d.cells_ok}, d);
  note_insn_counts(c, d.cells_ok == 0, d);
  note_tool_versions(c.field("tool_versions"), d);
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

}  // namespace isolab
