// A reader of the small YAML subset stress-ng writes (its --yaml file), into JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace isolab {

// The reader behind parse/stressng.h parse_stressng_yaml() (text at most 64 MiB).
// We use our own rather than yaml-cpp: stress-ng writes a fixed, tiny subset (block mappings and
// sequences by indentation, "- key: value" items, flow [ ] and { } collections, plain and
// quoted scalars, "---"/"..." markers), and a full YAML library would be one more dependency
// for it. Scalars become JSON strings (no type guessing), mappings objects, sequences arrays.
// Not supported: anchors, tags, block scalars (| >), multi-line plain scalars, several
// documents (reading stops at "..." or a second "---"). Throws isolab::Error with the line.
nlohmann::json parse_yaml_subset(std::string_view text);

}  // namespace isolab
