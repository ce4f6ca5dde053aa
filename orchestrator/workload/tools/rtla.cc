// rtla (tools/tracing/rtla, Debian package rtla): osnoise top (the noise the selected CPUs saw)
// and timerlat hist (timer wake-up latencies), two tools of one definition.
#include "parse/rtla.h"

#include "workload/tool.h"

namespace isolab {

namespace tool_rtla {
namespace {

bool is_timerlat(const WorkloadSpec& w) { return w.tool == "rtla-timerlat"; }

void read_fields(SpecObject& o, WorkloadSpec& w) {
  if (w.duration_s < 1)
    throw SpecError(o.ptr("duration_s"), "an rtla workload needs a duration of at least 1 s");
  read_iteration_fields(o, w);
}

// The step first keeps the guest's available_tracers, so that a kernel without the tracer is
// told apart from a tool failure, and does not start rtla when the tracer is missing.
void step(const WorkloadSpec& w, const StepInput& in, GuestStep& s) {
  const bool timerlat = is_timerlat(w);
  const std::string tracer = timerlat ? "timerlat" : "osnoise";
  std::vector<std::string> argv = {"rtla", tracer, timerlat ? "hist" : "top"};
  if (!timerlat) argv.emplace_back("-q");  // only the final summary, no terminal redraws
  argv.insert(argv.end(), {"-c", in.cpus.to_list(), "-d", std::to_string(w.duration_s) + "s"});
  if (timerlat) argv.insert(argv.end(), {"-p", std::to_string(w.interval_us)});
  argv.insert(argv.end(), w.extra_args.begin(), w.extra_args.end());
  s.script =
      "cat /sys/kernel/tracing/available_tracers > available_tracers 2>&1\n"
      "grep -qw " +
      tracer + " available_tracers || { echo 'isolab: tracer " + tracer +
      " is not in available_tracers' >&2; exit 3; }\n" + sh_words(argv) + "\n";
  s.outputs.emplace_back("available_tracers", "available_tracers");
  s.timeout_s = w.timeout_s ? w.timeout_s : w.duration_s + in.margin_s;
}

// A failed run (no tracer, a tool error, a crash) is a failed measurement with its class in
// the reason, never metrics of zero noise.
void parse(const WorkloadSpec& w, const StepRecords& r, WorkloadOutcome& o) {
  const bool timerlat = is_timerlat(w);
  const ChannelRecord* tracers = r.all->find(w.name + ".available_tracers");
  std::optional<std::string_view> available;
  if (tracers && !tracers->data.empty()) available = tracers->data;
  RtlaRunCheck c = check_rtla_run(timerlat ? "timerlat" : "osnoise", r.out->data,
                                  r.err ? std::string_view(r.err->data) : std::string_view(),
                                  r.out->rc, available);
  if (!c.ok) {
    o.failed = true;
    o.failure = w.tool + ": " + c.kind + ": " + c.reason;
    return;
  }
  const std::string p = w.name + ".";
  if (timerlat)
    add_prefixed(o, p, rtla_timerlat_metrics(parse_rtla_timerlat_hist(r.out->data), &o.notes));
  else
    add_prefixed(o, p, rtla_osnoise_metrics(parse_rtla_osnoise_top(r.out->data)));
}

std::vector<std::string> metric_names(const WorkloadSpec& w) {
  return {is_timerlat(w) ? "timerlat.*" : "osnoise.*"};
}

// rtla-osnoise and rtla-timerlat differ only in their name (is_timerlat() reads it).
WorkloadTool rtla_tool(const char* name) {
  return WorkloadTool{.name = name,
                      .read_fields = read_fields,
                      .step = step,
                      .parse = parse,
                      .metric_names = metric_names,
                      .guest_binary = "/usr/bin/rtla"};
}

}  // namespace
}  // namespace tool_rtla

const WorkloadTool& rtla_osnoise_tool() {
  static const WorkloadTool t = tool_rtla::rtla_tool("rtla-osnoise");
  return t;
}

const WorkloadTool& rtla_timerlat_tool() {
  static const WorkloadTool t = tool_rtla::rtla_tool("rtla-timerlat");
  return t;
}

}  // namespace isolab
