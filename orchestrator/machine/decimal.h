// A count or index as a dump writes it in sysfs, lscpu and TuneD files: a plain decimal.
// Header-only.
#pragma once

#include <optional>
#include <string_view>

namespace isolab {

// s as an unsigned decimal: 1 to 9 digits and nothing else (no sign, no space: callers trim);
// nullopt otherwise. Nine digits keep every value below 2^32.
inline std::optional<unsigned> small_decimal(std::string_view s) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  unsigned n = 0;
  for (char c : s) n = n * 10 + static_cast<unsigned>(c - '0');
  return n;
}

}  // namespace isolab
