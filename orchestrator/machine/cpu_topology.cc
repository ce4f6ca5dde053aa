#include "machine/cpu_topology.h"

#include <map>
#include <set>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"
#include "machine/decimal.h"

namespace isolab {

namespace {

std::optional<unsigned> to_unsigned(std::string_view s) { return small_decimal(trim_space(s)); }

[[noreturn]] void bad_line(const std::string& file, size_t line, const std::string& what,
                           std::string_view text) {
  throw Error(file + ":" + std::to_string(line) + ": " + what + ": '" +
              sanitize_excerpt(trim_space(text), 120) + "'");
}

unsigned need_unsigned(std::string_view v, const std::string& file, size_t line,
                       std::string_view text) {
  const auto n = to_unsigned(v);
  if (!n) bad_line(file, line, "not a number", text);
  return *n;
}

CpuSet need_cpulist(std::string_view v, const std::string& file, size_t line,
                    std::string_view text) {
  try {
    return parse_cpulist(trim_space(v), kMaxCpus);
  } catch (const CpuListError& e) {
    bad_line(file, line, std::string("not a CPU list (") + e.what() + ")", text);
  }
}

// lscpu's summary keys, each with the slot it fills.
enum class LscpuKey { kCpus, kOnline, kOffline, kThreads, kCores, kSockets };
constexpr std::pair<std::string_view, LscpuKey> kLscpuKeys[] = {
    {"CPU(s)", LscpuKey::kCpus},
    {"On-line CPU(s) list", LscpuKey::kOnline},
    {"Off-line CPU(s) list", LscpuKey::kOffline},
    {"Thread(s) per core", LscpuKey::kThreads},
    {"Core(s) per socket", LscpuKey::kCores},
    {"Socket(s)", LscpuKey::kSockets},
};

void lscpu_value(LscpuSummary& s, LscpuKey k, std::string_view v, const Origin& o,
                 std::string_view text) {
  auto count = [&](std::optional<Fact<unsigned>>& slot) {
    slot = Fact<unsigned>{need_unsigned(v, o.file, o.line, text), {o}};
  };
  auto list = [&](std::optional<Fact<CpuSet>>& slot) {
    slot = Fact<CpuSet>{need_cpulist(v, o.file, o.line, text), {o}};
  };
  switch (k) {
    case LscpuKey::kCpus:
      return count(s.cpus);
    case LscpuKey::kOnline:
      return list(s.online);
    case LscpuKey::kOffline:
      return list(s.offline);
    case LscpuKey::kThreads:
      return count(s.threads_per_core);
    case LscpuKey::kCores:
      return count(s.cores_per_socket);
    case LscpuKey::kSockets:
      return count(s.sockets);
  }
}

// "NUMA node3 CPU(s):" -> 3.
std::optional<unsigned> numa_key(std::string_view key) {
  constexpr std::string_view kStart = "NUMA node", kEnd = " CPU(s)";
  if (key.rfind(kStart, 0) != 0 || key.size() <= kStart.size() + kEnd.size() ||
      key.substr(key.size() - kEnd.size()) != kEnd)
    return std::nullopt;
  return to_unsigned(key.substr(kStart.size(), key.size() - kStart.size() - kEnd.size()));
}

std::optional<unsigned> cell(std::string_view v, const std::string& file, size_t line,
                             std::string_view text) {
  if (v == "-") return std::nullopt;
  return need_unsigned(v, file, line, text);
}

}  // namespace

CpuSet parse_sysfs_cpulist(std::string_view text, const std::string& file) {
  const std::string_view v = trim_space(text);
  try {
    return parse_cpulist(v, kMaxCpus);
  } catch (const CpuListError& e) {
    throw Error(file + ": not a CPU list: " + e.what());
  }
}

LscpuSummary parse_lscpu(std::string_view text, const std::string& file) {
  LscpuSummary s;
  size_t n = 0;
  for (std::string_view l : text_lines(text)) {
    ++n;
    const size_t colon = l.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = trim_space(l.substr(0, colon));
    const std::string_view value = l.substr(colon + 1);
    const Origin o{file, n, "lscpu: " + std::string(key)};
    if (const auto node = numa_key(key)) {
      s.numa.push_back({*node, need_cpulist(value, file, n, l)});
      s.numa_from.push_back(o);
      continue;
    }
    for (const auto& [name, k] : kLscpuKeys)
      if (key == name) lscpu_value(s, k, value, o, l);
  }
  return s;
}

bool is_lscpu_table(std::string_view text) {
  const auto lines = text_lines(text);
  if (lines.empty()) return false;
  // A summary line is "Key: value" ("CPU op-mode(s):  32-bit"); the table's header has no
  // ": " although a column may be named "L1d:L1i:L2:L3".
  const std::string_view head = trim_space(lines.front());
  const auto words = split_space(head);
  return words.size() > 1 && words.front() == "CPU" && head.find(": ") == std::string_view::npos &&
         head.back() != ':';
}

std::vector<LscpuRow> parse_lscpu_table(std::string_view text, const std::string& file) {
  const auto lines = text_lines(text);
  if (lines.empty()) throw Error(file + ": empty; expected lscpu -e output");
  const auto header = split_space(lines.front());
  std::map<std::string_view, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  if (!col.count("CPU")) bad_line(file, 1, "no CPU column in the lscpu -e header", lines.front());
  std::vector<LscpuRow> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    const auto w = split_space(lines[i]);
    if (w.empty()) continue;
    if (w.size() != header.size())
      bad_line(file, i + 1,
               std::to_string(w.size()) + " columns where the header has " +
                   std::to_string(header.size()),
               lines[i]);
    auto at = [&](std::string_view name) -> std::optional<std::string_view> {
      const auto it = col.find(name);
      return it == col.end() ? std::nullopt : std::optional(w[it->second]);
    };
    LscpuRow r;
    r.line = i + 1;
    r.cpu = need_unsigned(*at("CPU"), file, r.line, lines[i]);
    if (auto v = at("NODE")) r.node = cell(*v, file, r.line, lines[i]);
    if (auto v = at("SOCKET")) r.socket = cell(*v, file, r.line, lines[i]);
    if (auto v = at("CORE")) r.core = cell(*v, file, r.line, lines[i]);
    if (auto v = at("ONLINE")) {
      if (*v != "yes" && *v != "no") bad_line(file, r.line, "ONLINE is not yes or no", lines[i]);
      r.online = *v == "yes";
    }
    rows.push_back(r);
  }
  return rows;
}

std::vector<CpuinfoCpu> parse_cpuinfo(std::string_view text, const std::string& file) {
  std::vector<CpuinfoCpu> cpus;
  size_t n = 0;
  for (std::string_view l : text_lines(text)) {
    ++n;
    const size_t colon = l.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = trim_space(l.substr(0, colon));
    const std::string_view value = l.substr(colon + 1);
    if (key == "processor") {
      cpus.push_back({need_unsigned(value, file, n, l), std::nullopt, std::nullopt, n});
    } else if (key == "physical id" || key == "core id") {
      if (cpus.empty()) bad_line(file, n, "before any 'processor' line", l);
      (key == "core id" ? cpus.back().core_id : cpus.back().physical_id) =
          need_unsigned(value, file, n, l);
    }
  }
  return cpus;
}

std::vector<NumaNode> parse_numactl_hardware(std::string_view text, const std::string& file) {
  std::vector<NumaNode> nodes;
  size_t n = 0;
  for (std::string_view l : text_lines(text)) {
    ++n;
    const auto w = split_space(l);
    if (w.size() < 3 || w[0] != "node" || w[2] != "cpus:") continue;
    NumaNode node{need_unsigned(w[1], file, n, l), CpuSet(kMaxCpus)};
    for (size_t i = 3; i < w.size(); ++i) node.cpus.set(need_unsigned(w[i], file, n, l));
    nodes.push_back(std::move(node));
  }
  return nodes;
}

unsigned long core_key(unsigned package, unsigned die, unsigned core_id) {
  return (static_cast<unsigned long>(package) << 40) | (static_cast<unsigned long>(die) << 20) |
         core_id;
}

std::optional<Topology> topology_of(const std::vector<CpuPlace>& places, std::string& why) {
  if (places.empty()) {
    why = "no CPU placed";
    return std::nullopt;
  }
  std::map<unsigned, std::set<unsigned long>> cores_of_socket;
  std::map<unsigned long, unsigned> threads_of_core;
  for (const CpuPlace& p : places) {
    cores_of_socket[p.socket].insert(p.core);
    ++threads_of_core[p.core];
  }
  std::set<size_t> cores;
  for (const auto& [socket, c] : cores_of_socket) cores.insert(c.size());
  std::set<unsigned> threads;
  for (const auto& [core, t] : threads_of_core) threads.insert(t);
  if (cores.size() > 1 || threads.size() > 1) {
    why =
        "the sockets do not all have the same number of cores, or the cores the same number "
        "of online threads";
    return std::nullopt;
  }
  return Topology{static_cast<unsigned>(cores_of_socket.size()),
                  static_cast<unsigned>(*cores.begin()), *threads.begin()};
}

}  // namespace isolab
