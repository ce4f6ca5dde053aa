// Lenient readers of result.json fields for this area (not a public API of the area): a field's
// value, or a default when it is absent or of another type.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace isolab::compare_detail {

// The string value of j[key]; dflt when j is no object or the field is absent or no string.
inline std::string str_or(const nlohmann::json& j, const char* key, const std::string& dflt = "") {
  if (!j.is_object()) return dflt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return dflt;
  return it->get<std::string>();
}

// The boolean value of j[key]; dflt when j is no object or the field is absent or no boolean.
inline bool bool_or(const nlohmann::json& j, const char* key, bool dflt) {
  if (!j.is_object()) return dflt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_boolean()) return dflt;
  return it->get<bool>();
}

// j[key]; null when j is no object or the field is absent.
inline nlohmann::json field(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nlohmann::json() : *it;
}

// A value as an error message quotes it: a string bare, null as "(absent)", else compact JSON
// (invalid UTF-8 replaced).
inline std::string value_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "(absent)";
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace isolab::compare_detail
