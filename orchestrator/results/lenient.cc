#include "results/lenient.h"

#include "base/json_text.h"

namespace isolab::results {

std::string str_or(const nlohmann::json& j, const char* key, const std::string& dflt) {
  if (!j.is_object()) return dflt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return dflt;
  return it->get<std::string>();
}

bool bool_or(const nlohmann::json& j, const char* key, bool dflt) {
  if (!j.is_object()) return dflt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_boolean()) return dflt;
  return it->get<bool>();
}

const nlohmann::json& field(const nlohmann::json& j, const char* key) {
  static const nlohmann::json null;
  if (!j.is_object()) return null;
  auto it = j.find(key);
  return it == j.end() ? null : *it;
}

std::string value_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "(absent)";
  return json_text(v);
}

std::string scalar_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return "";
}

}  // namespace isolab::results
