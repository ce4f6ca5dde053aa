// The checks a kernel test robot runs on a posted series, with the kernel's own scripts from the
// series' base commit: scripts/checkpatch.pl on each patch and scripts/checkincludes.pl (the
// robot's "includecheck") on the files the series touches. Their findings are BuildWarnings
// (kernel/build_log.h), so that compare lists those B adds over A by file, class and message as
// it does for compiler warnings.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/build_log.h"
#include "spec/kernel_source.h"
#include "sys/process.h"

namespace isolab {

// `checkpatch.pl --terse --showfile --show-types --no-summary` output: lines
// "<file>:<line>: <ERROR|WARNING|CHECK>:<TYPE>: <message>" ("mm/vmstat.c:2015:
// ERROR:MISSING_SIGN_OFF: Missing Signed-off-by: line(s)"; the file is empty for the commit
// message). Each becomes {file (or "(commit message)"), line, 0, "checkpatch:<TYPE>",
// "<patch>: <LEVEL>: <message>"}; other lines are ignored. Sanitized; never throws.
std::vector<BuildWarning> parse_checkpatch(std::string_view output, const std::string& patch);

// `checkincludes.pl FILE...` output: "<file>: <header> is included more than once." becomes
// {file, 0, 0, "includecheck", "<header> is included more than once"}; "No duplicate includes
// found." and other lines are ignored. Sanitized; never throws.
std::vector<BuildWarning> parse_checkincludes(std::string_view output);

// The robot's findings for a series on base_commit of the git repository source_repo:
// checkpatch on each patch (a patch's findings name it by file name), and the includecheck
// findings of the touched .c/.h files after the series that the base did not have. Works in
// work_dir (created, then removed, also when it throws). Throws isolab::Error when git cannot give
// the scripts or the touched files, or a patch does not apply to them; the scripts' own exit status
// is not an error (checkpatch exits 1 when it finds something). `checks` says which of the two run
// (its w1 and sparse are kernel/extra_warnings.h's); with neither, nothing runs.
std::vector<BuildWarning> robot_checks(const std::filesystem::path& source_repo,
                                       const std::string& base_commit,
                                       const std::vector<std::filesystem::path>& patches,
                                       ProcessRunner& runner, const std::filesystem::path& work_dir,
                                       const RobotChecks& checks = {});

}  // namespace isolab
