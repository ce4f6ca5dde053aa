// isolab machine PATH: the customer's machine from what the customer hands over (a sos report,
// a must-gather, a PerformanceProfile, a TuneD variables file), each fact with its source.
#pragma once

#include "cli/subcommand.h"

namespace isolab {

// Declares `isolab machine`'s options (CLI11) on `sub`; the action runs it and returns its exit
// status.
Action declare_machine(CLI::App& sub);

}  // namespace isolab
