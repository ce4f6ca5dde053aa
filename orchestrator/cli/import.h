// isolab import --tool T --label L FILE...: outputs captured on a real machine as a run directory.
#pragma once

#include "cli/subcommand.h"

namespace isolab {

// Declares `isolab import`'s options (CLI11) on `sub`; the action runs it and returns its exit
// status.
Action declare_import(CLI::App& sub);

}  // namespace isolab
