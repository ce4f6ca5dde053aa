#include "workload/step.h"

#include "base/error.h"
#include "base/files.h"
#include "workload/noise.h"
#include "workload/registry.h"

namespace isolab {

GuestStep guest_step(const WorkloadSpec& w, const CpuPartition& p, const TimeoutSpec& t,
                     bool trace) {
  const WorkloadTool& tool = tool_of(w);
  if (!tool.step) throw Error("workload " + w.name + ": " + w.tool + " runs only as a load");
  GuestStep s;
  s.name = w.name;
  StepInput in{resolve_cpus(w.cpus, p, workload_pointer(w) + "/cpus"), &p, t.workload_margin_s,
               w.load ? &tool_of(w.load->front()) : nullptr};
  // A latency tracer replaces the noise trace for its step (the two share the top-level ring
  // buffer; see workload/tools/cyclictest.cc).
  if (trace && !p.isolated.empty() && w.latency_tracer.empty()) s.trace_cpus = p.isolated.to_list();
  tool.step(w, in, s);
  return s;
}

namespace {

// What interrupted the isolated CPUs during the step.
void add_noise(const WorkloadSpec& w, const ChannelContents& ch, WorkloadOutcome& o) {
  const ChannelRecord* enabled = ch.find("trace_events");
  bool tracing = enabled && enabled->data.find("local_timer_entry") != std::string::npos;
  if (ch.find(w.name + ".trace") && !tracing)
    o.notes.emplace_back(
        "trace events were not enabled in the guest (no trace_event= at boot?): no noise counts");
  if (tracing) {
    StepNoise n = step_noise(ch, w.name);
    add_prefixed(o, w.name + ".", n.metrics);
    o.noise = std::move(n.details);
    o.notes.insert(o.notes.end(), n.notes.begin(), n.notes.end());
  }
}

}  // namespace

WorkloadOutcome parse_workload(const WorkloadSpec& w, const ChannelContents& ch) {
  WorkloadOutcome o;
  const std::string p = w.name + ".";
  StepRecords r{&ch, ch.find(p + "stdout"), ch.find(p + "stderr")};
  if (!r.out) {
    fail_once(o, "no output record (the step did not run or the channel ended early)");
    return o;
  }
  if (r.out->rc == 137) fail_once(o, "killed by the step timeout");
  try {
    const WorkloadTool* tool = find_workload_tool(w.tool);
    if (w.load) r.load = &tool_of(w.load->front());
    if (tool && tool->parse) tool->parse(w, r, o);
  } catch (const std::exception& e) {
    fail_once(o, std::string("unparsable output: ") + e.what());
  }
  add_noise(w, ch, o);
  return o;
}

}  // namespace isolab
