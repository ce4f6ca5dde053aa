#include "compare/comparable.h"

#include <map>
#include <set>

#include "results/lenient.h"

namespace isolab {

using results::value_text;

namespace {

// "latency (cyclictest), vmstat-idle (vmstat-overhead)" from spec.workloads; "imported" marks
// a workload of `isolab import`.
std::string workloads_text(const results::RunFacts& run) {
  if (run.workloads.empty()) return "(none recorded)";
  std::string out;
  for (const auto& w : run.workloads) {
    out += (out.empty() ? "" : ", ") + value_text(w.name) + " (" + value_text(w.tool);
    if (w.imported) out += ", imported";
    out += ")";
  }
  return out;
}

// The libvirt hosts a multi-host run measured on ("hosts"): "Skylake-Client-IBRS x16 (QEMU
// 7.2.22) + ..."; a run on this machine: "this machine (<cpu_model>)".
std::string hosts_text(const results::RunFacts& run) {
  if (!run.hosts) return "this machine (" + value_text(run.host_cpu_model) + ")";
  std::string out;
  for (const auto& h : *run.hosts) {
    if (!h.reachable) continue;
    out += (out.empty() ? "" : " + ") + value_text(h.cpu_model) + " x" + value_text(h.cpus) + " (" +
           value_text(h.hypervisor) + " " + value_text(h.hypervisor_version) + ")";
  }
  return out.empty() ? "(no reachable host)" : out;
}

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ",") + x;
  return out;
}

// The host fields behind host_fingerprint_sha256 (results/host.h) that differ:
// "cpu_model A=X, B=Y; qemu_version A=..., B=..."; with a multi-host run on either side, the
// hosts: "hosts A=..., B=...".
std::string host_differences(const results::RunFacts& run_a, const results::RunFacts& run_b) {
  if (run_a.hosts || run_b.hosts)
    return "hosts A=" + hosts_text(run_a) + ", B=" + hosts_text(run_b);
  std::string out;
  for (std::size_t i = 0; i < run_a.host_fingerprint.size(); ++i) {
    const auto& [k, va] = run_a.host_fingerprint[i];
    const nlohmann::json& vb = run_b.host_fingerprint[i].second;
    if (va != vb)
      out += (out.empty() ? "" : "; ") + k + " A=" + value_text(va) + ", B=" + value_text(vb);
  }
  return out.empty() ? "the recorded host facts are equal, their hash differs" : out;
}

// One line per differing key; hashed keys are shown by what they hash.
std::string key_difference(const std::string& k, const nlohmann::json& va, const nlohmann::json& vb,
                           const results::RunFacts& run_a, const results::RunFacts& run_b) {
  if (k == "workloads_sha256")
    return "workloads: A=" + workloads_text(run_a) + "; B=" + workloads_text(run_b);
  if (k == "host_fingerprint_sha256") return "host: " + host_differences(run_a, run_b);
  // An import without --cmdline records "": say so instead of printing nothing.
  auto text = [](const nlohmann::json& v) {
    const bool empty = v.is_string() && v.get<std::string>().empty();
    return empty ? std::string("(not recorded)") : value_text(v);
  };
  return k + ": A=" + text(va) + ", B=" + text(vb);
}

// The key's value, null when absent.
const nlohmann::json& key_value(const results::ComparisonKey& key, const std::string& name) {
  static const nlohmann::json null;
  const auto it = key.find(name);
  return it == key.end() ? null : it->second;
}

}  // namespace

std::vector<std::string> comparison_key_differences(const results::RunFacts& run_a,
                                                    const results::RunFacts& run_b) {
  std::vector<std::string> diffs;
  const auto& ka = run_a.comparison_key;
  const auto& kb = run_b.comparison_key;
  if (!ka || !kb) {
    if (!ka) diffs.emplace_back("comparison_key: missing in A");
    if (!kb) diffs.emplace_back("comparison_key: missing in B");
    return diffs;
  }
  std::set<std::string> keys;
  for (const auto& [k, v] : *ka) keys.insert(k);
  for (const auto& [k, v] : *kb) keys.insert(k);
  for (const auto& k : keys) {
    const nlohmann::json& va = key_value(*ka, k);
    const nlohmann::json& vb = key_value(*kb, k);
    if (va != vb) diffs.push_back(key_difference(k, va, vb, run_a, run_b));
  }
  return diffs;
}

std::vector<std::string> comparison_key_differences(const nlohmann::json& run_a,
                                                    const nlohmann::json& run_b) {
  return comparison_key_differences(results::run_facts(run_a), results::run_facts(run_b));
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

std::vector<std::string> metric_source_differences(const VariantData& a, const VariantData& b) {
  std::set<std::string> names;
  for (const VariantData* d : {&a, &b})
    for (const auto& [name, s] : d->metrics) names.insert(name);
  std::vector<std::string> out;
  for (const auto& name : names) {
    const MetricSamples* sa = find_samples(a, name);
    const MetricSamples* sb = find_samples(b, name);
    const std::set<std::string> none;
    const std::set<std::string>& xa = sa ? sa->sources : none;
    const std::set<std::string>& xb = sb ? sb->sources : none;
    const bool across = !xa.empty() && !xb.empty() && xa != xb;
    if (across || xa.size() > 1 || xb.size() > 1)
      out.push_back("metric " + name + ": source A=" + (xa.empty() ? "(none)" : joined(xa)) +
                    ", B=" + (xb.empty() ? "(none)" : joined(xb)));
  }
  return out;
}

std::vector<std::string> tool_version_differences(const VariantData& a, const VariantData& b) {
  std::set<std::string> tools;
  for (const VariantData* d : {&a, &b})
    for (const auto& [tool, v] : d->tool_versions) tools.insert(tool);
  std::vector<std::string> out;
  const std::set<std::string> none;
  for (const auto& tool : tools) {
    const auto ia = a.tool_versions.find(tool), ib = b.tool_versions.find(tool);
    const auto& va = ia == a.tool_versions.end() ? none : ia->second;
    const auto& vb = ib == b.tool_versions.end() ? none : ib->second;
    if (va != vb)
      out.push_back(tool + " A=" + (va.empty() ? "(none)" : joined(va)) +
                    ", B=" + (vb.empty() ? "(none)" : joined(vb)));
  }
  return out;
}

std::vector<HostSummary> host_summaries(const VariantData& a, const VariantData& b) {
  std::map<std::string, HostSummary> m;
  for (const VariantData* d : {&a, &b})
    for (const auto& [uri, h] : d->hosts) {
      HostSummary& s = m[uri];
      s.uri = uri;
      s.hostname = h.hostname;
      s.cpu_model = h.cpu_model;
      s.fingerprint_sha256 = h.fingerprint_sha256;
    }
  for (const VariantData* d : {&a, &b})
    for (const auto& uri : d->ok_cell_hosts)
      if (auto it = m.find(uri); it != m.end())
        (d == &a ? it->second.cells_a : it->second.cells_b)++;
  std::vector<HostSummary> out;
  for (auto& [uri, s] : m) out.push_back(std::move(s));
  return out;
}

std::vector<std::string> host_fingerprint_differences(const std::vector<HostSummary>& hosts,
                                                      const VariantData& a, const VariantData& b) {
  std::set<std::string> fps;
  for (const auto& h : hosts) fps.insert(h.fingerprint_sha256);
  if (fps.size() < 2) return {};
  std::vector<std::string> lines;
  for (const auto& h : hosts) {
    const auto it = a.hosts.count(h.uri) ? a.hosts.find(h.uri) : b.hosts.find(h.uri);
    const results::CellHost& j = it->second;
    lines.push_back("host " + h.uri + " (" + h.hostname + "): cpu " + j.cpu_vendor + " " +
                    h.cpu_model + ", " + std::to_string(j.cpu_count()) + " CPUs, libvirt " +
                    j.libvirt_version + ", " + j.hypervisor + " " + j.hypervisor_version +
                    ", fingerprint " + h.fingerprint_sha256.substr(0, 12));
  }
  return lines;
}

std::string check_calibration(CompareSettings& s, const results::RunFacts& run_a,
                              const results::RunFacts& run_b) {
  if (!s.calibration || !s.calibration->comparison_key.is_object()) return "";
  const nlohmann::json& ck = s.calibration->comparison_key;
  results::ComparisonKey calibrated;
  for (const auto& [name, value] : ck.items()) calibrated.emplace(name, value);
  std::string diffs;
  for (const char* k : {"accelerator", "cmdline", "vcpus", "memory_mib", "workloads_sha256"})
    for (const results::RunFacts* run : {&run_a, &run_b}) {
      const auto& rk = run->comparison_key;
      if (!rk || key_value(*rk, k) == key_value(calibrated, k)) continue;
      diffs += std::string(diffs.empty() ? "" : ", ") + k;
      break;
    }
  if (diffs.empty()) return "";
  s.calibration->applied = false;
  return "calibration " + s.calibration->source + " not applied: made under another " + diffs +
         " than these runs (its margins and jitters are for those)";
}

}  // namespace isolab
