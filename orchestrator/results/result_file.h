// Reading a run's result.json from disk (the document itself: results/result.h types it).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

namespace isolab {

// Loads <path>/result.json, or path itself when it names a file. Throws isolab::Error naming
// the file when it is missing, larger than 512 MiB, or not valid JSON (with the byte offset).
nlohmann::json load_result(const std::filesystem::path& run_dir_or_file);

// <path>/result.json when path is a directory, else path itself.
std::filesystem::path result_file(const std::filesystem::path& run_dir_or_file);

// A JSON document of at most 512 MiB (a result.json, or a calibration beside it), parsed.
// Throws isolab::Error "<file>: cannot read: ...", "<file>: N bytes, larger than the ... byte
// limit" or "<file>: not valid JSON at byte N: ...".
nlohmann::json read_json_file(const std::filesystem::path& file);

}  // namespace isolab
