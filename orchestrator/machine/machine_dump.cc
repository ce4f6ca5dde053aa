#include "machine/machine_dump.h"

#include <algorithm>
#include <map>

#include "base/error.h"
#include "base/text.h"
#include "machine/cpu_topology.h"
#include "machine/irqs.h"
#include "machine/sysctls.h"
#include "machine/tuned.h"

namespace isolab {

namespace {

std::string show_str(const std::string& s) { return "'" + s + "'"; }

std::optional<std::string> uname_release(std::string_view text) {
  const auto w = split_space(text);
  if (w.size() < 3 || w[0] != "Linux") return std::nullopt;
  return std::string(w[2]);
}

std::optional<std::string> proc_version_release(std::string_view text) {
  constexpr std::string_view kStart = "Linux version ";
  if (text.rfind(kStart, 0) != 0) return std::nullopt;
  const auto w = split_space(text.substr(kStart.size()));
  if (w.empty()) return std::nullopt;
  return std::string(w[0]);
}

struct ReleaseSource {
  const char* path;
  const char* what;
  std::optional<std::string> (*parse)(std::string_view);
};
constexpr ReleaseSource kReleaseSources[] = {
    {"sos_commands/kernel/uname_-a", "uname -a", uname_release},
    {"proc/version", "Linux version", proc_version_release},
};

void read_cmdline(const MachineRoot& r, MachineFacts& m) {
  const auto text = r.read("proc/cmdline");
  if (!text) return;
  const std::string file = r.file("proc/cmdline");
  offer(m, "cmdline", m.cmdline, {proc_cmdline_line(*text, file), {{file, 1, ""}}}, show_str);
}

void read_kernel_release(const MachineRoot& r, MachineFacts& m) {
  for (const ReleaseSource& s : kReleaseSources) {
    const auto text = r.read(s.path);
    if (!text) continue;
    const auto release = s.parse(*text);
    if (!release) throw Error(r.file(s.path) + ":1: not " + s.what + " output");
    offer(m, "kernel_release", m.kernel_release, {*release, {{r.file(s.path), 1, s.what}}},
          show_str);
  }
}

void read_sysfs_isolation(const MachineRoot& r, MachineFacts& m) {
  const std::pair<const char*, std::optional<Fact<CpuSet>>*> files[] = {
      {"sys/devices/system/cpu/isolated", &m.evidence.sysfs_isolated},
      {"sys/devices/system/cpu/nohz_full", &m.evidence.sysfs_nohz_full}};
  for (const auto& [rel, slot] : files) {
    const auto text = r.read(rel);
    if (!text || *slot) continue;
    *slot = Fact<CpuSet>{parse_sysfs_cpulist(*text, r.file(rel)), {{r.file(rel), 0, ""}}};
  }
}

std::optional<std::pair<std::string, std::string>> active_profile(const MachineRoot& r) {
  for (const char* rel : {"etc/tuned/active_profile", "sos_commands/tuned/tuned-adm_active"})
    if (const auto text = r.read(rel))
      if (auto p = parse_active_profile(*text)) return std::make_pair(*p, r.file(rel));
  return std::nullopt;
}

void read_tuned(const MachineRoot& r, MachineFacts& m) {
  const auto active = active_profile(r);
  if (active && !m.tuned)
    m.tuned = Fact<TunedState>{{active->first, {}, {}}, {{active->second, 1, "active profile"}}};
  std::vector<std::string> files;
  for (const std::string& name : r.children("etc/tuned"))
    if (name.ends_with("-variables.conf") && name != "-variables.conf")
      files.push_back("etc/tuned/" + name);
  const std::string own = active ? "etc/tuned/" + active->first + "-variables.conf" : "";
  if (!own.empty() && r.read(own)) files = {own};
  if (files.size() > 1 || (active && files.size() == 1 && files[0] != own))
    m.notes.push_back(
        "TuneD variables read from every etc/tuned/*-variables.conf: the active "
        "profile " +
        (active ? "'" + active->first + "' has none" : "is not named"));
  for (const std::string& rel : files) add_tuned_variables(*r.read(rel), r.file(rel), m);
}

void read_sysctls(const MachineRoot& r, MachineFacts& m) {
  std::map<std::string, SysctlValue> found;
  const std::string sysctl_a = "sos_commands/kernel/sysctl_-a";
  if (const auto text = r.read(sysctl_a))
    for (const SysctlLine& l : parse_sysctl_a(*text))
      found[l.name] = {l.value, {r.file(sysctl_a), l.line, ""}};
  for (const auto& [name, path] : sysctl_proc_paths()) {
    const std::string rel = "proc/sys/" + path;
    if (found.count(name)) continue;
    if (const auto text = r.read(rel))
      found[name] = {std::string(trim_space(*text)), {r.file(rel), 1, ""}};
  }
  if (found.empty() || m.sysctls) return;
  Fact<std::map<std::string, SysctlValue>> f{std::move(found), {}};
  for (const auto& [name, v] : f.value)
    if (f.from.empty() || f.from.back().file != v.from.file) f.from.push_back({v.from.file, 0, ""});
  m.sysctls = std::move(f);
}

void read_irqs(const MachineRoot& r, MachineFacts& m) {
  if (m.evidence.irqs) return;
  std::map<unsigned, std::string> names;
  if (const auto text = r.read("proc/interrupts"))
    names = parse_interrupt_names(*text, r.file("proc/interrupts"));
  std::vector<IsolationEvidence::Irq> irqs;
  for (const std::string& n : r.children("proc/irq")) {
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 9)
      continue;
    const std::string dir = "proc/irq/" + n + "/";
    const auto aff = r.read(dir + "smp_affinity_list");
    if (!aff) continue;
    IsolationEvidence::Irq irq{static_cast<unsigned>(std::stoul(n)), "",
                               parse_sysfs_cpulist(*aff, r.file(dir + "smp_affinity_list")),
                               std::nullopt};
    if (const auto eff = r.read(dir + "effective_affinity_list"))
      irq.effective = parse_sysfs_cpulist(*eff, r.file(dir + "effective_affinity_list"));
    if (const auto it = names.find(irq.irq); it != names.end()) irq.name = it->second;
    irqs.push_back(std::move(irq));
  }
  if (irqs.empty()) return;
  std::sort(irqs.begin(), irqs.end(), [](const auto& a, const auto& b) { return a.irq < b.irq; });
  m.evidence.irqs = Fact<std::vector<IsolationEvidence::Irq>>{
      std::move(irqs), {{r.file("proc/irq/"), 0, "N/smp_affinity_list"}}};
  if (!names.empty()) m.evidence.irqs->from.push_back({r.file("proc/interrupts"), 0, "names"});
}

}  // namespace

std::string proc_cmdline_line(std::string_view text, const std::string& file) {
  std::string line;
  size_t nonempty = 0;
  for (std::string_view l : text_lines(text))
    if (!trim_space(l).empty()) {
      ++nonempty;
      line = std::string(trim_space(l));
    }
  if (nonempty > 1)
    throw Error(file + ": " + std::to_string(nonempty) +
                " non-empty lines; /proc/cmdline holds one command line");
  return line;
}

void add_tuned_variables(std::string_view text, const std::string& file, MachineFacts& m) {
  const std::vector<TunedSetting> vars = parse_tuned_variables(text, file);
  if (!m.tuned) m.tuned = Fact<TunedState>{};
  m.tuned->from.push_back({file, 0, "variables"});
  for (const TunedSetting& v : vars) m.tuned->value.variables.emplace_back(v.name, v.value);
  for (const char* name : {"isolated_cores", "no_balance_cores"}) {
    const TunedSetting* s = find_setting(vars, "", name);
    if (!s) continue;
    const std::string where = file + ":" + std::to_string(s->line) + ": " + name;
    if (s->value.find("${") != std::string::npos) {
      m.notes.push_back(where + "=" + s->value + " refers to other TuneD variables; not expanded");
      continue;
    }
    m.evidence.tuned_isolated.push_back(
        {parse_tuned_cpulist(s->value, where), {{file, s->line, std::string(name)}}});
  }
}

void read_machine_root(const MachineRoot& r, MachineFacts& m) {
  read_cmdline(r, m);
  read_kernel_release(r, m);
  read_sysfs_isolation(r, m);
  read_tuned(r, m);
  read_sysctls(r, m);
  read_irqs(r, m);
}

}  // namespace isolab
