// isolab doctor [SPEC]: what this host can do, and the host CPU plan of a spec's guest (exit 1
// when the plan is refused); isolab doctor --insn-plugin: only the instruction-counting plugin's
// preflight (exit 1 when QEMU refuses the plugin or it counts wrong).
#pragma once

#include "cli/subcommand.h"

namespace isolab {

// Declares `isolab doctor`'s options (CLI11) on `sub`; the action runs it and returns its exit
// status.
Action declare_doctor(CLI::App& sub);

}  // namespace isolab
