// Conventions shared by the rt-tests tools' outputs (cyclictest, oslat): the bare non-finite
// numbers of their --json files and the version as they print it. Pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

// rt-tests prints doubles with "%f"-style formats, and glibc renders NaN as "nan" or "-nan" and
// infinity as "inf" (src/lib/rt-utils.c and the tools' write_stats()/write_summary_json()):
// no JSON parser accepts them. Returns `text` with every such bare word outside a string
// replaced by null, so that one empty thread does not make the whole file unreadable.
std::string rt_tests_null_nonfinite(std::string_view text);

// {tool: version} for cells[].tool_versions, the version exactly as printed (sanitized, at most
// 40 bytes); empty when `printed` is empty. rt-tests prints its version with "%1.2f"
// (docs/sources.md [t7]): a printed form like "2.10" whose last digit is 0 stands for two
// releases (2.1 and 2.10), and then *notes (when given) gets one line saying so.
std::map<std::string, std::string> rt_tests_versions(const std::string& tool,
                                                     const std::string& printed,
                                                     std::vector<std::string>* notes);

}  // namespace isolab
