// Whether a variant's patches apply, in order, to its base, found before anything is built:
// each patch is applied with `git apply --cached` to a temporary index holding the base
// commit's tree (git read-tree), in the source repository the build will use, so no work tree
// is checked out or written. A mail (git format-patch, or a patch split from an mbox) is read
// with `git mailinfo` first, as git am reads it; a bare diff is applied as it is.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kernel/source.h"
#include "sys/process.h"

namespace isolab {

// Throws isolab::Error naming the first patch that does not apply, its number in the series,
// its subject and its first failing hunk, from git apply's own report:
//   "patch 2 of 3 (<path>, '[PATCH 2/3] mm/vmstat: ...'): hunk #1 of mm/vmstat.c does not
//    apply (at line 1234)"
// work_dir is created and removed.
void check_series_applies(const SourceTree& src, const std::vector<std::filesystem::path>& patches,
                          ProcessRunner& runner, const std::filesystem::path& work_dir);

}  // namespace isolab
