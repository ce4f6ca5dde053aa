// TuneD's files (redhat-performance/tuned): a profile's variables file, a profile's tuned.conf
// (also the `data` of an OpenShift Tuned object), the active profile, and TuneD's CPU lists.
//
// Formats:
//  - A variables file (/etc/tuned/cpu-partitioning-variables.conf, realtime-variables.conf; a
//    profile includes it with [variables] include=): "name=value" lines, spaces around '='
//    allowed, '#' starts a comment line, blank lines skipped. Another line is an error.
//  - tuned.conf: "[section]" lines, then "name=value" lines (configobj syntax, as TuneD reads
//    it; '#' comment lines). A value is kept as written, "${...}" references unexpanded.
//  - /etc/tuned/active_profile: the profile name(s) on one line; `tuned-adm active` prints
//    "Current active profile: NAME".
//  - TuneD CPU lists (isolated_cores=, no_balance_cores=; tuned/utils/commands.py
//    cpulist_unpack()): comma-separated items, each a CPU, a range A-B, a "0x" hex mask, or
//    one of those after '^' to exclude it from the others.
// Errors: isolab::Error "FILE:LINE: ..." naming the line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmdline/cpulist.h"

namespace isolab {

struct TunedSetting {
  std::string section;  // "" for a variables file
  std::string name, value;
  size_t line = 0;
};

std::vector<TunedSetting> parse_tuned_variables(std::string_view text, const std::string& file);
std::vector<TunedSetting> parse_tuned_conf(std::string_view text, const std::string& file);

// The last value of `name` in `section` (TuneD keeps the last), or nullopt.
const TunedSetting* find_setting(const std::vector<TunedSetting>& s, std::string_view section,
                                 std::string_view name);

// The profile named in /etc/tuned/active_profile or `tuned-adm active` output; nullopt when
// the text names none.
std::optional<std::string> parse_active_profile(std::string_view text);

// A TuneD CPU list; isolab::Error naming `where` when an item is none of the forms above.
// A value holding a "${...}" reference throws too: TuneD expands it on the machine, from files
// the dump may not hold.
CpuSet parse_tuned_cpulist(std::string_view value, const std::string& where);

}  // namespace isolab
