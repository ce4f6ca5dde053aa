#include "kernel/config_check.h"

#include <cctype>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"

namespace isolab {

namespace {

bool valid_symbol(std::string_view name) {
  if (name.size() <= 7 || name.substr(0, 7) != "CONFIG_") return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// "# CONFIG_X is not set" -> "CONFIG_X"; anything else -> "".
std::string not_set_symbol(std::string_view line) {
  if (line.empty() || line.front() != '#') return "";
  line = trim_space(line.substr(1));
  constexpr std::string_view kSuffix = " is not set";
  if (line.size() <= kSuffix.size() || line.substr(line.size() - kSuffix.size()) != kSuffix)
    return "";
  std::string_view name = line.substr(0, line.size() - kSuffix.size());
  return valid_symbol(name) ? std::string(name) : "";
}

}  // namespace

std::vector<ConfigAssignment> parse_kconfig_text(std::string_view text, const std::string& origin) {
  std::vector<ConfigAssignment> out;
  int lineno = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view raw =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++lineno;
    std::string_view line = trim_space(raw);
    if (line.empty()) continue;
    if (line.front() == '#') {
      std::string name = not_set_symbol(line);
      if (!name.empty()) out.push_back({name, "n", lineno});
      continue;
    }
    std::size_t eq = line.find('=');
    std::string_view name = eq == std::string_view::npos ? line : trim_space(line.substr(0, eq));
    if (eq == std::string_view::npos || !valid_symbol(name))
      throw Error(origin + ":" + std::to_string(lineno) + ": not a Kconfig assignment: '" +
                  sanitize_excerpt(line, 200) + "'");
    out.push_back({std::string(name), std::string(trim_space(line.substr(eq + 1))), lineno});
  }
  return out;
}

std::map<std::string, std::string> parse_final_config(std::string_view text,
                                                      const std::string& origin) {
  std::map<std::string, std::string> out;
  for (auto& a : parse_kconfig_text(text, origin)) out[a.name] = a.value;
  return out;
}

std::string ConfigMismatch::message() const {
  std::string wanted_text = wanted == "n" ? "# " + name + " is not set" : name + "=" + wanted;
  std::string final_text;
  bool dropped;
  if (!final_value) {
    final_text = "absent";
    dropped = true;
  } else if (*final_value == "n") {
    final_text = "is not set";
    dropped = true;
  } else {
    final_text = name + "=" + *final_value;
    dropped = false;
  }
  return origin + ": " + wanted_text + " was " + (dropped ? "dropped" : "changed") +
         " by olddefconfig (final: " + final_text + "); check its dependencies";
}

std::vector<ConfigMismatch> check_config_survival(const std::vector<ConfigFragment>& fragments,
                                                  std::string_view final_config) {
  // Last assignment wins, as in merge_config.sh; remember first-seen order for the report.
  std::map<std::string, ConfigMismatch> wanted;
  std::vector<std::string> order;
  for (const auto& f : fragments) {
    for (auto& a : parse_kconfig_text(f.text, f.origin)) {
      auto [it, inserted] = wanted.try_emplace(a.name);
      if (inserted) order.push_back(a.name);
      it->second.origin = f.origin;
      it->second.line = a.line;
      it->second.name = a.name;
      it->second.wanted = a.value;
    }
  }
  auto final_map = parse_final_config(final_config, ".config");
  std::vector<ConfigMismatch> out;
  for (const auto& name : order) {
    ConfigMismatch m = wanted.at(name);
    auto it = final_map.find(name);
    if (it == final_map.end()) {
      if (m.wanted == "n") continue;
    } else {
      if (it->second == m.wanted) continue;
      m.final_value = it->second;
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace isolab
