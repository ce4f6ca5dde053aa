#include "machine/cpu_files.h"

#include <algorithm>
#include <map>

#include "machine/decimal.h"

namespace isolab {

namespace {

constexpr std::string_view kCpuDir = "sys/devices/system/cpu/";

// A sysfs number, its trailing newline and spaces dropped.
std::optional<unsigned> number(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  return small_decimal(s);
}

// "cpu12" -> 12, "node1" -> 1.
std::optional<unsigned> numbered(std::string_view name, std::string_view stem) {
  if (name.rfind(stem, 0) != 0) return std::nullopt;
  return number(name.substr(stem.size()));
}

std::string show_set(const CpuSet& s) { return s.empty() ? "(none)" : s.to_list(); }
std::string show_count(unsigned n) { return std::to_string(n); }
std::string show_numa(const std::vector<NumaNode>& v) {
  std::string out;
  for (const NumaNode& n : v)
    out += (out.empty() ? "" : " ") + ("node" + std::to_string(n.node) + ":" + n.cpus.to_list());
  return out;
}

CpuSet first_n(unsigned n) {
  CpuSet s(kMaxCpus);
  for (unsigned c = 0; c < n && c < kMaxCpus; ++c) s.set(c);
  return s;
}

void read_sysfs_lists(const MachineRoot& r, CpuFiles& f) {
  const std::pair<const char*, std::optional<Fact<CpuSet>>*> lists[] = {{"present", &f.present},
                                                                        {"possible", &f.possible},
                                                                        {"online", &f.online},
                                                                        {"offline", &f.offline}};
  for (const auto& [name, slot] : lists) {
    const std::string rel = std::string(kCpuDir) + name;
    if (const auto text = r.read(rel))
      *slot = Fact<CpuSet>{parse_sysfs_cpulist(*text, r.file(rel)), {{r.file(rel), 0, ""}}};
  }
}

void read_sysfs_topology(const MachineRoot& r, CpuFiles& f) {
  f.sysfs_dir = r.file(kCpuDir);
  for (const std::string& name : r.children(kCpuDir)) {
    const auto cpu = numbered(name, "cpu");
    if (!cpu || *cpu >= kMaxCpus) continue;
    f.sysfs_cpu_dirs.set(*cpu);
    const std::string topo = std::string(kCpuDir) + name + "/topology/";
    const auto package = number(r.read(topo + "physical_package_id").value_or(""));
    const auto core = number(r.read(topo + "core_id").value_or(""));
    const auto die = number(r.read(topo + "die_id").value_or("0"));
    if (package && core && die)
      f.sysfs_places.push_back({*cpu, *package, core_key(*package, *die, *core)});
  }
}

void read_sysfs_numa(const MachineRoot& r, CpuFiles& f) {
  const std::string dir = "sys/devices/system/node/";
  for (const std::string& name : r.children(dir)) {
    const auto node = numbered(name, "node");
    const std::string rel = dir + name + "/cpulist";
    const auto text = node ? r.read(rel) : std::nullopt;
    if (!text) continue;
    f.sysfs_numa.push_back({*node, parse_sysfs_cpulist(*text, r.file(rel))});
    f.sysfs_numa_from.push_back({r.file(rel), 0, ""});
  }
  std::sort(f.sysfs_numa.begin(), f.sysfs_numa.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.node < b.node; });
}

void offer_cpus(const CpuFiles& f, MachineFacts& m) {
  if (f.present) offer(m, "cpus", m.cpus, *f.present, show_set);
  if (f.possible) offer(m, "cpus", m.cpus, *f.possible, show_set);
  for (const CpuFiles::Table& t : f.tables) {
    CpuSet s(kMaxCpus);
    for (const LscpuRow& r : t.rows) s.set(r.cpu);
    if (!s.empty())
      offer(m, "cpus", m.cpus,
            {s, {{t.file, 0, "lscpu -e: " + std::to_string(s.count()) + " rows"}}}, show_set);
  }
  for (const LscpuSummary& s : f.summaries)
    if (s.cpus) offer(m, "cpus", m.cpus, {first_n(s.cpus->value), s.cpus->from}, show_set);
  if (f.online && f.offline) {
    std::vector<Origin> from = f.online->from;
    from.insert(from.end(), f.offline->from.begin(), f.offline->from.end());
    offer(m, "cpus", m.cpus, {f.online->value | f.offline->value, from}, show_set);
  }
  if (!f.offline) return;
  for (const CpuFiles::Cpuinfo& c : f.cpuinfos) {
    CpuSet s = f.offline->value;
    for (const CpuinfoCpu& cpu : c.cpus) s.set(cpu.processor);
    std::vector<Origin> from = {{c.file, 0, "processors"}};
    from.insert(from.end(), f.offline->from.begin(), f.offline->from.end());
    offer(m, "cpus", m.cpus, {s, from}, show_set);
  }
}

void offer_online(const CpuFiles& f, MachineFacts& m) {
  if (f.online) offer(m, "online", m.online, *f.online, show_set);
  for (const LscpuSummary& s : f.summaries)
    if (s.online) offer(m, "online", m.online, *s.online, show_set);
  for (const CpuFiles::Table& t : f.tables) {
    CpuSet s(kMaxCpus);
    bool told = false;
    for (const LscpuRow& r : t.rows)
      if (r.online) {
        told = true;
        if (*r.online) s.set(r.cpu);
      }
    if (told) offer(m, "online", m.online, {s, {{t.file, 0, "lscpu -e: ONLINE"}}}, show_set);
  }
  for (const CpuFiles::Cpuinfo& c : f.cpuinfos) {
    CpuSet s(kMaxCpus);
    for (const CpuinfoCpu& cpu : c.cpus) s.set(cpu.processor);
    if (!s.empty()) offer(m, "online", m.online, {s, {{c.file, 0, "processors"}}}, show_set);
  }
  if (m.cpus && f.offline) {
    std::vector<Origin> from = {m.cpus->from.front()};
    from.insert(from.end(), f.offline->from.begin(), f.offline->from.end());
    offer(m, "online", m.online, {m.cpus->value - f.offline->value, from}, show_set);
  }
}

void offer_topology(MachineFacts& m, const std::vector<CpuPlace>& places, const Origin& o) {
  std::string why;
  const auto t = topology_of(places, why);
  if (!t) {
    m.notes.push_back(o.text() + ": " + why);
    return;
  }
  offer(m, "sockets", m.sockets, {t->sockets, {o}}, show_count);
  offer(m, "cores_per_socket", m.cores_per_socket, {t->cores_per_socket, {o}}, show_count);
  offer(m, "threads_per_core", m.threads_per_core, {t->threads_per_core, {o}}, show_count);
}

// The per-CPU sysfs topology, when it covers every online CPU; otherwise why not.
std::string sysfs_topology(const CpuFiles& f, MachineFacts& m) {
  if (f.sysfs_places.empty()) return "";
  CpuSet placed(kMaxCpus);
  for (const CpuPlace& p : f.sysfs_places) placed.set(p.cpu);
  const std::string dirs =
      "the per-CPU directories of " + f.sysfs_dir + " (" + f.sysfs_cpu_dirs.to_list() + ")";
  if (!m.online)
    return dirs +
           " hold a topology, but no file says which CPUs were online to check that "
           "every CPU is there";
  if (!m.online->value.subset_of(placed))
    return dirs + " stop short of the online CPUs " + m.online->value.to_list() +
           " (sos copies them one by one until its size limit)";
  std::vector<CpuPlace> online;
  for (const CpuPlace& p : f.sysfs_places)
    if (m.online->value.test(p.cpu)) online.push_back(p);
  offer_topology(m, online, {f.sysfs_dir, 0, "cpuN/topology of CPUs " + m.online->value.to_list()});
  return "";
}

void offer_topologies(const CpuFiles& f, MachineFacts& m) {
  const std::string sysfs_why = sysfs_topology(f, m);
  if (!sysfs_why.empty()) m.notes.push_back(sysfs_why);
  for (const CpuFiles::Table& t : f.tables) {
    std::vector<CpuPlace> places;
    for (const LscpuRow& r : t.rows)
      if (r.online.value_or(true) && r.socket && r.core)
        places.push_back({r.cpu, *r.socket, core_key(*r.socket, 0, *r.core)});
    if (!places.empty()) offer_topology(m, places, {t.file, 0, "lscpu -e: SOCKET, CORE"});
  }
  for (const CpuFiles::Cpuinfo& c : f.cpuinfos) {
    std::vector<CpuPlace> places;
    for (const CpuinfoCpu& cpu : c.cpus)
      if (cpu.physical_id && cpu.core_id)
        places.push_back(
            {cpu.processor, *cpu.physical_id, core_key(*cpu.physical_id, 0, *cpu.core_id)});
    if (places.size() == c.cpus.size() && !places.empty())
      offer_topology(m, places, {c.file, 0, "physical id, core id"});
  }
  for (const LscpuSummary& s : f.summaries) {
    if (s.sockets) offer(m, "sockets", m.sockets, *s.sockets, show_count);
    if (s.cores_per_socket)
      offer(m, "cores_per_socket", m.cores_per_socket, *s.cores_per_socket, show_count);
    if (s.threads_per_core)
      offer(m, "threads_per_core", m.threads_per_core, *s.threads_per_core, show_count);
  }
  if (!m.sockets && !sysfs_why.empty())
    for (const char* fact : {"sockets", "cores_per_socket", "threads_per_core"})
      m.not_found(fact, sysfs_why + "; no lscpu or /proc/cpuinfo gives it");
}

void offer_numa(const CpuFiles& f, MachineFacts& m) {
  if (!f.sysfs_numa.empty())
    offer(m, "numa_nodes", m.numa_nodes, {f.sysfs_numa, f.sysfs_numa_from}, show_numa);
  for (const LscpuSummary& s : f.summaries)
    if (!s.numa.empty()) offer(m, "numa_nodes", m.numa_nodes, {s.numa, s.numa_from}, show_numa);
  for (const CpuFiles::Table& t : f.tables) {
    std::map<unsigned, CpuSet> nodes;
    for (const LscpuRow& r : t.rows)
      if (r.online.value_or(true) && r.node)
        nodes.try_emplace(*r.node, kMaxCpus).first->second.set(r.cpu);
    std::vector<NumaNode> v;
    for (auto& [node, cpus] : nodes) v.push_back({node, cpus});
    if (!v.empty())
      offer(m, "numa_nodes", m.numa_nodes, {v, {{t.file, 0, "lscpu -e: NODE"}}}, show_numa);
  }
  for (const auto& [nodes, o] : f.numactl)
    if (!nodes.empty()) offer(m, "numa_nodes", m.numa_nodes, {nodes, {o}}, show_numa);
}

void not_read_reasons(const CpuFiles& f, MachineFacts& m) {
  std::string cut;
  if (!f.sysfs_cpu_dirs.empty())
    cut = "; the per-CPU directories (" + f.sysfs_cpu_dirs.to_list() + ", " +
          std::to_string(f.sysfs_cpu_dirs.count()) +
          " of them) do not give it: sos copies them one by one until its size limit and stops "
          "(at 64 on large machines)";
  if (!m.cpus)
    m.not_found("cpus",
                "no sys/devices/system/cpu/present or possible, no lscpu, no online "
                "and offline lists" +
                    cut);
  if (!m.online)
    m.not_found("online", "no sys/devices/system/cpu/online, lscpu or /proc/cpuinfo" + cut);
  const std::pair<const char*, bool> topology[] = {
      {"sockets", m.sockets.has_value()},
      {"cores_per_socket", m.cores_per_socket.has_value()},
      {"threads_per_core", m.threads_per_core.has_value()}};
  for (const auto& [fact, read] : topology)
    if (!read)
      m.not_found(fact,
                  "no lscpu, /proc/cpuinfo with physical and core ids, or per-CPU sysfs "
                  "topology");
  if (!m.numa_nodes)
    m.not_found("numa_nodes",
                "no sys/devices/system/node/nodeN/cpulist, lscpu or numactl "
                "--hardware");
}

}  // namespace

void add_lscpu(CpuFiles& f, std::string_view text, const std::string& file) {
  if (is_lscpu_table(text))
    f.tables.push_back({parse_lscpu_table(text, file), file});
  else
    f.summaries.push_back(parse_lscpu(text, file));
}

void read_cpu_files(const MachineRoot& r, CpuFiles& f) {
  read_sysfs_lists(r, f);
  read_sysfs_topology(r, f);
  read_sysfs_numa(r, f);
  for (const char* rel : {"sos_commands/processor/lscpu", "sos_commands/processor/lscpu_-ae",
                          "sos_commands/processor/lscpu_-e"})
    if (const auto text = r.read(rel)) add_lscpu(f, *text, r.file(rel));
  if (const auto text = r.read("proc/cpuinfo"))
    f.cpuinfos.push_back({parse_cpuinfo(*text, r.file("proc/cpuinfo")), r.file("proc/cpuinfo")});
  const std::string numactl = "sos_commands/numa/numactl_--hardware";
  if (const auto text = r.read(numactl))
    f.numactl.emplace_back(parse_numactl_hardware(*text, r.file(numactl)),
                           Origin{r.file(numactl), 0, "numactl --hardware"});
}

void cpu_facts(const CpuFiles& f, MachineFacts& m) {
  offer_cpus(f, m);
  offer_online(f, m);
  offer_topologies(f, m);
  offer_numa(f, m);
  if (m.online && m.cpus && !m.online->value.subset_of(m.cpus->value))
    m.notes.push_back("online CPUs " + (m.online->value - m.cpus->value).to_list() +
                      " are outside the CPUs " + m.cpus->value.to_list());
  not_read_reasons(f, m);
}

}  // namespace isolab
