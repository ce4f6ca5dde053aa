// The text report word-wraps its answer at 80 columns (report/text.h); a test that looks for a
// sentence of it reads the text with each line break and the indentation after it as one space.
#pragma once

#include <string>

namespace isolab {

// s with every "\n" followed by spaces replaced by one space; other "\n" kept.
inline std::string unwrapped(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' && i + 1 < s.size() && s[i + 1] == ' ') {
      out += ' ';
      while (i + 1 < s.size() && s[i + 1] == ' ') ++i;
      continue;
    }
    out += s[i];
  }
  return out;
}

}  // namespace isolab
