#include "guest/setup_check.h"

#include <charconv>
#include <sstream>

#include "base/error.h"
#include "base/files.h"

namespace isolab {

namespace {

// Runs of spaces, tabs and newlines as one space, without leading or trailing blanks.
std::string squeeze(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool blank = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (!blank)
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

}  // namespace

std::vector<SysctlReadback> parse_sysctl_record(std::string_view text) {
  std::vector<SysctlReadback> out;
  int n = 0;
  for (const auto& line : lines_of(text)) {
    ++n;
    auto t1 = line.find('\t');
    auto t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    auto bad = [&](const char* why) {
      return Error("sysctls line " + std::to_string(n) + ": " + why + ": '" +
                   sanitize_excerpt(line, 120) + "'");
    };
    if (t2 == std::string::npos) throw bad("expected name, status and value separated by tabs");
    SysctlReadback r;
    r.name = line.substr(0, t1);
    std::string_view st(line.data() + t1 + 1, t2 - t1 - 1);
    auto [p, ec] = std::from_chars(st.data(), st.data() + st.size(), r.write_status);
    if (ec != std::errc() || p != st.data() + st.size() || st.empty())
      throw bad("the status is not an integer");
    r.value = squeeze(std::string_view(line).substr(t2 + 1));
    out.push_back(std::move(r));
  }
  return out;
}

std::string sysctl_mismatch(const std::map<std::string, std::string>& wanted,
                            const std::string* record) {
  if (wanted.empty()) return "";
  if (!record) return "sysctls: the guest sent no report of its sysctl writes";
  std::vector<SysctlReadback> got;
  try {
    got = parse_sysctl_record(*record);
  } catch (const Error& e) {
    return std::string("sysctl report: ") + e.what();
  }
  for (const auto& [name, value] : wanted) {
    const SysctlReadback* r = nullptr;
    for (const auto& g : got)
      if (g.name == name) r = &g;
    if (!r) return "sysctl " + name + ": not in the guest's report";
    if (r->write_status != 0)
      return "sysctl " + name + ": could not be written (exit status " +
             std::to_string(r->write_status) + "; does the kernel have it?)";
    if (r->value != squeeze(value))
      return "sysctl " + name + ": wanted '" + value + "', read back '" +
             sanitize_excerpt(r->value, 100) + "'";
  }
  return "";
}

std::string numa_layout_mismatch(const std::vector<std::string>& wanted_cpus,
                                 const std::string* node_online, const std::string* numa_nodes) {
  if (wanted_cpus.empty()) return "";
  if (!node_online || !numa_nodes)
    return "NUMA: the guest has no /sys/devices/system/node (kernel without CONFIG_NUMA?)";
  const std::string want_online =
      wanted_cpus.size() == 1 ? "0" : "0-" + std::to_string(wanted_cpus.size() - 1);
  const std::string online = squeeze(*node_online);
  if (online != want_online)
    return "NUMA: the guest has nodes '" + sanitize_excerpt(online, 100) + "' online, wanted '" +
           want_online + "' (does the kernel read the ACPI SRAT: CONFIG_ACPI_NUMA?)";
  std::map<std::string, std::string> cpus_of;  // "node0" -> "0-1"
  for (const auto& line : lines_of(*numa_nodes)) {
    std::istringstream in(line);
    std::string node, cpus;
    in >> node >> cpus;
    cpus_of[node] = cpus;
  }
  for (std::size_t i = 0; i < wanted_cpus.size(); ++i) {
    const std::string node = "node" + std::to_string(i);
    auto it = cpus_of.find(node);
    std::string got = it == cpus_of.end() ? "(absent)" : it->second;
    if (got != wanted_cpus[i])
      return "NUMA: " + node + " has CPUs '" + sanitize_excerpt(got, 100) + "', wanted '" +
             wanted_cpus[i] + "'";
  }
  return "";
}

}  // namespace isolab
