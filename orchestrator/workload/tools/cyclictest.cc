// cyclictest (rt-tests): wake-up latency of the selected CPUs, optionally under a load on other
// CPUs (a tool with as_load, started first), with the kernel's wakeup_rt latency tracer and the
// function profiler's call counts around the run.
#include "parse/cyclictest.h"

#include <regex>

#include "base/error.h"
#include "base/files.h"
#include "parse/latency_trace.h"
#include "workload/tool.h"

namespace isolab {

namespace tool_cyclictest {
namespace {

// kernel/trace/ftrace.c function_stat_show(): seq_printf(m, "  %-30.30s  %10lu", ...).
constexpr std::size_t kProfileNameWidth = 30;

// extra_args that would choose cyclictest's CPUs or threads: the workload's "cpus" does, as
// `-a CPUS -t N` (docs/sources.md [t6]: -S follows the process's affinity and ignores -t).
void refuse_cpu_choice(const SpecObject& o, const WorkloadSpec& w) {
  static const std::regex cpu_choice_re("-S|--smp|-a.*|--affinity(=.*)?|-t.*|--threads(=.*)?");
  for (std::size_t i = 0; i < w.extra_args.size(); ++i)
    if (std::regex_match(w.extra_args[i], cpu_choice_re))
      throw SpecError(json_child(o.ptr("extra_args"), i),
                      "'" + sanitize_excerpt(w.extra_args[i], 40) +
                          "' would choose cyclictest's CPUs or threads; the workload's \"cpus\" "
                          "does (isolab passes -a CPUS -t N; -S follows the process's affinity "
                          "and ignores -t)");
}

// latency_tracer ("wakeup_rt" or none) and count_calls (kernel function names).
void read_fields(SpecObject& o, WorkloadSpec& w) {
  read_iteration_fields(o, w);
  refuse_cpu_choice(o, w);
  w.latency_tracer = o.str("latency_tracer", "");
  if (!w.latency_tracer.empty() && w.latency_tracer != "wakeup_rt")
    throw SpecError(o.ptr("latency_tracer"),
                    "expected wakeup_rt, got '" + sanitize_excerpt(w.latency_tracer, 40) + "'");
  w.count_calls = o.strings("count_calls");
  static const std::regex fn_re("[A-Za-z_][A-Za-z0-9_.]{0,79}");
  for (std::size_t i = 0; i < w.count_calls.size(); ++i)
    if (!std::regex_match(w.count_calls[i], fn_re))
      throw SpecError(
          json_child(o.ptr("count_calls"), i),
          "not a kernel function name: '" + sanitize_excerpt(w.count_calls[i], 80) + "'");
  // The function profiler prints names cut to 30 characters: two names that agree on those
  // could not be told apart.
  for (std::size_t i = 0; i < w.count_calls.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (w.count_calls[i].substr(0, kProfileNameWidth) ==
          w.count_calls[k].substr(0, kProfileNameWidth))
        throw SpecError(json_child(o.ptr("count_calls"), i),
                        "its first 30 characters are those of count_calls[" + std::to_string(k) +
                            "]: the function profiler prints names cut to 30");
}

// The load: started first, it outlasts the measurement by a second on each side.
std::string load_script(const WorkloadSpec& w, const StepInput& in, GuestStep& s) {
  const WorkloadSpec& l = w.load->front();
  if (!in.load) throw Error("workload " + w.name + ": the tool of its load was not looked up");
  CpuSet lc = resolve_cpus(l.cpus, *in.partition, workload_pointer(l) + "/cpus");
  std::string script = in.load->load_script(l, lc, w.duration_s + 2, s);
  s.outputs.emplace_back("load.out", "load.out");
  s.outputs.emplace_back("load.rc", "load.rc");  // written after `wait` (step())
  return script + "lp=$!\nsleep 1\n";
}

// Kernel tracing around the cyclictest run (tracefs, Documentation/trace/ftrace.rst):
// count_calls: set_ftrace_filter + function_profile_enabled (per-CPU hit counts in
// trace_stat/function<N>, read into calls.txt). latency_tracer: the boot-time trace events
// (guest/init_script.h) are silenced with a filter that matches nothing (no text patching, unlike
// disabling them), the tracer is set with options/function-trace off (its entries are the
// wakeup and the switch with their stack traces) and tracing_on set (the step resets
// tracing_max_latency to 0 right before cyclictest). The lock contention stacktrace trigger
// (guest/init_script.h) is removed meanwhile; the stop script sets it and the lock event's filter
// again. Failures go to tracing.err (sent as "<step>.tracing_err").
std::string tracing_start_script(const WorkloadSpec& w, GuestStep& s) {
  if (w.count_calls.empty() && w.latency_tracer.empty()) return "";
  std::string sc = "T=/sys/kernel/tracing\n: > tracing.err\n";
  s.outputs.emplace_back("tracing_err", "tracing.err");
  if (!w.count_calls.empty()) {
    std::string fns;  // validated names (read_fields): no quoting needed inside one word
    for (const auto& f : w.count_calls) fns += (fns.empty() ? "" : " ") + f;
    sc += "echo " + sh_quote(fns) +
          " > $T/set_ftrace_filter 2>> tracing.err || echo 'isolab: set_ftrace_filter failed' >> "
          "tracing.err\n";
    sc +=
        "echo 1 > $T/function_profile_enabled 2>> tracing.err || echo 'isolab: "
        "function_profile_enabled failed' >> tracing.err\n";
    s.outputs.emplace_back("calls", "calls.txt");
  }
  if (!w.latency_tracer.empty()) {
    sc += lock_contention_disarm_script();
    sc += "for f in $T/events/*/filter; do echo 'common_pid < 0' > $f; done 2>/dev/null\n";
    sc += "echo 0 > $T/options/function-trace 2>> tracing.err\n";
    sc += "echo " + w.latency_tracer +
          " > $T/current_tracer 2>> tracing.err || echo 'isolab: " + "current_tracer " +
          w.latency_tracer + " failed' >> tracing.err\n";
    sc += "echo 1 > $T/tracing_on\n";
    s.outputs.emplace_back(w.latency_tracer + ".max_latency", "max_latency.txt");
    s.outputs.emplace_back(w.latency_tracer + ".trace", "latency.trace");
  }
  return sc;
}

// Reads what tracing_start_script() armed and restores the defaults (nop tracer, events
// unfiltered, function-trace on, tracing_on, profiler off). The trace is capped at 4 MB.
std::string tracing_stop_script(const WorkloadSpec& w) {
  std::string sc;
  if (!w.latency_tracer.empty()) {
    sc += "echo 0 > $T/tracing_on\ncat $T/tracing_max_latency > max_latency.txt\n";
    sc += "head -c 4000000 $T/trace > latency.trace\necho nop > $T/current_tracer\n";
    sc += "for f in $T/events/*/filter; do echo 0 > $f; done 2>/dev/null\n";
    sc += lock_contention_arm_script();
    sc += "echo 1 > $T/options/function-trace\necho 1 > $T/tracing_on\n";
  }
  if (!w.count_calls.empty()) {
    sc += "cat $T/trace_stat/function* > calls.txt 2>> tracing.err\n";
    sc += "echo 0 > $T/function_profile_enabled\n";
  }
  return sc;
}

std::vector<std::string> cyclictest_argv(const WorkloadSpec& w, const StepInput& in) {
  std::vector<std::string> argv = {"cyclictest",
                                   "-q",
                                   "-m",
                                   "-D",
                                   std::to_string(w.duration_s) + "s",
                                   "-p",
                                   std::to_string(w.priority),
                                   "-i",
                                   std::to_string(w.interval_us),
                                   "-a",
                                   in.cpus.to_list(),
                                   "-t",
                                   std::to_string(in.cpus.count()),
                                   "--json=cyclictest.json"};
  if (!in.partition->housekeeping.empty())
    argv.push_back("--mainaffinity=" + in.partition->housekeeping.to_list());
  if (w.histogram_us > 0) argv.insert(argv.end(), {"-h", std::to_string(w.histogram_us)});
  argv.insert(argv.end(), w.extra_args.begin(), w.extra_args.end());
  return argv;
}

// Tracing is armed before the load starts (enabling the profiler patches the counted
// function's entry, best done while nothing runs it); the max latency is reset just before
// cyclictest, so the load's start-up is not in it.
void step(const WorkloadSpec& w, const StepInput& in, GuestStep& s) {
  std::string script = tracing_start_script(w, s);
  if (w.load) script += load_script(w, in, s);
  if (!w.latency_tracer.empty()) script += "echo 0 > $T/tracing_max_latency\n";
  // The plugin's wakeup paths (guest-tools/wake-marker.c), when the image has the library.
  script += "wm=/usr/bin/libisolab-wake-marker.so\n[ -e $wm ] && export LD_PRELOAD=$wm\n";
  script += sh_words(cyclictest_argv(w, in)) + "\nrc=$?\nunset LD_PRELOAD\n";
  script += tracing_stop_script(w);
  if (w.load) script += "wait $lp\necho $? > load.rc\n";
  script += "exit $rc\n";
  s.script = script;
  s.outputs.emplace_back("json", "cyclictest.json");
  s.timeout_s = w.timeout_s ? w.timeout_s : w.duration_s + 3 + in.margin_s;
}

nlohmann::json sanitized(const std::vector<std::string>& frames) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& f : frames) a.push_back(sanitize_excerpt(f, 120));
  return a;
}

std::string trimmed(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// The latency tracer's max latency and the wakeup and switch of its trace.
void parse_latency_tracer(const WorkloadSpec& w, const ChannelContents& ch, WorkloadOutcome& o) {
  const std::string p = w.name + ".";
  const std::string t = w.latency_tracer;
  const ChannelRecord* ml = ch.find(p + t + ".max_latency");
  if (!ml || ml->data.empty()) throw Error("no " + t + " tracing_max_latency record");
  double us = parse_max_latency_us(ml->data);
  add_metric_value(o.metrics, p + t + ".max_latency_us", "us", true, "max", us);
  const ChannelRecord* tr = ch.find(p + t + ".trace");
  WakeupTraceSummary sum = parse_wakeup_trace(tr ? tr->data : "");
  o.latency_trace = {{"tracer", t},
                     {"max_latency_us", us},
                     {"trace_latency_us",
                      sum.latency_us ? nlohmann::json(*sum.latency_us) : nlohmann::json(nullptr)},
                     {"task", sanitize_excerpt(sum.task, 64)},
                     {"cpu", sum.cpu ? nlohmann::json(*sum.cpu) : nlohmann::json(nullptr)},
                     {"wakeup_frames", sanitized(sum.wakeup_frames)},
                     {"switch_frames", sanitized(sum.switch_frames)}};
  if (!tr || tr->data.empty()) o.notes.push_back(t + ": the max-latency trace is empty");
}

// The function profile's count of each count_calls function.
void parse_calls(const WorkloadSpec& w, const ChannelContents& ch, WorkloadOutcome& o) {
  const std::string p = w.name + ".";
  const ChannelRecord* c = ch.find(p + "calls");
  if (!c || c->data.find("Function") == std::string::npos)
    throw Error("no function profile (trace_stat/function*) in the calls record: " +
                sanitize_excerpt(c ? c->data : "", 200));
  auto hits = parse_function_profile(c->data);
  // Kernels v6.11-v6.12 before "ftrace: Fix function profilers filtering functionality" ignore
  // set_ftrace_filter and profile every function (docs/sources.md [w3]): the counts asked for
  // are right, but every function was traced while cyclictest measured.
  std::vector<std::string> outside;
  for (const auto& hit : hits)
    if (std::none_of(w.count_calls.begin(), w.count_calls.end(), [&](const std::string& f) {
          return f.substr(0, kProfileNameWidth) == hit.first;
        }))
      outside.push_back(hit.first);
  if (!outside.empty() && o.invalid.empty())
    o.invalid =
        "the function profile lists " + std::to_string(outside.size()) +
        " function(s) outside set_ftrace_filter (first: " + sanitize_excerpt(outside[0], 40) +
        "): this kernel ignored the filter and traced every function while the latency "
        "was measured";
  for (const auto& f : w.count_calls) {
    // The profiler prints names cut to kProfileNameWidth characters ("%-30.30s").
    auto it = hits.find(f.substr(0, kProfileNameWidth));
    // The profiler lists only functions that were hit: absent means 0 calls, which is a
    // real (and for a load meant to call it, a telling) result.
    add_metric_value(o.metrics, p + "calls." + f, "count", false, "sum",
                     it == hits.end() ? 0.0 : static_cast<double>(it->second));
  }
}

// latency_tracer and count_calls records (tracing_start_script()). A missing or unusable
// record is an error naming it: never a silent zero.
void parse_tracing(const WorkloadSpec& w, const ChannelContents& ch, WorkloadOutcome& o) {
  if (w.latency_tracer.empty() && w.count_calls.empty()) return;
  const ChannelRecord* err = ch.find(w.name + ".tracing_err");
  if (err && !trimmed(err->data).empty())
    throw Error("kernel tracing set-up failed: " + sanitize_excerpt(err->data, 300));
  if (!w.latency_tracer.empty()) parse_latency_tracer(w, ch, o);
  if (!w.count_calls.empty()) parse_calls(w, ch, o);
}

// cyclictest.json: the latencies and the merged histogram.
void parse_json(const WorkloadSpec& w, const ChannelRecord& js, const ChannelRecord& out,
                WorkloadOutcome& o) {
  CyclictestResult r = parse_cyclictest_json(js.data);
  add_prefixed(o, w.name + ".", cyclictest_metrics(r, &o.notes));
  o.tool_versions.merge(cyclictest_versions(r, &o.notes));
  CyclictestHistogram h = merged_histogram(r);
  if (!h.counts.empty()) {
    nlohmann::json counts = nlohmann::json::object();
    for (const auto& [bucket, n] : h.counts) counts[std::to_string(bucket)] = n;
    o.histograms[w.name] = {
        {"unit", "us"}, {"bucket_ns", h.bucket_ns}, {"counts", counts}, {"overflows", h.overflows}};
  }
  if (r.return_code && *r.return_code != 0)
    fail_once(o, "cyclictest return_code " + std::to_string(*r.return_code));
  if (out.rc != 0) fail_once(o, "cyclictest exited " + std::to_string(out.rc));
}

void parse(const WorkloadSpec& w, const StepRecords& r, WorkloadOutcome& o) {
  const ChannelRecord* js = r.all->find(w.name + ".json");
  if (!js || js->data.empty())
    fail_once(
        o, "cyclictest exited " + std::to_string(r.out->rc) +
               " without JSON output; stderr: " + sanitize_excerpt(r.err ? r.err->data : "", 400));
  else
    parse_json(w, *js, *r.out, o);
  parse_tracing(w, *r.all, o);
  if (w.load) {
    if (!r.load) throw Error("workload " + w.name + ": the tool of its load was not looked up");
    r.load->parse_load(w, *r.all, o);
  }
}

std::vector<std::string> metric_names(const WorkloadSpec& w) {
  std::vector<std::string> names = {"latency_min_us", "latency_avg_us", "latency_max_us",
                                    "latency_p99_us", "latency_p999_us"};
  if (!w.latency_tracer.empty()) names.push_back(w.latency_tracer + ".max_latency_us");
  for (const auto& f : w.count_calls) names.push_back("calls." + f);
  // From the instruction-counting plugin (workload/insn_cell.h), under TCG.
  names.insert(names.end(), {"wakeup_insns_max", "wakeup_insns_p99"});
  return names;
}

}  // namespace
}  // namespace tool_cyclictest

const WorkloadTool& cyclictest_tool() {
  static const WorkloadTool t{.name = "cyclictest",
                              .takes_load = true,
                              .own_fields = {"latency_tracer", "count_calls"},
                              .read_fields = tool_cyclictest::read_fields,
                              .step = tool_cyclictest::step,
                              .parse = tool_cyclictest::parse,
                              .metric_names = tool_cyclictest::metric_names,
                              .guest_binary = "/usr/bin/cyclictest",
                              .binary_always = true};
  return t;
}

}  // namespace isolab
