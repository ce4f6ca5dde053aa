// The JSON line our timing guest tools print (guest-tools/page-fault-bench.c and
// guest-tools/vmstat-overhead.c: one JSON object on stdout, {"tool":"<name>","version":1,...}):
// finding it in the captured output, parsing it, and checking "tool" and "version". Shared by
// parse/page_fault_bench.cc and parse/vmstat_overhead.cc (not a public API of the area).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace isolab::parse_detail {

// Throws isolab::Error("<tool>: <why>: <text quoted, at most 200 bytes>").
[[noreturn]] void tool_fail(std::string_view tool, const std::string& why, std::string_view text);

struct ToolJson {
  nlohmann::json j;       // a JSON object whose "tool" is the tool's name and "version" is 1
  std::string_view line;  // the line it was parsed from (a view into the text given)
};

// Parses the last line of text that starts with '{' after trimming (other lines, e.g. shell
// noise or the guest console, are ignored). Throws with tool_fail() quoting the text for "no
// JSON line in the output", and quoting the line for "a value is out of range (<nlohmann's
// message>)" (a number beyond double), "not valid JSON (byte N)", "not a JSON object",
// "field \"tool\" is not \"<tool>\"", "field \"version\" is not 1".
ToolJson parse_tool_json(std::string_view text, std::string_view tool);

}  // namespace isolab::parse_detail
