// isolab cmdline LINE | -f FILE: a kernel command line analysed as the kernel reads it.
#pragma once

#include "cli/subcommand.h"

namespace isolab {

// Declares `isolab cmdline`'s options (CLI11) on `sub`; the action runs it and returns its exit
// status.
Action declare_cmdline(CLI::App& sub);

}  // namespace isolab
