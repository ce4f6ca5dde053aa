// The registry of workload tools (workload/tool.h), by their spec name, and the metric names a
// spec's workload can give (for checking the spec's compare section before a run).
#pragma once

#include <string>
#include <vector>

#include "spec/spec.h"
#include "workload/tool.h"

namespace isolab {

// Every tool, in the order of workload/tools/tools.def.
const std::vector<const WorkloadTool*>& workload_tools();

// The tool named `name` ("cyclictest"); nullptr when there is none.
const WorkloadTool* find_workload_tool(const std::string& name);

// The tool of a parsed workload. Throws isolab::Error naming the workload when its tool is
// unknown (a workload not made by the spec parser).
const WorkloadTool& tool_of(const WorkloadSpec& w);

// The guest binaries (WorkloadTool::guest_binary) of the tools every guest image holds
// (always = true), or of the others that `workloads` or their loads use (always = false): each
// binary once, in the registry's order.
std::vector<std::string> guest_binaries(const std::vector<WorkloadSpec>& workloads, bool always);

// The metric names workload `w` can give, as patterns in which '*' stands for any run of
// characters: "<wl>.<name>" for each of its tool's names, "<wl>.load.<name>" for its load's,
// and "<wl>.noise.*" (the trace- and instruction-derived counts of every step).
std::vector<std::string> workload_metric_patterns(const WorkloadSpec& w);

// Whether a metric name can match `pattern`: `name` itself when prefix is false, else some
// name that starts with `name` (a thresholds_pct key "latency.*" is the prefix "latency.").
bool metric_pattern_matches(const std::string& pattern, const std::string& name, bool prefix);

}  // namespace isolab
