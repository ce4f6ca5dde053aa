// Serializing JSON that may hold untrusted text. Header-only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace isolab {

// nlohmann::json::dump() throws type_error 316 on a string that is not valid UTF-8, and guest
// or tool output put into a document can be anything. Every document isolab writes goes
// through this: invalid bytes become U+FFFD instead of aborting the write (and losing what was
// measured). indent < 0: compact.
inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// One RFC 6901 reference token: "~" -> "~0", "/" -> "~1" (for the JSON pointers that name a
// bad field in error messages).
inline std::string json_pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

}  // namespace isolab
