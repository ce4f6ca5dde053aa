// The open-ended fields of a variant (result.json variants.<name>, results/result.h
// VariantRecord) read for compare, calibrate and report: its build's warnings and the files its
// series touches, the kernel it boots, and its patches as the report lists them.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernel/build_log.h"
#include "results/result.h"

namespace isolab::results {

// What compare weighs of a variant's build (written by pipeline/run.cc).
struct BuildFacts {
  // build_warnings (kernel/build_log.h JSON form); nullopt when it is absent, null (the log
  // could not be read) or no array.
  std::optional<std::vector<BuildWarning>> warnings;
  std::set<std::string> touched_files;  // the strings of touched_files; empty when no array
};
// `pointer` is the variant's JSON pointer ("/variants/<name>"). Throws isolab::SpecError at
// pointer + "/build_warnings/<i>" with build_warning_from_json's message for a malformed
// warning.
BuildFacts build_facts(const VariantRecord& v, const std::string& pointer);

// The build_key of the kernel the variant boots: a nightly run's baseline variant boots a stored
// run's kernel, whose key its baseline_of record names (pipeline/baseline.h); otherwise the
// variant's own build_key; "" when absent. Throws nlohmann::json::type_error (as json::value
// does) when baseline_of.build_key is present and no string.
std::string booted_build_key(const VariantRecord& v);

// One of patches as the report lists it; each field its scalar text (results/lenient.h).
struct PatchShown {
  std::string subject, path, sha256;
};
// One per element of patches (an element that is no object shows nothing); empty when patches
// is absent or no array.
std::vector<PatchShown> patches_shown(const VariantRecord& v);

// The kernel a run recorded for a variant, as a later run boots it again (a nightly's baseline,
// pipeline/baseline.h; a resumed run): variants.<variant> of an unchecked document, each field
// "" (patches []) when absent.
struct RecordedKernel {
  std::string bzimage, system_map, kernel_release, build_key;  // paths as written
  nlohmann::json patches = nlohmann::json::array();
};
// nullopt when doc is no object or variants.<variant> is absent or no object. Throws
// nlohmann::json::type_error (as json::value does) when a field is present with another type.
std::optional<RecordedKernel> recorded_kernel(const nlohmann::json& doc,
                                              const std::string& variant);

}  // namespace isolab::results
