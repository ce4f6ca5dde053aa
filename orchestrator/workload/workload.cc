#include "workload/workload.h"

#include "base/error.h"
#include "base/files.h"
#include "parse/cyclictest.h"
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
// (case R2), and does not start rtla when the tracer is missing.
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

}  // namespace

GuestStep guest_step(const WorkloadSpec& w, const CpuPartition& p, const TimeoutSpec& t,
                     bool trace) {
  GuestStep s;
  s.name = w.name;
  CpuSet cpus = resolve_cpus(w.cpus, p, "/workloads/" + w.name + "/cpus");
  if (trace && !p.isolated.empty()) s.trace_cpus = p.isolated.to_list();
  int margin = t.workload_margin_s;
  if (w.tool == "cyclictest") {
    std::string script;
    if (w.load) {
      const WorkloadSpec& l = w.load->front();
      CpuSet lc = resolve_cpus(l.cpus, p, "/workloads/" + w.name + "/load/cpus");
      // The load starts first and outlasts the measurement by a second on each side.
      script += words(stressng_argv(l, lc, w.duration_s + 2, "load.yaml")) + " > load.out 2>&1 &\n";
      script += "lp=$!\nsleep 1\n";
      s.outputs.push_back({"load.yaml", "load.yaml"});
      s.outputs.push_back({"load.out", "load.out"});
    }
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
    if (w.load) script += "wait $lp\n";
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
    std::vector<std::string> argv = {"page-fault-bench",
                                     "--cpus",
                                     cpus.to_list(),
                                     "--duration-s",
                                     std::to_string(w.duration_s),
                                     "--warmup",
                                     std::to_string(w.warmup_iterations)};
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

std::string rc_text(const ChannelRecord* r) { return r ? std::to_string(r->rc) : "?"; }

// rtla: a failed run (no tracer, a tool error, a crash) is a failed measurement with its class
// in the reason (case R2), never metrics of zero noise.
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
      if (w.load) {
        const ChannelRecord* ly = ch.find(p + "load.yaml");
        if (!ly || ly->data.empty()) {
          const ChannelRecord* lo = ch.find(p + "load.out");
          fail("the stress-ng load wrote no YAML; its output: " +
               sanitize_excerpt(lo ? lo->data : "", 400));
        } else {
          prefixed(o, p + "load.", stressng_metrics(parse_stressng_yaml(ly->data), &o.notes));
        }
      }
    } else if (w.tool == "stress-ng") {
      const ChannelRecord* y = ch.find(p + "yaml");
      if (!y || y->data.empty())
        fail("stress-ng exited " + rc_text(out) + " without YAML; output: " +
             sanitize_excerpt(out->data, 400) + sanitize_excerpt(err ? err->data : "", 400));
      else
        prefixed(o, p, stressng_metrics(parse_stressng_yaml(y->data), &o.notes));
      if (out->rc != 0) fail("stress-ng exited " + std::to_string(out->rc));
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
