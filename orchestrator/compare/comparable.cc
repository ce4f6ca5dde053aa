#include "compare/comparable.h"

#include <map>
#include <set>

#include "compare/json_fields.h"

namespace isolab {

using namespace compare_detail;

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

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ",") + x;
  return out;
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
    const bool empty = v.is_string() && v.get<std::string>().empty();
    return empty ? std::string("(not recorded)") : value_text(v);
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
    if (!ka.is_object()) diffs.emplace_back("comparison_key: missing in A");
    if (!kb.is_object()) diffs.emplace_back("comparison_key: missing in B");
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

namespace {

const MetricSamples* find_samples(const VariantData& d, const std::string& name) {
  const auto it = d.metrics.find(name);
  return it == d.metrics.end() ? nullptr : &it->second;
}

}  // namespace

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
      s.hostname = str_or(h, "hostname");
      s.cpu_model = str_or(h, "cpu_model");
      s.fingerprint_sha256 = str_or(h, "fingerprint_sha256");
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
    const nlohmann::json& j = it->second;
    lines.push_back("host " + h.uri + " (" + h.hostname + "): cpu " + str_or(j, "cpu_vendor") +
                    " " + h.cpu_model + ", " + std::to_string(j.value("cpus", 0)) +
                    " CPUs, libvirt " + str_or(j, "libvirt_version") + ", " +
                    str_or(j, "hypervisor") + " " + str_or(j, "hypervisor_version") +
                    ", fingerprint " + h.fingerprint_sha256.substr(0, 12));
  }
  return lines;
}

std::string check_calibration(CompareSettings& s, const nlohmann::json& run_a,
                              const nlohmann::json& run_b) {
  if (!s.calibration || !s.calibration->comparison_key.is_object()) return "";
  const nlohmann::json& ck = s.calibration->comparison_key;
  std::string diffs;
  for (const char* k : {"accelerator", "cmdline", "vcpus", "memory_mib", "workloads_sha256"})
    for (const nlohmann::json* run : {&run_a, &run_b}) {
      const auto rk = field(*run, "comparison_key");
      if (!rk.is_object() || field(rk, k) == field(ck, k)) continue;
      diffs += std::string(diffs.empty() ? "" : ", ") + k;
      break;
    }
  if (diffs.empty()) return "";
  s.calibration->applied = false;
  return "calibration " + s.calibration->source + " not applied: made under another " + diffs +
         " than these runs (its margins and jitters are for those)";
}

}  // namespace isolab
