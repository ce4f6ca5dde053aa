// A random lower-case alphanumeric token, for run ids and guest nonces. Header-only.
#pragma once

#include <cstddef>
#include <random>
#include <string>

namespace isolab {

// n characters from [a-z0-9], drawn from std::random_device (not for cryptographic use: a
// nonce only has to be unpredictable to a guest that has not seen it yet).
inline std::string random_token(std::size_t n) {
  static const char* al = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += al[rd() % 36];
  return s;
}

}  // namespace isolab
