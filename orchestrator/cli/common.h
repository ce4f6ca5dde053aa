// What several subcommands of isolab's command line share: where the guest tools built beside
// the isolab binary are, input given inline or as a file, the --parallel value, and the history
// index a run or import joins.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "history/history.h"

namespace isolab {

// The directory of the running isolab binary (/proc/self/exe), or the current directory when
// that link cannot be read.
std::filesystem::path self_dir();

// A program CMake builds beside the isolab binary (vmstat-overhead, madvise-pressure,
// page-fault-bench, isolab-mark): $env_var when set, else self_dir() / file.
std::filesystem::path beside_isolab(const char* env_var, const char* file);

// `file`'s contents when given ('-': stdin; at most 64 MiB; a directory is isolab::Error
// "<file> is a directory"), else `arg`.
std::string read_input(const std::string& arg, const std::string& file);

// --parallel: "" -> -1 (the spec's), "auto" -> 0, else N in [1, 256]. Throws isolab::Error
// naming the value otherwise.
int parse_parallel(const std::string& v);

// Runs `step` on the history database of `results_dir` (RESULTS_DIR/isolab.db); a failure
// there is a warning on stderr, not an error of the command.
void with_history(const std::filesystem::path& results_dir,
                  const std::function<void(HistoryDb&)>& step);

}  // namespace isolab
