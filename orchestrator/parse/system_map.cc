#include "parse/system_map.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <iterator>

#include "base/error.h"
#include "base/files.h"

namespace isolab {

namespace {

bool is_text_type(std::string_view t) { return t == "t" || t == "T" || t == "w" || t == "W"; }

// Splits "a b c" on single spaces into exactly three non-empty fields.
std::optional<std::array<std::string_view, 3>> three_fields(std::string_view line) {
  std::array<std::string_view, 3> f;
  for (std::size_t i = 0; i < 2; ++i) {
    const std::size_t sp = line.find(' ');
    if (sp == std::string_view::npos || sp == 0) return std::nullopt;
    f[i] = line.substr(0, sp);
    line.remove_prefix(sp + 1);
  }
  if (line.empty() || line.find(' ') != std::string_view::npos) return std::nullopt;
  f[2] = line;
  return f;
}

}  // namespace

SystemMap parse_system_map(std::string_view text) {
  SystemMap map;
  std::uint64_t etext = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const auto f = three_fields(line);
    if (!f) continue;
    std::uint64_t addr = 0;
    const auto [end, ec] =
        std::from_chars(f->at(0).data(), f->at(0).data() + f->at(0).size(), addr, 16);
    if (ec != std::errc() || end != f->at(0).data() + f->at(0).size()) continue;
    if (f->at(2) == "_etext") etext = addr;
    if (f->at(2) == "_stext") map.stext = addr;
    if (is_text_type(f->at(1))) map.text.push_back({addr, std::string(f->at(2))});
  }
  if (map.text.empty()) throw Error("System.map: no text symbol");
  std::stable_sort(
      map.text.begin(), map.text.end(),
      [](const KernelSymbol& a, const KernelSymbol& b) { return a.address < b.address; });
  map.text_end = etext ? etext : map.text.back().address;
  return map;
}

std::optional<std::string> kernel_function_at(const SystemMap& map, std::uint64_t pc) {
  if (pc >= map.text_end) return std::nullopt;
  auto it = std::upper_bound(map.text.begin(), map.text.end(), pc,
                             [](std::uint64_t v, const KernelSymbol& s) { return v < s.address; });
  if (it == map.text.begin()) return std::nullopt;
  return std::prev(it)->name;
}

namespace {

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string kernel_relocation_problem(const SystemMap& map, std::string_view kallsyms_line) {
  while (!kallsyms_line.empty() && (kallsyms_line.back() == '\n' || kallsyms_line.back() == '\r'))
    kallsyms_line.remove_suffix(1);
  if (kallsyms_line.empty())
    return "the guest sent no _stext line from /proc/kallsyms (a kernel without "
           "CONFIG_KALLSYMS?), so it cannot be checked against System.map";
  const auto f = three_fields(kallsyms_line);
  std::uint64_t addr = 0;
  if (f && f->at(2) == "_stext") {
    const auto [end, ec] =
        std::from_chars(f->at(0).data(), f->at(0).data() + f->at(0).size(), addr, 16);
    if (ec != std::errc() || end != f->at(0).data() + f->at(0).size()) addr = 0;
  }
  if (!f || f->at(2) != "_stext" ||
      (addr == 0 && f->at(0).find_first_not_of('0') != std::string_view::npos))
    return "the guest's /proc/kallsyms line for _stext is not \"<address> <type> _stext\": \"" +
           sanitize_excerpt(kallsyms_line, 80) + "\"";
  if (addr == 0)
    return "the guest's /proc/kallsyms shows _stext at 0 (kptr_restrict hides addresses), so it "
           "cannot be checked against System.map";
  if (!map.stext) return "System.map has no _stext, so the guest's kernel cannot be checked";
  if (addr == *map.stext) return "";
  const bool up = addr > *map.stext;
  return "the kernel runs at " + hex(addr) + " (/proc/kallsyms _stext), its System.map has it at " +
         hex(*map.stext) + ": relocated by " + (up ? "+" : "-") +
         hex(up ? addr - *map.stext : *map.stext - addr) + ", as KASLR does";
}

}  // namespace isolab
