// Reading one JSON document from untrusted text (a spec, a result.json, a calibration): the
// parse nlohmann does, plus the refusals it lacks. nlohmann keeps the last of two equal keys
// and copies a parsed document recursively (a document nested 150 000 deep overflows the stack
// on the first copy), so both are refused before the document is built.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace isolab {

// The deepest nesting of arrays and objects accepted (the top-level value is depth 1). Far above
// any document isolab writes or reads (result.json nests under 10 deep), far below what
// exhausts an 8 MiB stack.
inline constexpr std::size_t kMaxJsonDepth = 512;

// Parses text as one JSON document (RFC 8259). Throws isolab::Error, each message starting
// with "<what>: " and naming where the input went wrong by line and column (1-based, in bytes):
//   "nested deeper than 512 at line L column C"
//   "duplicate key 'K' at /json/pointer (line L column C)"
//   "not valid JSON at line L column C (byte B): <nlohmann's reason>" (also for a number no
//   double holds, such as 1e999: "number overflow parsing '1e999'")
// No message quotes more than 80 bytes of text (control and non-ASCII bytes as '?').
nlohmann::json parse_json_document(std::string_view text, const std::string& what);

// Reads file and parse_json_document()s it. Throws isolab::Error "<file> is a directory",
// "<file> is N bytes, over the M MiB limit" (max_bytes, a multiple of 1 MiB), "<file>: cannot
// read: <errno text>", or one of parse_json_document's with what = the file's path.
nlohmann::json read_json_document(const std::filesystem::path& file, std::size_t max_bytes);

// "<path> is a directory" when path names a directory, else "" (for the commands that take a
// file and would otherwise fail on a directory with a misleading message).
std::string directory_given(const std::filesystem::path& path);

}  // namespace isolab
