// madvise-pressure (guest-tools/madvise-pressure.c): the load of a cyclictest that makes the
// kernel page out and reclaim with madvise(MADV_COLD / MADV_PAGEOUT); argv from extra_args.
#include "base/files.h"
#include "parse/latency_trace.h"
#include "workload/tool.h"

namespace isolab {

namespace tool_madvise_pressure {
namespace {

// Pinned with taskset; prints load.json, its errors to load.out.
std::string load_script(const WorkloadSpec& l, const CpuSet& cpus, int duration_s, GuestStep& s) {
  std::vector<std::string> argv = {"taskset",          "-c",           cpus.to_list(),
                                   "madvise-pressure", "--duration-s", std::to_string(duration_s)};
  argv.insert(argv.end(), l.extra_args.begin(), l.extra_args.end());
  s.outputs.emplace_back("load.json", "load.json");
  return sh_words(argv) + " > load.json 2> load.out &\n";
}

void parse_load(const WorkloadSpec& w, const ChannelContents& ch, WorkloadOutcome& o) {
  const std::string p = w.name + ".";
  const ChannelRecord* lj = ch.find(p + "load.json");
  const ChannelRecord* lo = ch.find(p + "load.out");
  if (!lj || lj->data.empty() || lj->rc != 0)
    fail_once(o, "the madvise-pressure load failed; its stderr: " +
                     sanitize_excerpt(lo ? lo->data : "", 400));
  else
    add_prefixed(o, p + "load.", madvise_pressure_metrics(parse_madvise_pressure(lj->data)));
}

std::vector<std::string> metric_names(const WorkloadSpec&) {
  return {"madvise_calls", "madvise_call_max_us", "madvise_call_mean_us"};
}

}  // namespace
}  // namespace tool_madvise_pressure

const WorkloadTool& madvise_pressure_tool() {
  static const WorkloadTool t{.name = "madvise-pressure",
                              .as_workload = false,
                              .as_load = true,
                              .read_fields = read_iteration_fields,
                              .load_script = tool_madvise_pressure::load_script,
                              .parse_load = tool_madvise_pressure::parse_load,
                              .metric_names = tool_madvise_pressure::metric_names,
                              .guest_binary = "madvise-pressure"};
  return t;
}

}  // namespace isolab
