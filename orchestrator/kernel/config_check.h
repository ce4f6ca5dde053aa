// Kconfig fragment parsing and the check that every option a fragment sets survived
// `make olddefconfig` (kconfig silently drops or changes options whose dependencies are unmet).
//
// Line grammar (scripts/kconfig/confdata.c conf_read_simple): "CONFIG_<NAME>=<value>" sets an
// option; "# CONFIG_<NAME> is not set" sets a bool/tristate to n; other '#' lines and blank
// lines are comments.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

// One assignment. value is the text after '=' verbatim (strings keep their quotes), or "n"
// for "# CONFIG_X is not set". line is 1-based.
struct ConfigAssignment {
  std::string name;  // "CONFIG_NO_HZ_FULL"
  std::string value;
  int line = 0;
};

// Parses fragment or .config text. Throws isolab::Error "<origin>:<line>: not a Kconfig
// assignment: '<text>'" for a non-comment line that is not CONFIG_<NAME>=<value>.
std::vector<ConfigAssignment> parse_kconfig_text(std::string_view text, const std::string& origin);

// name -> value of a final .config; options written as "is not set" map to "n", options
// absent from the file are absent from the map.
std::map<std::string, std::string> parse_final_config(std::string_view text,
                                                      const std::string& origin);

struct ConfigFragment {
  std::string origin;  // shown in messages: the fragment path as the user gave it
  std::string text;
};

// An option a fragment asked for that the final .config does not have.
struct ConfigMismatch {
  std::string origin;  // the last fragment that set the option (later fragments override)
  int line = 0;
  std::string name;
  std::string wanted;                      // "y", "16", "\"str\"", "n" (is not set)
  std::optional<std::string> final_value;  // nullopt: absent from .config
  // "<origin>: CONFIG_X=y was dropped by olddefconfig (final: is not set); check its
  // dependencies" or "... was changed by olddefconfig (final: CONFIG_X=8) ..."
  std::string message() const;
};

// Compares every option set by the fragments (in merge order; a later fragment's value wins)
// with the final .config. An option wanted as n also matches when absent from .config
// (kconfig omits bools whose dependencies are unmet). Returns all mismatches, in fragment
// order.
std::vector<ConfigMismatch> check_config_survival(const std::vector<ConfigFragment>& fragments,
                                                  std::string_view final_config);

}  // namespace isolab
