// What every workload tool shares (workload/tool.h): the guest's CPU partition, a workload's
// `cpus` resolved against it, and what a step's records give (WorkloadOutcome). The step itself
// and the parse of its records go through the tool's definition: workload/step.h.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmdline/cpulist.h"
#include "guest/channel.h"
#include "guest/init_script.h"
#include "parse/metrics.h"
#include "spec/spec.h"

namespace isolab {

// The guest's CPU partition for one boot.
struct CpuPartition {
  CpuSet all;           // 0..vcpus-1
  CpuSet isolated;      // isolcpus domain ∪ nohz_full (the CPUs a measurement pins to)
  CpuSet housekeeping;  // all minus isolated
};

// Resolves a workload's `cpus` selector ("isolated", "housekeeping", "all" or a cpulist)
// against the partition. Throws SpecError (pointer given) when the result is empty or names
// CPUs the guest does not have.
CpuSet resolve_cpus(const std::string& selector, const CpuPartition& p, const std::string& pointer);

struct WorkloadOutcome {
  Metrics metrics;            // names prefixed "<workload>."
  nlohmann::json histograms;  // {"<workload>": {"unit","bucket_us","counts","overflows"}} or null
  // Per traced CPU evidence of what interrupted it (workload/noise.h step_noise() details), for
  // result.json cells[].noise.<workload>; null when the step was not traced.
  nlohmann::json noise;
  // latency_tracer: {"tracer","max_latency_us","trace_latency_us","task","cpu","wakeup_frames",
  // "switch_frames"} from the max-latency trace (parse/latency_trace.h), for result.json
  // cells[].latency_traces.<workload>; null without a latency tracer.
  nlohmann::json latency_trace;
  std::vector<std::string> notes;  // e.g. "thread 2: no samples"
  // The versions the tools reported themselves ({"stress-ng": "0.15.06"}, from stress-ng's YAML
  // system-info stress-ng-version, docs/sources.md [s4]), sanitized; for result.json
  // cells[].tool_versions.<workload>. Empty when no tool reported one.
  std::map<std::string, std::string> tool_versions;
  bool failed = false;  // the tool crashed, exited non-zero or its output is unusable
  std::string failure;  // why, quoting the raw text (sanitized)
  // The tool ran but did not measure what was asked (a requested stress-ng stressor was
  // skipped; docs/sources.md [s3]): the cell is "invalid" with this reason. Empty when valid.
  std::string invalid;
};

}  // namespace isolab
