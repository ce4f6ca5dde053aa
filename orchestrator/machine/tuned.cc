#include "machine/tuned.h"

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"
#include "machine/decimal.h"

namespace isolab {

namespace {

[[noreturn]] void bad(const std::string& file, size_t line, const std::string& what,
                      std::string_view text) {
  throw Error(file + ":" + std::to_string(line) + ": " + what + ": '" +
              sanitize_excerpt(trim_space(text), 120) + "'");
}

// "name=value" of a line, or nullopt when the line has no '=' before any other text.
std::optional<std::pair<std::string, std::string>> assignment(std::string_view l) {
  const size_t eq = l.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  const std::string_view name = trim_space(l.substr(0, eq));
  if (name.empty() || name.find_first_of(" \t[") != std::string_view::npos) return std::nullopt;
  return std::make_pair(std::string(name), std::string(trim_space(l.substr(eq + 1))));
}

bool skipped(std::string_view l) {
  l = trim_space(l);
  return l.empty() || l.front() == '#';
}

// One item of a TuneD CPU list into `set`.
void tuned_item(std::string_view item, CpuSet& set, const std::string& where) {
  if (item.size() > 2 && item[0] == '0' && (item[1] == 'x' || item[1] == 'X')) {
    try {
      set = set | parse_cpumask_hex(item.substr(2), kMaxCpus);
    } catch (const CpuListError& e) {
      throw Error(where + ": " + e.what());
    }
    return;
  }
  const size_t dash = item.find('-');
  const auto lo = small_decimal(item.substr(0, dash));
  const auto hi = dash == std::string_view::npos ? lo : small_decimal(item.substr(dash + 1));
  if (!lo || !hi || *lo > *hi || *hi >= kMaxCpus)
    throw Error(where + ": '" + sanitize_excerpt(item, 60) +
                "' is not a CPU, a range A-B or a 0x mask (TuneD cpulist_unpack())");
  for (unsigned c = *lo; c <= *hi; ++c) set.set(c);
}

}  // namespace

std::vector<TunedSetting> parse_tuned_variables(std::string_view text, const std::string& file) {
  std::vector<TunedSetting> out;
  size_t n = 0;
  for (std::string_view l : text_lines(text)) {
    ++n;
    if (skipped(l)) continue;
    const auto a = assignment(l);
    if (!a) bad(file, n, "not a 'name=value' line of a TuneD variables file", l);
    out.push_back({"", a->first, a->second, n});
  }
  return out;
}

std::vector<TunedSetting> parse_tuned_conf(std::string_view text, const std::string& file) {
  std::vector<TunedSetting> out;
  std::string section;
  size_t n = 0;
  for (std::string_view l : text_lines(text)) {
    ++n;
    if (skipped(l)) continue;
    const std::string_view t = trim_space(l);
    if (t.front() == '[') {
      if (t.back() != ']' || t.size() < 3) bad(file, n, "a section line must be '[name]'", l);
      section = std::string(trim_space(t.substr(1, t.size() - 2)));
      continue;
    }
    const auto a = assignment(l);
    if (!a) bad(file, n, "not a '[section]' or 'name=value' line of a TuneD profile", l);
    if (section.empty()) bad(file, n, "a setting before any [section]", l);
    out.push_back({section, a->first, a->second, n});
  }
  return out;
}

const TunedSetting* find_setting(const std::vector<TunedSetting>& s, std::string_view section,
                                 std::string_view name) {
  const TunedSetting* found = nullptr;
  for (const TunedSetting& t : s)
    if (t.section == section && t.name == name) found = &t;
  return found;
}

std::optional<std::string> parse_active_profile(std::string_view text) {
  for (std::string_view l : text_lines(text)) {
    constexpr std::string_view kAdm = "Current active profile:";
    std::string_view t = trim_space(l);
    if (t.rfind(kAdm, 0) == 0) t = trim_space(t.substr(kAdm.size()));
    if (!t.empty() && t.front() != '#') return std::string(t);
  }
  return std::nullopt;
}

CpuSet parse_tuned_cpulist(std::string_view value, const std::string& where) {
  if (value.find("${") != std::string_view::npos)
    throw Error(where + ": '" + sanitize_excerpt(value, 80) +
                "' refers to other TuneD variables, which TuneD expands on the machine");
  CpuSet in(kMaxCpus), out(kMaxCpus);
  size_t pos = 0;
  while (pos <= value.size()) {
    size_t comma = value.find(',', pos);
    if (comma == std::string_view::npos) comma = value.size();
    std::string_view item = trim_space(value.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) continue;
    const bool exclude = item.front() == '^';
    if (exclude) item.remove_prefix(1);
    tuned_item(item, exclude ? out : in, where);
  }
  return in - out;
}

}  // namespace isolab
