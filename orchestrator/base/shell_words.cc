#include "base/shell_words.h"

#include <algorithm>
#include <string_view>

namespace isolab {

namespace {

bool plain(std::string_view w) {
  constexpr std::string_view kSafe = "_@%+=:,./-";
  return !w.empty() && std::all_of(w.begin(), w.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kSafe.find(c) != std::string_view::npos;
  });
}

std::string shell_quoted(std::string_view w) {
  if (plain(w)) return std::string(w);
  std::string out = "'";
  for (const char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string shell_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& w : argv) out += (out.empty() ? "" : " ") + shell_quoted(w);
  return out;
}

}  // namespace isolab
