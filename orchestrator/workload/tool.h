// One workload tool as isolab knows it, in one definition (workload/tools/<tool>.cc): the spec
// fields it takes and their checks, the guest step that runs it, the parser of what the step
// sent back, the metric names that parser can give, its instruction-count metrics, and the
// binary it needs in the guest image. Tools are found by their spec name in the registry
// (workload/registry.h); registering one is one line of workload/tools/tools.def.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmdline/cpulist.h"
#include "guest/channel.h"
#include "guest/init_script.h"
#include "parse/insn_count.h"
#include "parse/metrics.h"
#include "spec/json_object.h"
#include "spec/spec.h"
#include "workload/insn_metrics.h"
#include "workload/workload.h"

namespace isolab {

struct WorkloadTool;

// What a tool's guest step is built from: the workload's CPUs (its `cpus` resolved), the
// guest's partition, and the margin added to the tool's own run time for its timeout.
struct StepInput {
  CpuSet cpus;
  const CpuPartition* partition = nullptr;
  int margin_s = 0;  // TimeoutSpec::workload_margin_s
  // The tool of the workload's load (w.load's), looked up by workload/step.h; nullptr without
  // a load.
  const WorkloadTool* load = nullptr;
};

// The records of one step: "<wl>.stdout" (out, with the step's exit status as rc), its
// stderr (nullptr when absent) and all the cell's records (for the tool's other outputs).
struct StepRecords {
  const ChannelContents* all = nullptr;
  const ChannelRecord* out = nullptr;
  const ChannelRecord* err = nullptr;
  const WorkloadTool* load = nullptr;  // as StepInput::load
};

struct WorkloadTool {
  const char* name = "";  // the spec's "tool"
  // Where it may stand: a workload of its own and/or the load of a workload that takes one.
  bool as_workload = true;
  bool as_load = false;
  bool takes_load = false;  // its workload may have "load" (a tool with as_load)

  // Spec. Defaults of the common fields (a load's cpus default is "housekeeping" whatever the
  // tool); min_duration_s is the lower bound of duration_s.
  const char* default_cpus = "isolated";
  int default_duration_s = 10;
  int min_duration_s = 0;
  // The fields only this tool takes: another tool's workload giving one is refused with
  // "only a <tool> workload takes this field".
  std::vector<std::string> own_fields = {};
  // Reads mode, iterations, warmup_iterations and the tool's own fields from `o` into `w`
  // (the common fields are read already) and checks them. Throws SpecError with the pointer.
  void (*read_fields)(SpecObject& o, WorkloadSpec& w) = nullptr;

  // Guest: fills s.script, s.outputs and s.timeout_s (s.name and s.trace_cpus are set).
  void (*step)(const WorkloadSpec& w, const StepInput& in, GuestStep& s) = nullptr;
  // As a load (as_load): the sh lines that start `load` in the background on `cpus` for
  // `duration_s` with its outputs named "load.*" (added to s.outputs), leaving its pid in $lp.
  std::string (*load_script)(const WorkloadSpec& load, const CpuSet& cpus, int duration_s,
                             GuestStep& s) = nullptr;

  // Parsing: the step's metrics (named "<wl>.<metric>"), failures and notes into `o`. May throw
  // for unparsable output (the caller makes it a failure quoting the error).
  void (*parse)(const WorkloadSpec& w, const StepRecords& r, WorkloadOutcome& o) = nullptr;
  // As a load of workload `w` (w.load holds it): its records "<wl>.load.*" into metrics
  // "<wl>.load.<metric>".
  void (*parse_load)(const WorkloadSpec& w, const ChannelContents& ch,
                     WorkloadOutcome& o) = nullptr;
  // The metric names the parser can give for `w`, without the "<wl>." prefix; '*' stands for
  // any run of characters (a stressor's metrics: "cpu.*"). Without the trace-derived
  // "noise.*" every step can give, and without a load's (the registry adds those).
  std::vector<std::string> (*metric_names)(const WorkloadSpec& w) = nullptr;

  // Instruction counts of the step from the TCG plugin (workload/insn_metrics.h): the tool's
  // per-operation metrics from its marked regions; nullptr for a tool without markers.
  void (*plugin_metrics)(const WorkloadSpec& w, const InsnStep& step, const ChannelRecord& out,
                         InsnCellOutcome& o) = nullptr;

  // The binary put in the guest image's /usr/bin: an absolute host path, or the name of one
  // of isolab's own guest tools (guest-tools/, found by the caller). always: in every image
  // (the default image's cache key holds it), else only when a spec uses the tool.
  const char* guest_binary = "";
  bool binary_always = false;
};

// ---- helpers for the tools' definitions ----

// argv words, each sh-quoted, joined by spaces.
std::string sh_words(const std::vector<std::string>& argv);

// The workload's JSON pointer in its spec; a workload made in code is named by its name.
std::string workload_pointer(const WorkloadSpec& w);

// Adds every metric of m to o.metrics as "<prefix><name>".
void add_prefixed(WorkloadOutcome& o, const std::string& prefix, const Metrics& m);

// Marks the outcome failed with `why` unless it failed already (the first reason stays).
void fail_once(WorkloadOutcome& o, const std::string& why);

// Reads mode, iterations and warmup_iterations as every tool accepts them: mode default "",
// iterations default 0, warmup_iterations default iterations / 10.
void read_iteration_fields(SpecObject& o, WorkloadSpec& w);

// parse(text), or nullopt when it throws isolab::Error: for a second reader of a tool's output
// (its instruction counts), which leaves the error to the tool's own parser.
template <class Parse>
auto parsed_or_none(Parse parse, std::string_view text) -> std::optional<decltype(parse(text))> {
  try {
    return parse(text);
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace isolab
