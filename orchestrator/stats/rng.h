// Seeded, platform-independent random draws for the compare area. Header-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

namespace isolab {

// Uniform index in [0, n) from a std::mt19937_64, by rejection sampling (draws above the largest
// multiple of n are redrawn, so there is no modulo bias). Unlike
// std::uniform_int_distribution, whose algorithm is implementation-defined, this gives the same
// sequence with every standard library, so seeded results in tests and reports are repeatable.
// n must be > 0.
inline std::size_t uniform_index(std::mt19937_64& rng, std::size_t n) {
  const std::uint64_t range = static_cast<std::uint64_t>(n);
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  std::uint64_t x;
  do {
    x = rng();
  } while (x >= limit);
  return static_cast<std::size_t>(x % range);
}

}  // namespace isolab
