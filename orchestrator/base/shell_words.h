// Writing an argv as a POSIX shell command line a person can run again by hand.
#pragma once

#include <string>
#include <vector>

namespace isolab {

// argv as one sh(1) command line: each word as it is when made only of
// [A-Za-z0-9_@%+=:,./-], else in single quotes with each ' written '\'' (POSIX, Shell Command
// Language, 2.2.3 Single-Quotes); an empty word is ''. Words are separated by one space.
std::string shell_command(const std::vector<std::string>& argv);

}  // namespace isolab
