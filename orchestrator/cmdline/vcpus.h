// The vCPU count a command line implies: a step of analyze() (cmdline/analyze.h, "Deriving the
// vCPU count"), with the machine hints of cmdline/line_hints.h.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "cmdline/analysis.h"

namespace isolab {

// The CPU list a token carries: the value of nohz_full=, rcu_nocbs= and irqaffinity=, the
// value of isolcpus= without its leading flag words; nullopt for another token or no value.
std::optional<std::string_view> isolation_cpu_list(const CmdlineToken& t);

// Sets a.vcpus, vcpus_needed, vcpus_reason and cpu_count_unknown from the CPU lists of `kept`
// (isolcpus=, nohz_full=, rcu_nocbs=, irqaffinity=) and the read hints in a.hints: the count is
// the largest need of either, and the reason names the list or hint that decided. When a hint
// needs more CPUs than the lists, the hint's housekeeping CPUs beyond the lists are named in the
// reason as kept. options.vcpus overrides (isolab::Error outside 1..kMaxCpus; a warning when
// below the need). Above kMaxGuestVcpus the count is capped with a warning.
void derive_vcpus(const AnalyzeOptions& opt, const std::vector<const CmdlineToken*>& kept,
                  Analysis& a);

}  // namespace isolab
