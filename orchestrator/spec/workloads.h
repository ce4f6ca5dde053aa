// The spec's "workloads" section, read with the workload registry (workload/registry.h): the
// fields every tool takes, then the tool's own (WorkloadTool::read_fields). Part of parse_spec
// (spec/spec.h); errors are SpecErrors with the JSON pointer of the field.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spec/workload_spec.h"

namespace isolab {

// A name of the spec ("spec", "variant", "workload" in the message): 1-40 characters of
// A-Z a-z 0-9 _ . - and neither "." nor "..". Throws SpecError at `ptr`.
void check_spec_name(const std::string& name, const std::string& ptr, const char* what);

// Parses "workloads" (nullptr when absent): a non-empty array of workloads with unique names,
// each a tool of the registry standing where it may (a load only under a tool that takes one).
std::vector<WorkloadSpec> parse_workloads(const nlohmann::json* workloads);

}  // namespace isolab
