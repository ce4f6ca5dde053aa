#include "workload/workload.h"

#include "base/error.h"
#include "base/files.h"
#include "parse/cyclictest.h"
#include "parse/latency_trace.h"
#include "parse/page_fault_bench.h"
#include "parse/rtla.h"
#include "parse/stressng.h"
#include "parse/trace.h"
#include "parse/vmstat_overhead.h"
#include "workload/noise.h"

namespace isolab {

CpuSet resolve_cpus(const std::string& sel, const CpuPartition& p, const std::string& pointer) {
  CpuSet s;
  if (sel == "isolated")
    s = p.isolated;
  else if (sel == "housekeeping")
    s = p.housekeeping;
  else if (sel == "all")
    s = p.all;
  else {
    CpuListParse r = try_parse_cpulist(sel, p.all.nbits());
    if (!r.ok())
      throw SpecError(pointer, r.message + " (the guest has CPUs " + p.all.to_list() + ")");
    s = r.set;
  }
  if (s.empty())
    throw SpecError(pointer, "selects no CPU ('" + sel + "' in a guest with CPUs " +
                                 p.all.to_list() + ", isolated '" + p.isolated.to_list() + "')");
  return s;
}

namespace {

std::string words(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += sh_quote(a);
  }
  return s;
}

// The workload's JSON pointer in its spec; a workload made in code is named by its name.
std::string spec_pointer(const WorkloadSpec& w) {
  return w.pointer.empty() ? "/workloads/" + w.name : w.pointer;
}

std::vector<std::string> stressng_argv(const WorkloadSpec& w, const CpuSet& cpus, int duration_s,
                                       const std::string& yaml) {
  std::vector<std::string> argv = {"stress-ng", "--taskset", cpus.to_list()};
  for (const auto& [stressor, n] : w.stressors) {
    argv.push_back("--" + stressor);
    argv.push_back(std::to_string(n == 0 ? cpus.count() : static_cast<unsigned>(n)));
  }
  argv.insert(argv.end(),
              {"--timeout", std::to_string(duration_s) + "s", "--metrics", "--yaml", yaml});
  argv.insert(argv.end(), w.extra_args.begin(), w.extra_args.end());
  return argv;
}

// rtla (tools/tracing/rtla, Debian package rtla). The step first keeps the guest's
// available_tracers, so that a kernel without the tracer is told apart from a tool failure
// (docs/sources.md [r2]), and does not start rtla when the tracer is missing.
std::string rtla_script(const WorkloadSpec& w, const CpuSet& cpus) {
  const bool timerlat = w.tool == "rtla-timerlat";
  const std::string tracer = timerlat ? "timerlat" : "osnoise";
  std::vector<std::string> argv = {"rtla", tracer, timerlat ? "hist" : "top"};
  if (!timerlat) argv.push_back("-q");  // only the final summary, no terminal redraws
  argv.insert(argv.end(), {"-c", cpus.to_list(), "-d", std::to_string(w.duration_s) + "s"});
  if (timerlat) argv.insert(argv.end(), {"-p", std::to_string(w.interval_us)});
  argv.insert(argv.end(), w.extra_args.begin(), w.extra_args.end());
  return "cat /sys/kernel/tracing/available_tracers > available_tracers 2>&1\n"
         "grep -qw " +
         tracer + " available_tracers || { echo 'isolab: tracer " + tracer +
         " is not in available_tracers' >&2; exit 3; }\n" + words(argv) + "\n";
}

// The cyclictest load: started first, it outlasts the measurement by a second on each side.
// stress-ng writes load.yaml; madvise-pressure (pinned with taskset) prints load.json.
std::string load_script(const WorkloadSpec& w, const CpuPartition& p, GuestStep& s) {
  const WorkloadSpec& l = w.load->front();
  CpuSet lc = resolve_cpus(l.cpus, p, spec_pointer(l) + "/cpus");
  std::string script;
  if (l.tool == "madvise-pressure") {
    std::vector<std::string> argv = {"taskset",      "-c",
                                     lc.to_list(),   "madvise-pressure",
                                     "--duration-s", std::to_string(w.duration_s + 2)};
    argv.insert(argv.end(), l.extra_args.begin(), l.extra_args.end());
    script += words(argv) + " > load.json 2> load.out &\n";
    s.outputs.push_back({"load.json", "load.json"});
  } else {
    script += words(stressng_argv(l, lc, w.duration_s + 2, "load.yaml")) + " > load.out 2>&1 &\n";
    s.outputs.push_back({"load.yaml", "load.yaml"});
  }
  s.outputs.push_back({"load.out", "load.out"});
  s.outputs.push_back({"load.rc", "load.rc"});  // written after `wait` (guest_step)
  return script + "lp=$!\nsleep 1\n";
}

// Kernel tracing around the cyclictest run (tracefs, Documentation/trace/ftrace.rst):
// count_calls: set_ftrace_filter + function_profile_enabled (per-CPU hit counts in
// trace_stat/function<N>, read into calls.txt). latency_tracer: the boot-time trace events
// (guest/init_script.h) are silenced with a filter that matches nothing (no text patching, unlike
// disabling them), the tracer is set with options/function-trace off (its entries are the
// wakeup and the switch with their stack traces, as in the madvise report of
// docs/examples/madvise-latency.md) and tracing_on set (the caller resets tracing_max_latency to 0
// right before cyclictest). The lock contention stacktrace trigger (guest/init_script.h) is removed
// meanwhile; the stop script sets it and the lock event's filter again. Failures go to tracing.err
// (sent as "<step>.tracing_err").
std::string tracing_start_script(const WorkloadSpec& w, GuestStep& s) {
  if (w.count_calls.empty() && w.latency_tracer.empty()) return "";
  std::string sc = "T=/sys/kernel/tracing\n: > tracing.err\n";
  s.outputs.push_back({"tracing_err", "tracing.err"});
  if (!w.count_calls.empty()) {
    std::string fns;  // validated names (spec.cc): no quoting needed inside one word
    for (const auto& f : w.count_calls) fns += (fns.empty() ? "" : " ") + f;
    sc += "echo " + sh_quote(fns) +
          " > $T/set_ftrace_filter 2>> tracing.err || echo 'isolab: set_ftrace_filter failed' >> "
          "tracing.err\n";
    sc +=
        "echo 1 > $T/function_profile_enabled 2>> tracing.err || echo 'isolab: "
        "function_profile_enabled failed' >> tracing.err\n";
    s.outputs.push_back({"calls", "calls.txt"});
  }
  if (!w.latency_tracer.empty()) {
    sc += lock_contention_disarm_script();
    sc += "for f in $T/events/*/filter; do echo 'common_pid < 0' > $f; done 2>/dev/null\n";
    sc += "echo 0 > $T/options/function-trace 2>> tracing.err\n";
    sc += "echo " + w.latency_tracer +
          " > $T/current_tracer 2>> tracing.err || echo 'isolab: " + "current_tracer " +
          w.latency_tracer + " failed' >> tracing.err\n";
    sc += "echo 1 > $T/tracing_on\n";
    s.outputs.push_back({w.latency_tracer + ".max_latency", "max_latency.txt"});
    s.outputs.push_back({w.latency_tracer + ".trace", "latency.trace"});
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

}  // namespace

GuestStep guest_step(const WorkloadSpec& w, const CpuPartition& p, const TimeoutSpec& t,
                     bool trace) {
  GuestStep s;
  s.name = w.name;
  CpuSet cpus = resolve_cpus(w.cpus, p, spec_pointer(w) + "/cpus");
  // A latency tracer replaces the noise trace for its step (the two share the top-level ring
  // buffer; see tracing_start_script()).
  if (trace && !p.isolated.empty() && w.latency_tracer.empty()) s.trace_cpus = p.isolated.to_list();
  int margin = t.workload_margin_s;
  if (w.tool == "cyclictest") {
    std::string script;
    // Tracing is armed before the load starts (enabling the profiler patches the counted
    // function's entry, best done while nothing runs it); the max latency is reset just before
    // cyclictest, so the load's start-up is not in it.
    script += tracing_start_script(w, s);
    if (w.load) script += load_script(w, p, s);
    if (!w.latency_tracer.empty()) script += "echo 0 > $T/tracing_max_latency\n";
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
                                     cpus.to_list(),
                                     "-t",
                                     std::to_string(cpus.count()),
                                     "--json=cyclictest.json"};
    if (!p.housekeeping.empty()) argv.push_back("--mainaffinity=" + p.housekeeping.to_list());
    if (w.histogram_us > 0) argv.insert(argv.end(), {"-h", std::to_string(w.histogram_us)});
    argv.insert(argv.end(), w.extra_args.begin(), w.extra_args.end());
    script += words(argv) + "\nrc=$?\n";
    script += tracing_stop_script(w);
    if (w.load) script += "wait $lp\necho $? > load.rc\n";
    script += "exit $rc\n";
    s.script = script;
    s.outputs.push_back({"json", "cyclictest.json"});
    s.timeout_s = w.timeout_s ? w.timeout_s : w.duration_s + 3 + margin;
  } else if (w.tool == "stress-ng") {
    s.script = words(stressng_argv(w, cpus, w.duration_s, "stress-ng.yaml")) + "\n";
    s.outputs.push_back({"yaml", "stress-ng.yaml"});
    s.timeout_s = w.timeout_s ? w.timeout_s : w.duration_s + margin;
  } else if (w.tool == "vmstat-overhead") {
    std::vector<std::string> argv = {"vmstat-overhead", w.mode,
                                     "--cpu",           std::to_string(*cpus.first()),
                                     "--warmup",        std::to_string(w.warmup_iterations)};
    if (w.duration_s > 0)
      argv.insert(argv.end(), {"--duration-s", std::to_string(w.duration_s)});
    else
      argv.insert(argv.end(), {"--iterations", std::to_string(w.iterations)});
    if (w.mode == "idle") argv.insert(argv.end(), {"--sleep-us", std::to_string(w.sleep_us)});
    if (w.touch_pages) argv.push_back("--touch");
    argv.insert(argv.end(), w.extra_args.begin(), w.extra_args.end());
    s.script = words(argv) + "\n";
    // Under emulation an idle loop of usleep(10) costs ~100 µs; allow 1 ms per iteration, and
    // the warm-up on top of a duration.
    int run_s = w.duration_s > 0 ? w.duration_s + static_cast<int>(w.warmup_iterations / 1000)
                                 : static_cast<int>(w.iterations / 1000);
    s.timeout_s = w.timeout_s ? w.timeout_s : run_s + margin;
  } else if (w.tool == "rtla-osnoise" || w.tool == "rtla-timerlat") {
    s.script = rtla_script(w, cpus);
    s.outputs.push_back({"available_tracers", "available_tracers"});
    s.timeout_s = w.timeout_s ? w.timeout_s : w.duration_s + margin;
  } else if (w.tool == "page-fault-bench") {
    // taskset first: with isolcpus=domain the init's affinity leaves out the isolated CPUs,
    // and page-fault-bench refuses CPUs outside the affinity it starts with.
    std::vector<std::string> argv = {"taskset",      "-c",
                                     cpus.to_list(), "page-fault-bench",
                                     "--cpus",       cpus.to_list(),
                                     "--duration-s", std::to_string(w.duration_s),
                                     "--warmup",     std::to_string(w.warmup_iterations)};
    argv.insert(argv.end(), w.extra_args.begin(), w.extra_args.end());
    s.script = words(argv) + "\n";
    // Two phases of duration_s each; the warm-up batches run at about 1 ms each under TCG.
    s.timeout_s = w.timeout_s
                      ? w.timeout_s
                      : 2 * w.duration_s + static_cast<int>(w.warmup_iterations / 500) + margin;
  } else {
    throw Error("workload " + w.name + ": unknown tool " + w.tool);
  }
  return s;
}

}  // namespace isolab

namespace isolab {

namespace {

void prefixed(WorkloadOutcome& o, const std::string& prefix, const Metrics& m) {
  for (const auto& [name, metric] : m) o.metrics[prefix + name] = metric;
}

std::string trim_copy(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

nlohmann::json sanitized(const std::vector<std::string>& frames) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& f : frames) a.push_back(sanitize_excerpt(f, 120));
  return a;
}

std::string rc_text(const ChannelRecord* r) { return r ? std::to_string(r->rc) : "?"; }

// rtla: a failed run (no tracer, a tool error, a crash) is a failed measurement with its class
// in the reason (docs/sources.md [r2]), never metrics of zero noise.
void parse_rtla_step(WorkloadOutcome& o, const WorkloadSpec& w, const ChannelRecord& out,
                     const ChannelRecord* err, const ChannelRecord* tracers) {
  const bool timerlat = w.tool == "rtla-timerlat";
  std::optional<std::string_view> available;
  if (tracers && !tracers->data.empty()) available = tracers->data;
  RtlaRunCheck c =
      check_rtla_run(timerlat ? "timerlat" : "osnoise", out.data,
                     err ? std::string_view(err->data) : std::string_view(), out.rc, available);
  if (!c.ok) {
    o.failed = true;
    o.failure = w.tool + ": " + c.kind + ": " + c.reason;
    return;
  }
  const std::string p = w.name + ".";
  if (timerlat)
    prefixed(o, p, rtla_timerlat_metrics(parse_rtla_timerlat_hist(out.data), &o.notes));
  else
    prefixed(o, p, rtla_osnoise_metrics(parse_rtla_osnoise_top(out.data)));
}

// The stress-ng requested by `w` (its stressors), judged on its exit status and log
// (docs/sources.md [s3]); `prefix` is where its metrics went ("<wl>." or "<wl>.load.").
void judge_stressng(WorkloadOutcome& o, const WorkloadSpec& w, const std::string& prefix,
                    const StressngResult& r, std::optional<int> rc, std::string_view log) {
  std::vector<std::string> requested;
  for (const auto& [stressor, n] : w.stressors) requested.push_back(stressor);
  StressngRunCheck c = check_stressng_run(parse_stressng_log(log), rc, requested, r);
  using O = StressngRunCheck::Outcome;
  const std::string who = prefix.ends_with(".load.") ? "the stress-ng load: " : "";
  if (c.outcome == O::failed && !o.failed) {
    o.failed = true;
    o.failure = who + c.reason;
  }
  if (c.outcome == O::invalid && o.invalid.empty()) o.invalid = who + c.reason;
  for (const auto& [stressor, why] : c.untrustworthy) {
    const std::string reason = "stress-ng: metrics untrustworthy: " + why;
    if (mark_untrustworthy(o.metrics, prefix + stressor + ".", reason))
      o.notes.push_back(stressor + ": " + reason + " (kept out of comparisons)");
  }
}

// "0\n" -> 0; nullopt when absent or not a number (the guest is untrusted).
std::optional<int> rc_record(const ChannelRecord* r) {
  if (!r) return std::nullopt;
  const std::string t = trim_copy(r->data);
  if (t.empty() || t.size() > 4 || t.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoi(t);
}

// The stress-ng-version (docs/sources.md [s4]) of the YAML's system-info, recorded with the result.
void record_stressng_version(WorkloadOutcome& o, const StressngResult& r) {
  if (!r.version.empty()) o.tool_versions["stress-ng"] = sanitize_excerpt(r.version, 40);
}

// The stress-ng load of a cyclictest step: load.yaml, load.out (its log), load.rc.
void parse_stressng_load(WorkloadOutcome& o, const WorkloadSpec& w, const ChannelContents& ch) {
  const std::string p = w.name + ".";
  const ChannelRecord* ly = ch.find(p + "load.yaml");
  const ChannelRecord* lo = ch.find(p + "load.out");
  if (!ly || ly->data.empty()) {
    if (!o.failed) {
      o.failed = true;
      o.failure = "the stress-ng load wrote no YAML; its output: " +
                  sanitize_excerpt(lo ? lo->data : "", 400);
    }
    return;
  }
  StressngResult r = parse_stressng_yaml(ly->data);
  record_stressng_version(o, r);
  prefixed(o, p + "load.", stressng_metrics(r, &o.notes));
  judge_stressng(o, *w.load->begin(), p + "load.", r, rc_record(ch.find(p + "load.rc")),
                 lo ? std::string_view(lo->data) : std::string_view());
}

// The stress-ng tool step: stress-ng.yaml, its log on stdout/stderr, its exit status (rc).
void parse_stressng_step(WorkloadOutcome& o, const WorkloadSpec& w, const ChannelContents& ch,
                         const ChannelRecord& out, const ChannelRecord* err) {
  const std::string p = w.name + ".";
  const ChannelRecord* y = ch.find(p + "yaml");
  const std::string log = out.data + "\n" + (err ? err->data : "");
  if (!y || y->data.empty()) {
    // No YAML: the log still tells why (e.g. "No stress workers invoked" with exit status 0).
    judge_stressng(o, w, p, StressngResult{}, out.rc, log);
    if (!o.failed && o.invalid.empty()) {
      o.failed = true;
      o.failure = "stress-ng exited " + std::to_string(out.rc) +
                  " without YAML; output: " + sanitize_excerpt(log, 400);
    }
    return;
  }
  StressngResult r = parse_stressng_yaml(y->data);
  record_stressng_version(o, r);
  prefixed(o, p, stressng_metrics(r, &o.notes));
  judge_stressng(o, w, p, r, out.rc, log);
}

// kernel/trace/ftrace.c function_stat_show(): seq_printf(m, "  %-30.30s  %10lu", ...).
constexpr std::size_t kProfileNameWidth = 30;

// latency_tracer and count_calls records (workload/workload.cc tracing_start_script()). A
// missing or unusable record is an error naming it: never a silent zero.
void parse_tracing(const WorkloadSpec& w, const ChannelContents& ch, WorkloadOutcome& o) {
  const std::string p = w.name + ".";
  if (w.latency_tracer.empty() && w.count_calls.empty()) return;
  const ChannelRecord* err = ch.find(p + "tracing_err");
  if (err && !trim_copy(err->data).empty())
    throw Error("kernel tracing set-up failed: " + sanitize_excerpt(err->data, 300));
  if (!w.latency_tracer.empty()) {
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
  if (!w.count_calls.empty()) {
    const ChannelRecord* c = ch.find(p + "calls");
    if (!c || c->data.find("Function") == std::string::npos)
      throw Error("no function profile (trace_stat/function*) in the calls record: " +
                  sanitize_excerpt(c ? c->data : "", 200));
    auto hits = parse_function_profile(c->data);
    for (const auto& f : w.count_calls) {
      // The profiler prints names cut to kProfileNameWidth characters ("%-30.30s").
      auto it = hits.find(f.substr(0, kProfileNameWidth));
      // The profiler lists only functions that were hit: absent means 0 calls, which is a
      // real (and for a load meant to call it, a telling) result.
      add_metric_value(o.metrics, p + "calls." + f, "count", false, "sum",
                       it == hits.end() ? 0.0 : static_cast<double>(it->second));
    }
  }
}

}  // namespace

WorkloadOutcome parse_workload(const WorkloadSpec& w, const ChannelContents& ch) {
  WorkloadOutcome o;
  const std::string p = w.name + ".";
  const ChannelRecord* out = ch.find(p + "stdout");
  const ChannelRecord* err = ch.find(p + "stderr");
  auto fail = [&](const std::string& why) {
    if (!o.failed) {
      o.failed = true;
      o.failure = why;
    }
  };
  if (!out) {
    fail("no output record (the step did not run or the channel ended early)");
    return o;
  }
  if (out->rc == 137) fail("killed by the step timeout");
  try {
    if (w.tool == "cyclictest") {
      const ChannelRecord* js = ch.find(p + "json");
      if (!js || js->data.empty()) {
        fail("cyclictest exited " + rc_text(out) +
             " without JSON output; stderr: " + sanitize_excerpt(err ? err->data : "", 400));
      } else {
        CyclictestResult r = parse_cyclictest_json(js->data);
        prefixed(o, p, cyclictest_metrics(r, &o.notes));
        CyclictestHistogram h = merged_histogram(r);
        if (!h.counts.empty()) {
          nlohmann::json counts = nlohmann::json::object();
          for (const auto& [bucket, n] : h.counts) counts[std::to_string(bucket)] = n;
          o.histograms[w.name] = {{"unit", "us"},
                                  {"bucket_ns", h.bucket_ns},
                                  {"counts", counts},
                                  {"overflows", h.overflows}};
        }
        if (r.return_code && *r.return_code != 0)
          fail("cyclictest return_code " + std::to_string(*r.return_code));
        if (out->rc != 0) fail("cyclictest exited " + std::to_string(out->rc));
      }
      parse_tracing(w, ch, o);
      if (w.load && w.load->front().tool == "madvise-pressure") {
        const ChannelRecord* lj = ch.find(p + "load.json");
        const ChannelRecord* lo = ch.find(p + "load.out");
        if (!lj || lj->data.empty() || lj->rc != 0)
          fail("the madvise-pressure load failed; its stderr: " +
               sanitize_excerpt(lo ? lo->data : "", 400));
        else
          prefixed(o, p + "load.", madvise_pressure_metrics(parse_madvise_pressure(lj->data)));
      } else if (w.load) {
        parse_stressng_load(o, w, ch);
      }
    } else if (w.tool == "stress-ng") {
      parse_stressng_step(o, w, ch, *out, err);
    } else if (w.tool == "rtla-osnoise" || w.tool == "rtla-timerlat") {
      parse_rtla_step(o, w, *out, err, ch.find(p + "available_tracers"));
    } else if (w.tool == "vmstat-overhead") {
      if (out->rc != 0)
        fail("vmstat-overhead exited " + std::to_string(out->rc) + ": " +
             sanitize_excerpt(err ? err->data : "", 400));
      else
        prefixed(o, p, vmstat_overhead_metrics(parse_vmstat_overhead(out->data)));
    } else if (w.tool == "page-fault-bench") {
      if (out->rc != 0)
        fail("page-fault-bench exited " + std::to_string(out->rc) + ": " +
             sanitize_excerpt(err ? err->data : "", 400));
      else
        prefixed(o, p, page_fault_bench_metrics(parse_page_fault_bench(out->data)));
    }
  } catch (const std::exception& e) {
    fail(std::string("unparsable output: ") + e.what());
  }
  // What interrupted the isolated CPUs during the step.
  const ChannelRecord* enabled = ch.find("trace_events");
  bool tracing = enabled && enabled->data.find("local_timer_entry") != std::string::npos;
  if (ch.find(p + "trace") && !tracing)
    o.notes.push_back(
        "trace events were not enabled in the guest (no trace_event= at boot?): no noise counts");
  if (tracing) {
    StepNoise n = step_noise(ch, w.name);
    prefixed(o, p, n.metrics);
    o.noise = std::move(n.details);
    o.notes.insert(o.notes.end(), n.notes.begin(), n.notes.end());
  }
  return o;
}

}  // namespace isolab
