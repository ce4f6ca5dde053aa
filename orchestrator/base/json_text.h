// Serializing JSON that may hold untrusted text.
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

}  // namespace isolab
