#include "gate/interrupts.h"

#include <algorithm>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"
#include "cmdline/cpulist.h"

namespace isolab {

namespace {

std::optional<uint64_t> parse_u64(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  uint64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

}  // namespace

const InterruptRow* InterruptsSnapshot::find(std::string_view name) const {
  for (const auto& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

namespace {

// The header "           CPU0       CPU2 ..." (online CPUs only, so columns map by name).
std::vector<unsigned> parse_interrupts_header(std::string_view line, size_t lineno) {
  std::vector<unsigned> cpus;
  const auto where = "/proc/interrupts line " + std::to_string(lineno) + ": ";
  for (auto t : split_space(line)) {
    if (t.size() < 4 || t.substr(0, 3) != "CPU")
      throw Error(where + "expected a header of CPU columns, got '" + sanitize_excerpt(line, 80) +
                  "'");
    auto n = parse_u64(t.substr(3));
    if (!n || *n >= kMaxCpus)
      throw Error(where + "bad CPU column '" + sanitize_excerpt(t, 40) + "'");
    if (std::find(cpus.begin(), cpus.end(), *n) != cpus.end())
      throw Error(where + "CPU column '" + sanitize_excerpt(t, 40) + "' repeated");
    cpus.push_back(static_cast<unsigned>(*n));
  }
  return cpus;
}

// Rows printed with one system-wide count whatever the number of CPUs: x86 ERR and MIS
// (arch_show_interrupts), arm64 Err (arch/arm64/kernel/irq.c).
bool is_system_wide_row(std::string_view name) {
  return name == "ERR" || name == "MIS" || name == "Err";
}

// "<name>:<counts...> <description>": nullopt when malformed.
std::optional<InterruptRow> parse_interrupts_row(std::string_view line,
                                                 const std::vector<unsigned>& cpus) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  InterruptRow row;
  row.name = std::string(trim_space(line.substr(0, colon)));
  if (row.name.empty() || row.name.size() > 64 ||
      std::any_of(row.name.begin(), row.name.end(),
                  [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  std::string_view rest = line.substr(colon + 1);
  std::vector<uint64_t> values;
  size_t p = 0;
  while (values.size() < cpus.size()) {
    size_t b = p;
    while (b < rest.size() && std::isspace(static_cast<unsigned char>(rest[b]))) ++b;
    size_t e = b;
    while (e < rest.size() && !std::isspace(static_cast<unsigned char>(rest[e]))) ++e;
    auto n = parse_u64(rest.substr(b, e - b));
    if (!n) break;
    values.push_back(*n);
    p = e;
  }
  row.description = std::string(trim_space(rest.substr(p)));
  if (values.size() == 1 && (cpus.size() > 1 || is_system_wide_row(row.name))) {
    row.total = values[0];
  } else if (values.size() == cpus.size()) {
    for (size_t i = 0; i < values.size(); ++i) row.counts[cpus[i]] = values[i];
  } else {
    return std::nullopt;
  }
  return row;
}

}  // namespace

InterruptsSnapshot parse_proc_interrupts(std::string_view text) {
  InterruptsSnapshot s;
  const auto lines = text_lines(text);
  size_t i = 0;
  while (i < lines.size() && trim_space(lines[i]).empty()) ++i;
  if (i < lines.size()) s.cpus = parse_interrupts_header(lines[i], i + 1);
  if (s.cpus.empty()) throw Error("/proc/interrupts: no header of CPU columns");
  for (++i; i < lines.size(); ++i) {
    std::string_view l = trim_space(lines[i]);
    if (l.empty()) continue;
    if (auto row = parse_interrupts_row(l, s.cpus))
      s.rows.push_back(std::move(*row));
    else if (++s.malformed_rows == 1)
      s.first_malformed_line = i + 1;
  }
  return s;
}

}  // namespace isolab
