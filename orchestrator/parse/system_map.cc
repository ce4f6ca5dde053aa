#include "parse/system_map.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <iterator>

#include "base/error.h"

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

}  // namespace isolab
