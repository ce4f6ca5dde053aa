#include "results/run_facts.h"

#include <algorithm>
#include <set>

#include "results/host.h"
#include "results/lenient.h"

namespace isolab::results {

namespace {

std::vector<SpecWorkload> workloads_of(const nlohmann::json& spec) {
  std::vector<SpecWorkload> out;
  const nlohmann::json& wls = field(spec, "workloads");
  if (!wls.is_array()) return out;
  for (const auto& w : wls)
    out.push_back({field(w, "name"), field(w, "tool"), field(w, "imported") == true});
  return out;
}

std::optional<std::vector<LibvirtHost>> hosts_of(const nlohmann::json& hosts) {
  if (!hosts.is_array()) return std::nullopt;
  std::vector<LibvirtHost> out;
  for (const auto& h : hosts)
    out.push_back({field(h, "error") == nullptr, field(h, "cpu_model"), field(h, "cpus"),
                   field(h, "hypervisor"), field(h, "hypervisor_version")});
  return out;
}

ComparisonKey key_of(const nlohmann::json& key) {
  ComparisonKey out;
  for (const auto& [name, value] : key.items()) out.emplace(name, value);
  return out;
}

RunFacts facts_of(const nlohmann::json& spec, const nlohmann::json& host,
                  const nlohmann::json& hosts, const nlohmann::json& key) {
  RunFacts f;
  if (key.is_object()) f.comparison_key = key_of(key);
  f.workloads = workloads_of(spec);
  for (const char* k : kHostFingerprintFields) f.host_fingerprint.emplace_back(k, field(host, k));
  f.host_cpu_model = field(host, "cpu_model");
  f.hosts = hosts_of(hosts);
  return f;
}

const nlohmann::json& or_null(const std::optional<nlohmann::json>& j) {
  static const nlohmann::json null;
  return j ? *j : null;
}

const nlohmann::json& cells_of(const nlohmann::json& doc) { return field(doc, "cells"); }

}  // namespace

RunFacts run_facts(const nlohmann::json& doc) {
  return facts_of(field(doc, "spec"), field(doc, "host"), field(doc, "hosts"),
                  field(doc, "comparison_key"));
}

RunFacts run_facts(const RunResult& r) {
  return facts_of(or_null(r.spec), or_null(r.host), field(r.rest, "hosts"),
                  or_null(r.comparison_key));
}

std::string run_accelerator(const RunResult& r) {
  const std::string host = str_or(or_null(r.host), "accelerator");
  return host.empty() ? str_or(or_null(r.comparison_key), "accelerator") : host;
}

bool spec_overcommit(const RunResult& r) { return bool_or(or_null(r.spec), "overcommit", false); }

std::vector<std::pair<std::string, std::string>> host_fields(const RunResult& r) {
  std::vector<std::pair<std::string, std::string>> out;
  if (r.host && r.host->is_object())
    for (const auto& [k, v] : r.host->items()) out.emplace_back(k, scalar_text(v));
  return out;
}

std::string accelerator_reason(const RunResult& r) {
  return scalar_text(field(or_null(r.host), "accelerator_reason"));
}

std::vector<FidelityFact> fidelity_facts(const RunResult& r) {
  std::vector<FidelityFact> out;
  const nlohmann::json& rows = field(r.rest, "fidelity");
  if (!rows.is_array()) return out;
  for (const auto& row : rows)
    if (row.is_object())
      out.push_back({str_or(row, "fact"), str_or(row, "customer"), str_or(row, "guest"),
                     str_or(row, "fidelity"), str_or(row, "why")});
  return out;
}

std::string fidelity_summary(const RunResult& r) {
  static constexpr std::pair<const char*, bool> kGroups[] = {
      {"same", false}, {"scaled", true}, {"not reproduced", true}};
  const std::vector<FidelityFact> rows = fidelity_facts(r);
  std::string out;
  for (const auto& [fidelity, named] : kGroups) {
    std::size_t n = 0;
    std::string facts;
    for (const auto& row : rows)
      if (row.fidelity == fidelity) {
        ++n;
        facts += (facts.empty() ? "" : ", ") + row.fact;
      }
    if (n == 0) continue;
    const char* noun = !out.empty() ? " " : n == 1 ? " fact " : " facts ";
    out += (out.empty() ? "" : ", ") + std::to_string(n) + noun +
           (named ? fidelity + std::string(" (") + facts + ")" : std::string("the ") + fidelity);
  }
  return out;
}

std::string recorded_budget_verdict(const RunResult& r, const std::string& variant) {
  return str_or(field(field(r.rest, "budgets"), "variants"), variant.c_str());
}

double SpecWorkloads::duration_s(const std::string& name) const {
  double window_s = 0;
  for (const auto& w : list)
    if (w.is_object() && w.value("name", "") == name) window_s = w.value("duration_s", 0.0);
  return window_s;
}

SpecWorkloads spec_workloads(const RunResult& r) {
  return {r.spec.value_or(nlohmann::json::object()).value("workloads", nlohmann::json::array())};
}

std::string run_id_of(const nlohmann::json& doc) { return str_or(doc, "run_id"); }

std::string run_id_or(const nlohmann::json& doc, const std::string& fallback) {
  return doc.value("run_id", fallback);
}

std::vector<std::string> variant_order_of(const nlohmann::json& doc) {
  std::vector<std::string> v;
  const nlohmann::json& order = field(doc, "variant_order");
  if (order.is_array())
    for (const auto& x : order)
      if (x.is_string()) v.push_back(x.get<std::string>());
  return v;
}

std::optional<std::pair<std::string, std::string>> compared_variants(const nlohmann::json& doc) {
  const nlohmann::json& order = field(doc, "variant_order");
  if (!order.is_array() || order.size() < 2 || !order[0].is_string() || !order[1].is_string())
    return std::nullopt;
  return std::make_pair(order[0].get<std::string>(), order[1].get<std::string>());
}

bool names_variant(const nlohmann::json& doc, const std::string& variant) {
  const auto order = variant_order_of(doc);
  return std::find(order.begin(), order.end(), variant) != order.end() ||
         records_variant(doc, variant);
}

bool records_variant(const nlohmann::json& doc, const std::string& variant) {
  const nlohmann::json& variants = field(doc, "variants");
  return variants.is_object() && variants.contains(variant);
}

bool has_cells(const nlohmann::json& doc) { return cells_of(doc).is_array(); }

std::vector<CellLabel> cell_labels(const nlohmann::json& doc) {
  std::vector<CellLabel> out;
  const nlohmann::json& cells = cells_of(doc);
  if (!cells.is_array()) return out;
  for (const auto& c : cells)
    out.push_back({str_or(c, "variant"), field(c, "warmup") == true,
                   str_or(field(c, "host"), "uri"), str_or(c, "block"), str_or(c, "status")});
  return out;
}

ResumeFacts resume_facts(const nlohmann::json& doc) {
  ResumeFacts f;
  f.spec_sha256 = str_or(doc, "spec_sha256");
  if (const nlohmann::json& seed = field(field(doc, "boot_order"), "seed");
      seed.is_number_unsigned())
    f.boot_order_seed = seed.get<std::uint64_t>();
  if (str_or(doc, "status") == "interrupted")
    f.interruption = Interruption{str_or(doc, "interrupted_at"), str_or(doc, "interrupted_by")};
  return f;
}

namespace {

double number_or_0(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = field(j, key);
  return v.is_number() ? v.get<double>() : 0.0;
}

std::map<std::string, double> numbers_of(const nlohmann::json& obj) {
  std::map<std::string, double> out;
  if (!obj.is_object()) return out;
  for (const auto& [k, v] : obj.items())
    if (v.is_number()) out[k] = v.get<double>();
  return out;
}

TimingStage timing_stage_of(const nlohmann::json& s) {
  TimingStage t{str_or(s, "stage"), number_or_0(s, "seconds"), {}};
  if (const nlohmann::json& parts = field(s, "parts"); parts.is_array())
    for (const auto& p : parts) t.parts.emplace_back(str_or(p, "stage"), number_or_0(p, "seconds"));
  return t;
}

}  // namespace

std::vector<CellTime> cell_times(const nlohmann::json& doc) {
  std::vector<CellTime> out;
  const nlohmann::json& cells = cells_of(doc);
  if (!cells.is_array()) return out;
  for (const auto& c : cells)
    if (c.is_object() && c.contains("wall_seconds"))
      out.push_back({number_or_0(c, "wall_seconds"), numbers_of(field(c, "phases"))});
  return out;
}

std::optional<RecordedTimings> recorded_timings(const nlohmann::json& doc) {
  const nlohmann::json& t = field(doc, "timings");
  if (!t.is_object()) return std::nullopt;
  RecordedTimings r;
  if (const nlohmann::json& stages = field(t, "stages"); stages.is_array())
    for (const auto& s : stages) r.stages.push_back(timing_stage_of(s));
  const nlohmann::json& boots = field(t, "boots");
  if (const nlohmann::json& n = field(boots, "count"); n.is_number_unsigned())
    r.boot_count = n.get<std::size_t>();
  r.boot_seconds = number_or_0(boots, "seconds");
  r.boot_median = numbers_of(field(boots, "median"));
  r.total_s = number_or_0(t, "total_s");
  return r;
}

nlohmann::json timing_stages_json(const nlohmann::json& doc) {
  const nlohmann::json& s = field(field(doc, "timings"), "stages");
  return s.is_array() ? s : nlohmann::json::array();
}

std::optional<UnfinishedRun> unfinished_run(const nlohmann::json& doc) {
  const std::string status = str_or(doc, "status");
  if (status != "interrupted" && status != "running") return std::nullopt;
  const nlohmann::json& cells = field(doc, "cells");
  return UnfinishedRun{status, cells.is_array() ? cells.size() : 0};
}

std::vector<std::string> cell_variants_of(const nlohmann::json& doc) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  const nlohmann::json& cells = cells_of(doc);
  if (!cells.is_array()) return out;
  for (const auto& c : cells)
    if (const nlohmann::json& v = field(c, "variant");
        v.is_string() && seen.insert(v.get<std::string>()).second)
      out.push_back(v.get<std::string>());
  return out;
}

std::vector<CellStart> cell_starts(const nlohmann::json& doc) {
  std::vector<CellStart> out;
  const nlohmann::json& cells = cells_of(doc);
  if (!cells.is_array()) return out;
  for (const auto& c : cells) {
    if (!c.is_object()) continue;
    CellStart s;
    if (const nlohmann::json& st = field(c, "started_at");
        st.is_string() && !st.get_ref<const std::string&>().empty())
      s.started_at = st.get<std::string>();
    s.id = c.value("id", "");
    out.push_back(std::move(s));
  }
  return out;
}

bool has_comparison_key(const nlohmann::json& doc) { return doc.contains("comparison_key"); }

nlohmann::json comparison_key_json(const nlohmann::json& doc) {
  return doc.value("comparison_key", nlohmann::json());
}

const nlohmann::json* compare_section(const nlohmann::json& doc) {
  const nlohmann::json& spec = field(doc, "spec");
  if (!spec.is_object()) return nullptr;
  const auto it = spec.find("compare");
  return it == spec.end() ? nullptr : &*it;
}

}  // namespace isolab::results
