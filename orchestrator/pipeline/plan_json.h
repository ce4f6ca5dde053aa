// A dry run's plan as JSON (`isolab run --dry-run --json`).
#pragma once

#include <nlohmann/json.hpp>

#include "pipeline/run_plan.h"
#include "spec/spec.h"

namespace isolab {

// The plan: the guest (command line, vCPUs, topology, partition, the command line's analysis,
// "added_params": what isolab adds to the line: {"every_boot": "console=ttyS0 panic=-1",
// "tcg": "no_timer_check",
// "tracing": {"bytes", "params", "when"}, "insn_count": [{"param", "reason"}]} for the boots the
// instruction-counting plugin counts),
// with /customer the fidelity table (pipeline/fidelity.h), the variants, the boot order, the
// cells in order and each workload's guest step.
nlohmann::json describe_plan(const Spec& spec, const GuestDerivation& guest);

}  // namespace isolab
