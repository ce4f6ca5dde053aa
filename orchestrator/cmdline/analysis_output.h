// The analysis of a command line and the isolation it implies, written out: JSON
// (`isolab cmdline --json`, a run's expected_isolation) and the text of `isolab cmdline`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cmdline/analyze.h"

namespace isolab {

// Every field of the analysis (docs/commands.md "isolab cmdline --json" names them).
nlohmann::json to_json(const Analysis& a);

// The analysis as `isolab cmdline` prints it: the guest, the CPU lists, then the parameters
// kept, dropped and replaced with their reasons.
std::string to_text(const Analysis& a);

// What the gate checks in the guest, as result.json's expected_isolation records it: the CPU
// sets as cpulists ("vcpus", "possible", "online", "housekeeping", "isolated", "nohz_full",
// "rcu_offload" (null when not offloaded), "irq_default_affinity" and its hex mask, "irq_avoid",
// "managed_irq_avoid", "workqueue_cpumask"), the flags asked for, "required_params" and
// "expected_kernel_messages".
nlohmann::json to_json(const ExpectedIsolation& e);

}  // namespace isolab
