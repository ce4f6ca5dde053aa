// Small helpers shared by the parsers in this area (not a public API of the area).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace isolab::parse_detail {

// Double-quoted, sanitized, cut excerpt of untrusted text for error messages.
std::string quote(std::string_view text, std::size_t max_bytes = 160);

std::string_view trim(std::string_view s);

// Whole-token numbers (std::from_chars): nullopt on any trailing junk, overflow, or a value
// that is not finite.
std::optional<long> to_long(std::string_view s);
std::optional<double> to_double(std::string_view s);

// Splits on runs of spaces and tabs.
std::vector<std::string_view> split_ws(std::string_view s);

// "<what>: line <lineno> "<quoted line>": <why>", the error of a line a parser refuses.
Error line_error(std::string_view what, std::size_t lineno, std::string_view line,
                 const std::string& why);

}  // namespace isolab::parse_detail
