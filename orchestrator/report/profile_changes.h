// The kernel functions whose instructions changed most (compare/profile_diff.h), as lines of
// compare's text and Markdown outputs.
#pragma once

#include <string>
#include <vector>

#include "compare/profile_diff.h"

namespace isolab {

// One line per change: "vmstat-syscall CPU 5: fold_diff 2e+03 -> 9.3e+06 (+9.3e+06) kernel
// instructions per boot"; a bounded side reads "<=3.7e+06" and its change "at least +1.5e+07".
// Empty input gives no line.
std::vector<std::string> profile_change_lines(const std::vector<ProfileChange>& changes);

}  // namespace isolab
