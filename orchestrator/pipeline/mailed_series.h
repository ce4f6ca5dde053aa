// A variant's patch entry may be a mailed series in one mbox (kernel/mbox_series.h): before
// anything is built, each such entry is replaced by the series' patches in order.
#pragma once

#include <filesystem>

#include "spec/spec.h"
#include "sys/process.h"

namespace isolab {

// Replaces, in each variant's patches, every file holding more than one mail message
// (is_mbox_series) by its series' patches, written under cache_dir/series (content-addressed).
// Throws SpecError with the pointer /variants/<i>/patches and a message that starts with the
// mbox's path and names the patch: "...: patch 2/3 of v2 is missing (the mbox has 1/3, 3/3)".
void expand_mailed_series(Spec& spec, const std::filesystem::path& cache_dir,
                          ProcessRunner& runner);

}  // namespace isolab
