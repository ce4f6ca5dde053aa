#include "parse/guest_tool_json.h"

#include "base/error.h"
#include "base/text.h"
#include "parse/text_util.h"

namespace isolab::parse_detail {

using nlohmann::json;

void tool_fail(std::string_view tool, const std::string& why, std::string_view text) {
  throw Error(std::string(tool) + ": " + why + ": " + quote(text, 200));
}

ToolJson parse_tool_json(std::string_view text, std::string_view tool) {
  ToolJson out;
  for (auto l : text_lines(text)) {
    auto t = trim(l);
    if (!t.empty() && t.front() == '{') out.line = t;
  }
  if (out.line.empty()) tool_fail(tool, "no JSON line in the output", text);
  json& j = out.j;
  try {
    j = json::parse(out.line);
  } catch (const json::out_of_range& e) {
    tool_fail(tool, std::string("a value is out of range (") + e.what() + ")", out.line);
  } catch (const json::parse_error& e) {
    tool_fail(tool, "not valid JSON (byte " + std::to_string(e.byte) + ")", out.line);
  }
  if (!j.is_object()) tool_fail(tool, "not a JSON object", out.line);
  // j.value() would throw type_error 302 for a non-string "tool" (found by fuzzing).
  if (auto t = j.find("tool"); t == j.end() || !t->is_string() || t->get<std::string>() != tool)
    tool_fail(tool, "field \"tool\" is not \"" + std::string(tool) + "\"", out.line);
  if (auto v = j.find("version"); v == j.end() || *v != 1)
    tool_fail(tool, "field \"version\" is not 1", out.line);
  return out;
}

}  // namespace isolab::parse_detail
