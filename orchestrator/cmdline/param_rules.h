// The classification table of kernel command-line parameters: for each, whether a guest boot
// keeps it, drops it (a host-only setting) or replaces it (the orchestrator sets its own), and
// why (cmdline/analyze.h applies it to a customer's command line).
#pragma once

#include <string_view>
#include <vector>

namespace isolab {

enum class ParamAction { kKept, kDropped, kReplaced };
const char* action_name(ParamAction a);  // "kept", "dropped", "replaced"

// One row of the classification table: a normalized parameter name, or a prefix when the
// pattern ends with '.' or '*' (e.g. "rd.", "rcutree.").
struct ParamRule {
  std::string_view pattern;
  ParamAction action;
  std::string_view reason;
  bool isolation = false;  // an isolation parameter the guest /proc/cmdline must carry
};
const std::vector<ParamRule>& classification_table();
// The rule for a normalized name (exact match first, then the longest prefix); nullptr if none.
const ParamRule* find_rule(std::string_view normalized_name);

}  // namespace isolab
