#include "results/cell_facts.h"

#include <cstdio>

#include "results/lenient.h"

namespace isolab::results {

namespace {

std::optional<bool> boolean(const nlohmann::json& v) {
  return v.is_boolean() ? std::optional<bool>(v.get<bool>()) : std::nullopt;
}

std::optional<double> number(const nlohmann::json& v) {
  return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
}

// The mean of a measure's start and end values, or of the one that is a number.
std::optional<double> mean_of_ends(const nlohmann::json& start, const nlohmann::json& end) {
  const auto s = number(start), e = number(end);
  if (s && e) return (*s + *e) / 2;
  return s ? s : e;
}

// The 1-min figure of a "loadavg_*" triple.
const nlohmann::json& first_of(const nlohmann::json& loadavg) {
  static const nlohmann::json null;
  return loadavg.is_array() && !loadavg.empty() ? loadavg[0] : null;
}

std::vector<ProfileEntry> profile_entries(const nlohmann::json& list) {
  std::vector<ProfileEntry> out;
  for (const nlohmann::json& row : list) {
    const nlohmann::json &f = field(row, "function"), &n = field(row, "insns");
    if (f.is_string() && n.is_number()) out.push_back({f.get<std::string>(), n.get<double>()});
  }
  return out;
}

}  // namespace

std::vector<GateRow> gate_rows(const CellRecord& c) {
  std::vector<GateRow> out;
  const nlohmann::json& rows = field(c.field("gate"), "rows");
  if (!rows.is_array()) return out;
  for (const auto& r : rows)
    out.push_back({field(r, "check"), field(r, "expected"), field(r, "effective"),
                   field(r, "detail"), boolean(field(r, "pass")), boolean(field(r, "warning"))});
  return out;
}

std::vector<LatencyTrace> latency_traces(const CellRecord& c) {
  std::vector<LatencyTrace> out;
  const nlohmann::json& traces = c.field("latency_traces");
  if (!traces.is_object()) return out;
  for (const auto& [workload, t] : traces.items()) {
    const nlohmann::json& max = field(t, "max_latency_us");
    if (!max.is_number()) continue;
    LatencyTrace r{workload, str_or(t, "tracer"), max.get<double>(), str_or(t, "task"), {},
                   {},       str_or(t, "file")};
    if (const nlohmann::json& cpu = field(t, "cpu"); cpu.is_number_integer())
      r.cpu = cpu.get<int>();
    if (const nlohmann::json& frames = field(t, "switch_frames"); frames.is_array())
      for (const auto& f : frames)
        if (f.is_string()) r.switch_frames.push_back(f.get<std::string>());
    out.push_back(std::move(r));
  }
  return out;
}

int CellHost::cpu_count() const { return cpus ? cpus->get<int>() : 0; }

std::optional<CellHost> cell_host(const CellRecord& c) {
  const nlohmann::json& h = c.field("host");
  if (!h.is_object()) return std::nullopt;
  CellHost host{
      str_or(h, "uri"),        str_or(h, "hostname"),           str_or(h, "cpu_model"),
      str_or(h, "cpu_vendor"), str_or(h, "fingerprint_sha256"), str_or(h, "libvirt_version"),
      str_or(h, "hypervisor"), str_or(h, "hypervisor_version"), std::nullopt};
  if (const auto it = h.find("cpus"); it != h.end()) host.cpus = *it;
  return host;
}

std::vector<ToolVersion> tool_versions(const CellRecord& c) {
  std::vector<ToolVersion> out;
  const nlohmann::json& versions = c.field("tool_versions");
  if (!versions.is_object()) return out;
  for (const auto& [workload, tools] : versions.items())
    if (tools.is_object())
      for (const auto& [tool, version] : tools.items())
        if (version.is_string()) out.push_back({workload, tool, version.get<std::string>()});
  return out;
}

std::optional<std::string> insn_counts_missing(const CellRecord& c) {
  const nlohmann::json& ic = c.field("insn_counts");
  if (!ic.is_object() || !field(ic, "source").is_null()) return std::nullopt;
  return str_or(ic, "reason", "no instruction counts recorded");
}

std::optional<std::vector<ProfileList>> insn_profile(const CellRecord& c) {
  const nlohmann::json& profile = field(c.field("insn_counts"), "profile");
  if (!profile.is_object()) return std::nullopt;
  std::vector<ProfileList> out;
  for (const auto& [step, cpus] : profile.items()) {
    if (!cpus.is_object()) continue;
    for (const auto& [key, list] : cpus.items()) {
      unsigned cpu = 0;
      if (std::sscanf(key.c_str(), "%u", &cpu) != 1 || !list.is_array()) continue;
      out.push_back({step, cpu, profile_entries(list)});
    }
  }
  return out;
}

std::size_t earlier_attempts(const CellRecord& c) {
  const nlohmann::json& earlier = c.field("earlier_attempts");
  return earlier.is_array() ? earlier.size() : 0;
}

std::optional<CellHostLoad> cell_host_load(const CellRecord& c) {
  const nlohmann::json& h = c.field("host_load");
  if (!h.is_object()) return std::nullopt;
  CellHostLoad l;
  l.cell_id = c.id.value_or("");
  l.loadavg_1min =
      mean_of_ends(first_of(field(h, "loadavg_start")), first_of(field(h, "loadavg_end")));
  l.cpu_pressure_some_avg10 = mean_of_ends(field(h, "cpu_pressure_some_avg10_start"),
                                           field(h, "cpu_pressure_some_avg10_end"));
  l.steal_s = number(field(h, "steal_s"));
  return l;
}

std::vector<std::string> noise_workloads(const CellRecord& c) {
  std::vector<std::string> out;
  const nlohmann::json& noise = c.field("noise");
  if (noise.is_object())
    for (const auto& [workload, v] : noise.items()) out.push_back(workload);
  return out;
}

std::vector<NoiseCpu> noise_cpus(const CellRecord& c, const std::string& workload) {
  std::vector<NoiseCpu> out;
  const nlohmann::json& cpus = field(field(c.field("noise"), workload.c_str()), "cpus");
  if (!cpus.is_array()) return out;
  for (const auto& e : cpus) {
    const nlohmann::json& cpu = field(e, "cpu");
    if (!cpu.is_number_integer()) continue;
    NoiseCpu n{cpu.get<int>(), {}};
    if (const nlohmann::json& causes = field(e, "causes"); causes.is_object())
      for (const auto& [cause, v] : causes.items())
        if (const nlohmann::json& per_s = field(v, "per_s"); per_s.is_number())
          n.per_s[cause] = per_s.get<double>();
    out.push_back(std::move(n));
  }
  return out;
}

CellNotes cell_notes(const CellRecord& c) {
  const nlohmann::json& guest = c.field("guest");
  const nlohmann::json& wall = c.field("wall_seconds");
  return {scalar_text(field(guest, "cmdline")), scalar_text(field(guest, "uname_r")),
          scalar_text(c.field("gate_reason")), wall.is_number() ? wall.get<double>() : 0};
}

}  // namespace isolab::results
