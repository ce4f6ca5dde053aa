#include "compare/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "base/json_text.h"
#include "cmdline/cpulist.h"

namespace isolab {

namespace {

std::string str_or(const nlohmann::json& j, const char* key, const std::string& dflt = "") {
  if (!j.is_object()) return dflt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return dflt;
  return it->get<std::string>();
}

// value of a boolean field; dflt when absent or not a boolean.
bool bool_or(const nlohmann::json& j, const char* key, bool dflt) {
  if (!j.is_object()) return dflt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_boolean()) return dflt;
  return it->get<bool>();
}

nlohmann::json field(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nlohmann::json() : *it;
}

std::string value_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "(absent)";
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void check_run(const nlohmann::json& run) {
  if (!run.is_object()) throw Error("result.json: top level must be an object");
  if (auto it = run.find("schema_version"); it != run.end()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() != 1) {
      throw SpecError("/schema_version", "unsupported result.json schema_version " +
                                             json_text(*it) + " (this isolab reads 1)");
    }
  }
  auto cells = run.find("cells");
  if (cells == run.end() || !cells->is_array()) {
    throw SpecError("/cells", "result.json must have a cells array");
  }
}

std::vector<std::string> run_variant_names(const nlohmann::json& run) {
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  if (auto it = run.find("variant_order"); it != run.end() && it->is_array()) {
    for (const auto& v : *it) {
      if (v.is_string()) add(v.get<std::string>());
    }
  }
  if (auto it = run.find("variants"); it != run.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) add(k);
  }
  for (const auto& c : run["cells"]) {
    if (c.is_object()) add(str_or(c, "variant"));
  }
  return names;
}

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
  if (!k.is_string() || (k != "count" && k != "timing")) {
    throw SpecError(mp + "/kind",
                    "metric kind must be \"count\" or \"timing\", got " + json_text(k));
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
      throw SpecError(mp + "/values/" + std::to_string(k),
                      "a count or event rate must be >= 0, got " + json_text(raw[k]));
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
void read_build_facts(const nlohmann::json& v, const std::string& ptr, VariantData& d) {
  if (auto w = v.find("build_warnings"); w != v.end() && w->is_array()) {
    d.build_warnings.emplace();
    for (std::size_t i = 0; i < w->size(); ++i) {
      try {
        d.build_warnings->push_back(build_warning_from_json((*w)[i]));
      } catch (const Error& e) {
        throw SpecError(ptr + "/build_warnings/" + std::to_string(i), e.what());
      }
    }
  }
  if (auto t = v.find("touched_files"); t != v.end() && t->is_array())
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

VariantData extract_variant(const nlohmann::json& run, const std::string& variant) {
  check_run(run);
  const auto names = run_variant_names(run);
  if (std::find(names.begin(), names.end(), variant) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw Error("variant '" + variant + "' is not in run " + str_or(run, "run_id", "(no run_id)") +
                " (variants: " + (list.empty() ? "none" : list) + ")");
  }
  VariantData d;
  d.run_id = str_or(run, "run_id");
  d.variant = variant;
  if (auto it = run.find("variants"); it != run.end() && it->is_object()) {
    if (auto v = it->find(variant); v != it->end()) {
      d.kernel_release = str_or(*v, "kernel_release");
      read_build_facts(*v, "/variants/" + variant, d);
    }
  }
  const auto& cells = run["cells"];
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto& c = cells[i];
    const std::string cp = "/cells/" + std::to_string(i);
    if (!c.is_object()) throw SpecError(cp, "cell must be an object");
    if (str_or(c, "variant") != variant) continue;
    const bool warmup = bool_or(c, "warmup", false);
    const std::string status = str_or(c, "status");
    if (status != "ok" && status != "invalid" && status != "failed") {
      throw SpecError(cp + "/status", "cell status must be ok, invalid or failed, got " +
                                          value_text(field(c, "status")));
    }
    if (status != "ok") {
      CellIssue issue;
      issue.variant = variant;
      issue.cell_id = str_or(c, "id", "cell " + std::to_string(i));
      issue.status = status;
      issue.failure_class = str_or(c, "failure_class");
      issue.reason = str_or(c, "reason");
      if (auto g = c.find("gate"); g != c.end() && g->is_object()) {
        if (auto rows = g->find("rows"); rows != g->end() && rows->is_array()) {
          for (const auto& row : *rows) {
            if (row.is_object() && !bool_or(row, "pass", true)) {
              issue.gate_failures.push_back(gate_row_text(row));
            }
          }
        }
      }
      issue.kernel_failure = is_kernel_failure_class(issue.failure_class);
      if (warmup) issue.reason = "(warmup) " + issue.reason;
      d.issues.push_back(std::move(issue));
      continue;
    }
    if (warmup) continue;
    ++d.cells_ok;
    const std::string cell_id = str_or(c, "id", "cell " + std::to_string(i));
    const std::string acc = str_or(c, "accelerator");
    if (!acc.empty()) d.cell_accelerators.insert(acc);
    const nlohmann::json host = field(c, "host");
    const std::string host_uri = str_or(host, "uri");
    if (!host_uri.empty()) d.hosts[host_uri] = host;
    if (auto ms = c.find("metrics"); ms != c.end() && !ms->is_null()) {
      if (!ms->is_object()) throw SpecError(cp + "/metrics", "metrics must be an object");
      for (const auto& [name, m] : ms->items()) {
        const std::string mp = cp + "/metrics/" + json_pointer_token(name);
        if (!m.is_object()) throw SpecError(mp, "metric must be an object");
        const nlohmann::json agg = field(m, "aggregate");
        const std::string how = agg.is_null() ? "mean" : str_or(m, "aggregate", "?");
        if (how != "mean" && how != "max" && how != "min" && how != "sum") {
          throw SpecError(mp + "/aggregate",
                          "aggregate must be mean, max, min or sum, got " + json_text(agg));
        }
        auto vs = m.find("values");
        if (vs == m.end() || !vs->is_array()) {
          throw SpecError(mp + "/values", "metric values must be an array");
        }
        std::vector<double> values;
        for (std::size_t k = 0; k < vs->size(); ++k) {
          const auto& v = (*vs)[k];
          if (v.is_null()) continue;  // missing (e.g. usr+sys rate not accounted)
          if (!v.is_number() || !std::isfinite(v.get<double>())) {
            throw SpecError(mp + "/values/" + std::to_string(k),
                            "metric value must be a finite number or null, got " + value_text(v));
          }
          values.push_back(v.get<double>());
        }
        auto& s = d.metrics[name];
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
        std::vector<unsigned> cpus = metric_cpus(m, mp);
        if (values.empty()) continue;
        if (const std::string why = str_or(m, "untrustworthy"); !why.empty()) {
          d.untrusted.push_back({"", cell_id, name, why});
          continue;
        }
        if (s.metric_kind() == MetricKind::count) check_count_values(values, *vs, mp);
        s.values.push_back(aggregate(how, values));
        s.cell_ids.push_back(cell_id);
        s.hosts.push_back(host_uri);
        s.cpus.push_back(std::move(cpus));
        if (!acc.empty()) s.accelerators.insert(acc);
      }
    }
    if (auto hs = c.find("histograms"); hs != c.end() && !hs->is_null()) {
      if (!hs->is_object()) throw SpecError(cp + "/histograms", "histograms must be an object");
      for (const auto& [name, h] : hs->items()) {
        const std::string hp = cp + "/histograms/" + json_pointer_token(name);
        merge_histogram(d.histograms[name], histogram_from_json(h, hp));
        if (!d.histogram_units.count(name)) d.histogram_units[name] = str_or(h, "unit", "us");
      }
    }
  }
  return d;
}

namespace {

// "latency (cyclictest), vmstat-idle (vmstat-overhead)" from spec.workloads; "imported" marks
// a workload of `isolab import`.
std::string workloads_text(const nlohmann::json& run) {
  const auto wls = field(field(run, "spec"), "workloads");
  if (!wls.is_array() || wls.empty()) return "(none recorded)";
  std::string out;
  for (const auto& w : wls) {
    out += (out.empty() ? "" : ", ") + value_text(field(w, "name")) + " (" +
           value_text(field(w, "tool"));
    if (field(w, "imported") == true) out += ", imported";
    out += ")";
  }
  return out;
}

// The libvirt hosts a multi-host run measured on ("hosts"): "Skylake-Client-IBRS x16 (QEMU
// 7.2.22) + ..."; a run on this machine: "this machine (<cpu_model>)".
std::string hosts_text(const nlohmann::json& run) {
  const auto hs = field(run, "hosts");
  if (!hs.is_array())
    return "this machine (" + value_text(field(field(run, "host"), "cpu_model")) + ")";
  std::string out;
  for (const auto& h : hs) {
    if (field(h, "error") != nullptr) continue;  // unreachable: measured nothing
    out += (out.empty() ? "" : " + ") + value_text(field(h, "cpu_model")) + " x" +
           value_text(field(h, "cpus")) + " (" + value_text(field(h, "hypervisor")) + " " +
           value_text(field(h, "hypervisor_version")) + ")";
  }
  return out.empty() ? "(no reachable host)" : out;
}

// The host fields behind host_fingerprint_sha256 (results/host.h) that differ:
// "cpu_model A=X, B=Y; qemu_version A=..., B=..."; with a multi-host run on either side, the
// hosts: "hosts A=..., B=...".
std::string host_differences(const nlohmann::json& run_a, const nlohmann::json& run_b) {
  if (field(run_a, "hosts").is_array() || field(run_b, "hosts").is_array())
    return "hosts A=" + hosts_text(run_a) + ", B=" + hosts_text(run_b);
  const auto ha = field(run_a, "host"), hb = field(run_b, "host");
  std::string out;
  for (const char* k : {"cpu_model", "nproc", "host_kernel", "qemu_version", "accelerator"}) {
    const auto va = field(ha, k), vb = field(hb, k);
    if (va != vb)
      out += (out.empty() ? "" : "; ") + std::string(k) + " A=" + value_text(va) +
             ", B=" + value_text(vb);
  }
  return out.empty() ? "the recorded host facts are equal, their hash differs" : out;
}

// One line per differing key; hashed keys are shown by what they hash.
std::string key_difference(const std::string& k, const nlohmann::json& va, const nlohmann::json& vb,
                           const nlohmann::json& run_a, const nlohmann::json& run_b) {
  if (k == "workloads_sha256")
    return "workloads: A=" + workloads_text(run_a) + "; B=" + workloads_text(run_b);
  if (k == "host_fingerprint_sha256") return "host: " + host_differences(run_a, run_b);
  // An import without --cmdline records "": say so instead of printing nothing.
  auto text = [](const nlohmann::json& v) {
    return v == "" ? std::string("(not recorded)") : value_text(v);
  };
  return k + ": A=" + text(va) + ", B=" + text(vb);
}

}  // namespace

std::vector<std::string> comparison_key_differences(const nlohmann::json& run_a,
                                                    const nlohmann::json& run_b) {
  std::vector<std::string> diffs;
  const auto ka = field(run_a, "comparison_key");
  const auto kb = field(run_b, "comparison_key");
  if (!ka.is_object() || !kb.is_object()) {
    if (!ka.is_object()) diffs.push_back("comparison_key: missing in A");
    if (!kb.is_object()) diffs.push_back("comparison_key: missing in B");
    return diffs;
  }
  std::set<std::string> keys;
  for (const auto& [k, v] : ka.items()) keys.insert(k);
  for (const auto& [k, v] : kb.items()) keys.insert(k);
  for (const auto& k : keys) {
    const auto va = field(ka, k.c_str());
    const auto vb = field(kb, k.c_str());
    if (va != vb) diffs.push_back(key_difference(k, va, vb, run_a, run_b));
  }
  return diffs;
}

ComparisonRefused::ComparisonRefused(std::vector<std::string> differences,
                                     const std::string& option)
    : Error([&] {
        std::string m = option == "--force"
                            ? "refusing to compare unlike runs (use --force to compare anyway):"
                            : "refusing to pool cells of unlike hosts (use " + option +
                                  " to combine them anyway):";
        for (const auto& d : differences) m += "\n  " + d;
        return m;
      }()),
      differences_(std::move(differences)) {}

std::size_t Comparison::count(Verdict v) const {
  return static_cast<std::size_t>(std::count_if(
      metrics.begin(), metrics.end(), [&](const MetricRow& r) { return r.verdict.verdict == v; }));
}

std::size_t Comparison::kernel_failures_b() const {
  return static_cast<std::size_t>(
      std::count_if(issues.begin(), issues.end(),
                    [](const CellIssue& i) { return i.side == "B" && i.kernel_failure; }));
}

std::size_t Comparison::new_warnings_in_touched_files() const {
  if (!new_warnings) return 0;
  return static_cast<std::size_t>(std::count_if(new_warnings->begin(), new_warnings->end(),
                                                [](const auto& w) { return w.in_touched_file; }));
}

std::size_t Comparison::regressions() const {
  return count(Verdict::regressed) + kernel_failures_b() + new_warnings_in_touched_files();
}

int compare_exit_status(const Comparison& c) { return c.regressions() > 0 ? 1 : 0; }

namespace {

// Adds the gate rows of one variant's cells to the summary (side 0 = A, 1 = B).
void add_gate_rows(const nlohmann::json& run, const std::string& variant, int side,
                   std::vector<GateSummaryRow>& rows) {
  if (!run.contains("cells") || !run["cells"].is_array()) return;
  for (const auto& c : run["cells"]) {
    if (!c.is_object() || c.value("variant", "") != variant || c.value("warmup", false)) continue;
    if (!c.contains("gate") || !c["gate"].is_object() || !c["gate"].contains("rows") ||
        !c["gate"]["rows"].is_array())
      continue;
    for (const auto& r : c["gate"]["rows"]) {
      if (!r.is_object() || !r.contains("check") || !r["check"].is_string()) continue;
      const std::string check = r["check"].get<std::string>();
      auto it = std::find_if(rows.begin(), rows.end(),
                             [&](const GateSummaryRow& g) { return g.check == check; });
      if (it == rows.end()) it = rows.insert(rows.end(), GateSummaryRow{check});
      const bool pass = r.contains("pass") && r["pass"].is_boolean() && r["pass"].get<bool>();
      (side == 0 ? it->a_total : it->b_total)++;
      if (pass) (side == 0 ? it->a_pass : it->b_pass)++;
    }
  }
}

// "madvise_pageout+0x1a/0x40" -> "madvise_pageout".
std::string frame_name(const std::string& f) { return f.substr(0, f.find('+')); }

// Adds the latency traces of one variant's ok, non-warm-up cells (side 0 = A, 1 = B). Fields
// of the wrong type are skipped (the metric, not this summary, is what is tested).
void add_latency_traces(const nlohmann::json& run, const std::string& variant, int side,
                        std::vector<LatencyTraceRow>& rows) {
  if (!run.contains("cells") || !run["cells"].is_array()) return;
  for (const auto& c : run["cells"]) {
    if (!c.is_object() || c.value("variant", "") != variant || c.value("warmup", false) ||
        c.value("status", "") != "ok" || !c.contains("latency_traces") ||
        !c["latency_traces"].is_object())
      continue;
    for (const auto& [wl, t] : c["latency_traces"].items()) {
      if (!t.is_object() || !t.contains("max_latency_us") || !t["max_latency_us"].is_number())
        continue;
      LatencyTraceRow r;
      r.side = side;
      r.cell_id = c.value("id", "");
      r.workload = wl;
      r.tracer = t.value("tracer", "");
      r.max_latency_us = t["max_latency_us"].get<double>();
      r.task = t.value("task", "");
      if (t.contains("cpu") && t["cpu"].is_number_integer()) r.cpu = t["cpu"].get<int>();
      if (t.contains("switch_frames") && t["switch_frames"].is_array())
        for (const auto& f : t["switch_frames"])
          if (f.is_string()) r.frames.push_back(frame_name(f.get<std::string>()));
      r.file = t.value("file", "");
      rows.push_back(std::move(r));
    }
  }
}

// The hosts of both sides, with their cell counts; sorted by URI.
std::vector<HostSummary> host_summaries(const VariantData& a, const VariantData& b,
                                        const nlohmann::json& run_a, const nlohmann::json& run_b) {
  std::map<std::string, HostSummary> m;
  for (const VariantData* d : {&a, &b})
    for (const auto& [uri, h] : d->hosts) {
      HostSummary& s = m[uri];
      s.uri = uri;
      s.hostname = str_or(h, "hostname");
      s.cpu_model = str_or(h, "cpu_model");
      s.fingerprint_sha256 = str_or(h, "fingerprint_sha256");
    }
  auto count_cells = [&](const nlohmann::json& run, const std::string& variant, bool side_a) {
    for (const auto& c : run["cells"]) {
      if (!c.is_object() || str_or(c, "variant") != variant || str_or(c, "status") != "ok" ||
          bool_or(c, "warmup", false))
        continue;
      auto it = m.find(str_or(field(c, "host"), "uri"));
      if (it != m.end()) (side_a ? it->second.cells_a : it->second.cells_b)++;
    }
  };
  count_cells(run_a, a.variant, true);
  count_cells(run_b, b.variant, false);
  std::vector<HostSummary> out;
  for (auto& [uri, s] : m) out.push_back(std::move(s));
  return out;
}

// One line per host when their fingerprints differ, else empty.
std::vector<std::string> host_fingerprint_differences(const std::vector<HostSummary>& hosts,
                                                      const VariantData& a, const VariantData& b) {
  std::set<std::string> fps;
  for (const auto& h : hosts) fps.insert(h.fingerprint_sha256);
  if (fps.size() < 2) return {};
  std::vector<std::string> lines;
  for (const auto& h : hosts) {
    const auto it = a.hosts.count(h.uri) ? a.hosts.find(h.uri) : b.hosts.find(h.uri);
    const nlohmann::json& j = it->second;
    lines.push_back("host " + h.uri + " (" + h.hostname + "): cpu " + str_or(j, "cpu_vendor") +
                    " " + h.cpu_model + ", " + std::to_string(j.value("cpus", 0)) +
                    " CPUs, libvirt " + str_or(j, "libvirt_version") + ", " +
                    str_or(j, "hypervisor") + " " + str_or(j, "hypervisor_version") +
                    ", fingerprint " + h.fingerprint_sha256.substr(0, 12));
  }
  return lines;
}

// The values of one metric split by host, in the order of `hosts` (cells without a host last).
std::vector<Stratum> metric_strata(const MetricSamples* sa, const MetricSamples* sb,
                                   const std::vector<HostSummary>& hosts) {
  std::vector<std::string> keys;
  for (const auto& h : hosts) keys.push_back(h.uri);
  keys.push_back("");
  std::vector<Stratum> strata(keys.size());
  auto add = [&](const MetricSamples* s, bool side_a) {
    if (!s) return;
    for (std::size_t i = 0; i < s->values.size(); ++i) {
      const auto k =
          static_cast<std::size_t>(std::find(keys.begin(), keys.end(), s->hosts[i]) - keys.begin());
      (side_a ? strata[k].a : strata[k].b).push_back(s->values[i]);
    }
  };
  add(sa, true);
  add(sb, false);
  return strata;
}

}  // namespace

Comparison compare_runs(const nlohmann::json& run_a, const std::string& variant_a,
                        const nlohmann::json& run_b, const std::string& variant_b,
                        const CompareSettings& settings, bool force) {
  check_run(run_a);
  check_run(run_b);
  Comparison cmp;
  cmp.run_a = str_or(run_a, "run_id");
  cmp.run_b = str_or(run_b, "run_id");
  cmp.same_run = (&run_a == &run_b) || (!cmp.run_a.empty() && cmp.run_a == cmp.run_b);
  if (cmp.same_run && variant_a == variant_b) {
    throw Error("A and B are the same variant '" + variant_a + "' of the same run");
  }
  VariantData a = extract_variant(run_a, variant_a);
  VariantData b = extract_variant(run_b, variant_b);

  std::vector<std::string> diffs;
  if (!cmp.same_run) diffs = comparison_key_differences(run_a, run_b);
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
  if (!diffs.empty()) {
    if (!force) throw ComparisonRefused(diffs);
    cmp.forced = true;
    cmp.differences = diffs;
  }

  cmp.spec_name = str_or(run_b, "spec_name", str_or(run_a, "spec_name"));
  cmp.variant_a = variant_a;
  cmp.variant_b = variant_b;
  cmp.kernel_a = a.kernel_release;
  cmp.kernel_b = b.kernel_release;
  cmp.cells_a = a.cells_ok;
  cmp.cells_b = b.cells_ok;
  add_gate_rows(run_a, variant_a, 0, cmp.gate);
  add_gate_rows(run_b, variant_b, 1, cmp.gate);
  add_latency_traces(run_a, variant_a, 0, cmp.latency_traces);
  add_latency_traces(run_b, variant_b, 1, cmp.latency_traces);
  cmp.settings = settings;
  if (a.build_warnings && b.build_warnings)
    cmp.new_warnings = new_build_warnings(*a.build_warnings, *b.build_warnings, b.touched_files);
  cmp.hosts = host_summaries(a, b, run_a, run_b);
  cmp.stratified = cmp.hosts.size() >= 2;
  if (auto hd = host_fingerprint_differences(cmp.hosts, a, b); !hd.empty()) {
    if (!settings.pool_hosts) throw ComparisonRefused(hd, "--pool-hosts");
    cmp.pooled_unlike_hosts = true;
    cmp.host_differences = hd;
  }

  std::set<std::string> names;
  for (const auto& [n, s] : a.metrics) names.insert(n);
  for (const auto& [n, s] : b.metrics) names.insert(n);
  for (const auto& name : names) {
    MetricRow row;
    row.name = name;
    const auto ia = a.metrics.find(name);
    const auto ib = b.metrics.find(name);
    const MetricSamples* sa = ia != a.metrics.end() ? &ia->second : nullptr;
    const MetricSamples* sb = ib != b.metrics.end() ? &ib->second : nullptr;
    row.unit = sb ? sb->unit : sa->unit;
    row.better = sb ? sb->better : sa->better;
    row.kind = (sb ? sb : sa)->metric_kind();
    if (sa && sb &&
        (sa->unit != sb->unit || sa->better != sb->better ||
         sa->metric_kind() != sb->metric_kind())) {
      throw Error("metric " + name + ": A and B disagree on unit/better/kind (A: " + sa->unit +
                  ", " + sa->better + ", " + metric_kind_name(sa->metric_kind()) + "; B: " +
                  sb->unit + ", " + sb->better + ", " + metric_kind_name(sb->metric_kind()) + ")");
    }
    std::set<unsigned> cpus;
    for (const MetricSamples* s : {sa, sb}) {
      if (!s) continue;
      row.tcg = row.tcg || s->accelerators.count("tcg") > 0;
      for (const auto& cell : s->cpus) cpus.insert(cell.begin(), cell.end());
    }
    row.cpus.assign(cpus.begin(), cpus.end());
    if (sa) row.a_values = sa->values;
    if (sb) row.b_values = sb->values;
    const MetricInfo info{name, row.unit, row.kind, better_from_string(row.better), row.tcg};
    if (cmp.stratified) {
      const std::vector<Stratum> strata = metric_strata(sa, sb, cmp.hosts);
      row.test = test_metric_stratified(strata, settings, true, row.kind);
      for (std::size_t h = 0; h < cmp.hosts.size(); ++h) {
        HostMetricRow hr;
        hr.host = cmp.hosts[h].uri;
        hr.test = test_metric(strata[h].a, strata[h].b, settings, false, row.kind);
        hr.change_pct = 100.0 * hr.test.change;
        hr.verdict = decide_metric_verdict(hr.test, info, settings);
        row.per_host.push_back(std::move(hr));
      }
    } else {
      row.test = test_metric(row.a_values, row.b_values, settings, true, row.kind);
    }
    row.change_pct = 100.0 * row.test.change;
    if (row.test.ci) {
      row.ci_low_pct = 100.0 * row.test.ci->low;
      row.ci_high_pct = 100.0 * row.test.ci->high;
    }
    row.verdict = decide_metric_verdict(row.test, info, settings);
    if (!sa || !sb) row.verdict.reason = std::string("metric missing in ") + (sa ? "B" : "A");
    cmp.metrics.push_back(std::move(row));
  }

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

  for (auto& i : a.issues) {
    i.side = "A";
    cmp.issues.push_back(std::move(i));
  }
  for (auto& i : b.issues) {
    i.side = "B";
    cmp.issues.push_back(std::move(i));
  }
  for (auto* side : {&a, &b})
    for (auto& u : side->untrusted) {
      u.side = side == &a ? "A" : "B";
      cmp.untrusted.push_back(std::move(u));
    }
  return cmp;
}

Comparison compare_run_variants(const nlohmann::json& run, const CompareSettings& settings) {
  check_run(run);
  auto it = run.find("variant_order");
  if (it == run.end() || !it->is_array() || it->size() < 2 || !(*it)[0].is_string() ||
      !(*it)[1].is_string()) {
    throw SpecError("/variant_order",
                    "a one-run comparison needs variant_order with two variant names");
  }
  return compare_runs(run, (*it)[0].get<std::string>(), run, (*it)[1].get<std::string>(), settings,
                      false);
}

}  // namespace isolab
