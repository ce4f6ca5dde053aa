// "Did you mean": the known name closest to a mistyped one, for messages about parameters and
// flags the kernel does not know.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

// The Levenshtein distance (insertions, deletions and substitutions of one byte each) between
// a and b.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The name of `known` nearest to `given` when it is at most max_distance edits away and not
// `given` itself (the first such name on a tie); nullopt otherwise.
std::optional<std::string> nearest_name(std::string_view given,
                                        const std::vector<std::string_view>& known,
                                        std::size_t max_distance = 2);

}  // namespace isolab
