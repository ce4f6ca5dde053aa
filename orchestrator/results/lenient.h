// Lenient reading of the open-ended parts of result.json (what results/result.h keeps as JSON:
// spec, host, hosts, comparison_key, a cell's metrics, histograms and every field in `rest`): a
// field's value, or a default when the record is no object or the field is absent or of another
// type. The readers of results/ are built on these; other areas read through those readers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace isolab::results {

// The string j[key]; dflt when j is no object or the field is absent or no string.
std::string str_or(const nlohmann::json& j, const char* key, const std::string& dflt = "");

// The boolean j[key]; dflt when j is no object or the field is absent or no boolean.
bool bool_or(const nlohmann::json& j, const char* key, bool dflt);

// j[key]; null when j is no object or the field is absent.
const nlohmann::json& field(const nlohmann::json& j, const char* key);

// A value as error messages and difference lines quote it: a string bare, null as "(absent)",
// else compact JSON (invalid UTF-8 replaced by U+FFFD).
std::string value_text(const nlohmann::json& v);

// A scalar as a report shows it: a string as written, a number or boolean as its JSON text,
// anything else (null, an array, an object) "".
std::string scalar_text(const nlohmann::json& v);

}  // namespace isolab::results
