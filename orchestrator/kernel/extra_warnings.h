// The warnings a kernel test robot adds to a build's own: the touched .c files compiled again
// at W=1 (gcc's extra warnings and scripts/kernel-doc) and checked by sparse (C=2), once at
// the series' base and once after it, in the build directory the variants share; the findings
// are the ones the series adds. Pure helpers here; kernel.cc runs the passes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/build_log.h"

namespace isolab {

// The objects of the touched files that this build compiled: "mm/vmstat.c" -> "mm/vmstat.o"
// when build_dir/mm/vmstat.o exists. Headers and other files give none (W=1 on every includer
// of a header would rebuild half the tree). In the order given, unique.
std::vector<std::string> compiled_objects(const std::vector<std::string>& touched,
                                          const std::filesystem::path& build_dir);

// make O=<build_dir> -j<jobs> LOCALVERSION=-isolab-<key12> [CC=ccache gcc] [W=1]
//      [C=2 CHECK=sparse] <objects...>   (cwd: the source worktree). C=2 checks the objects
// whether or not make rebuilds them.
std::vector<std::string> extra_warnings_argv(const std::filesystem::path& build_dir, int jobs,
                                             const std::string& build_key, bool use_ccache, bool w1,
                                             bool sparse, const std::vector<std::string>& objects);

// The warnings of one pass's log: parse_build_warnings (kernel/build_log.h), with the class of
// a warning that has no gcc "[-W...]" set by its form: "<file>:<line>: warning: ..." (no
// column) is scripts/kernel-doc's ("kernel-doc"), "<file>:<line>:<col>: warning: ..." is
// sparse's ("sparse"); gcc's keep theirs. Never throws.
std::vector<BuildWarning> parse_extra_warnings(std::string_view log, const std::string& source_dir);

// What the series adds: the warnings of `after` whose (file, class, message) occurs more often
// there than in `before` (lines move when a patch adds lines, so they are not compared), less
// those the regular build already reports (`regular`, same file, class and message). In the
// order of `after`.
std::vector<BuildWarning> added_warnings(const std::vector<BuildWarning>& before,
                                         const std::vector<BuildWarning>& after,
                                         const std::vector<BuildWarning>& regular);

}  // namespace isolab
