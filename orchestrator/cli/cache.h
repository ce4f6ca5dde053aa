// isolab cache list | prune: the kernel cache's entries, or the least recently used ones removed.
#pragma once

#include "cli/subcommand.h"

namespace isolab {

// Declares `isolab cache`'s options (CLI11) on `sub`; the action runs it and returns its exit
// status.
Action declare_cache(CLI::App& sub);

}  // namespace isolab
