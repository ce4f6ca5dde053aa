// Whitespace-separated text as the kernel prints it in /proc, sysfs and .config files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace isolab {

// s without leading and trailing whitespace (std::isspace: space, \t, \n, \v, \f, \r).
std::string_view trim_space(std::string_view s);

// The lines of text without their "\n" and a trailing "\r"; a final line without "\n" is kept,
// an empty text has no lines.
std::vector<std::string_view> text_lines(std::string_view text);

// The words of s, split on runs of whitespace (std::isspace).
std::vector<std::string_view> split_space(std::string_view s);

// The text before the first "\n", without trailing "\r" and spaces (a command's one-line
// answer: `git rev-parse`, `make kernelrelease`, a cache index file).
std::string first_line(std::string_view s);

// True when `part` occurs in s (std::string_view::contains is C++23).
bool contains(std::string_view s, std::string_view part);

}  // namespace isolab
