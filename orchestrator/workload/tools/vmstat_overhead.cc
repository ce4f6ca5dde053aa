// vmstat-overhead (guest-tools/vmstat-overhead.c): cycles per mlock+munlock system call or per
// idle loop on one pinned CPU, its operations marked for the instruction-counting plugin; or
// (mode spin, guest-tools/vmstat-spin.h) a task spinning in user space on each CPU of the
// workload with an event at a set rate, whose premise is checked from the step's trace.
#include "parse/vmstat_overhead.h"

#include <algorithm>
#include <iterator>

#include "base/files.h"
#include "parse/spin_ticks.h"
#include "workload/tool.h"

namespace isolab {

namespace tool_vmstat_overhead {
namespace {

const char* const kSpinEvents[] = {"fault", "fault+cputimer", "cputimer+fault", "fault+mlock"};

// mode "syscall" (default), "idle" or "spin"; iterations 100000 (syscall) or 2000 (idle);
// warm-up a tenth of them; touch_pages; sleep_us (idle mode's usleep()); rate_hz and event
// (spin mode, which runs for duration_s seconds).
void read_fields(SpecObject& o, WorkloadSpec& w) {
  w.mode = o.str("mode", "syscall");
  if (w.mode != "syscall" && w.mode != "idle" && w.mode != "spin")
    throw SpecError(o.ptr("mode"), "expected syscall, idle or spin");
  w.iterations = o.integer("iterations", w.mode == "idle" ? 2000 : 100000, 0, 1000000000);
  w.warmup_iterations = o.integer("warmup_iterations", w.iterations / 10, 0, 1000000000);
  w.touch_pages = o.boolean("touch_pages", false);
  w.sleep_us = static_cast<int>(o.integer("sleep_us", 10, 0, 1000000));
  w.rate_hz = static_cast<int>(o.integer("rate_hz", 10, 1, 100000));
  w.event = o.str("event", "fault+cputimer");
  if (std::find(std::begin(kSpinEvents), std::end(kSpinEvents), w.event) == std::end(kSpinEvents))
    throw SpecError(o.ptr("event"),
                    "expected fault, fault+cputimer, cputimer+fault or fault+mlock");
  if (w.mode == "spin") {
    if (w.duration_s < 1) throw SpecError(o.ptr("duration_s"), "spin mode needs duration_s >= 1");
    for (const char* f : {"iterations", "warmup_iterations", "touch_pages", "sleep_us"})
      if (o.has(f)) throw SpecError(o.ptr(f), "spin mode does not take this field");
  } else {
    for (const char* f : {"rate_hz", "event"})
      if (o.has(f)) throw SpecError(o.ptr(f), "only spin mode takes this field");
  }
}

std::vector<std::string> spin_argv(const WorkloadSpec& w, unsigned cpu) {
  std::vector<std::string> argv = {"vmstat-overhead", "spin",
                                   "--cpu",           std::to_string(cpu),
                                   "--duration-s",    std::to_string(w.duration_s),
                                   "--rate-hz",       std::to_string(w.rate_hz),
                                   "--event",         w.event};
  argv.insert(argv.end(), w.extra_args.begin(), w.extra_args.end());
  return argv;
}

// One spinning task per CPU of the workload, all at once; each prints its JSON line on the
// step's stdout (one write each at exit), and the step's status is the last failing one's.
void spin_step(const WorkloadSpec& w, const StepInput& in, GuestStep& s) {
  s.script = "pids=\n";
  for (unsigned cpu : in.cpus.cpus())
    s.script += sh_words(spin_argv(w, cpu)) + " &\npids=\"$pids $!\"\n";
  s.script += "rc=0\nfor p in $pids; do wait $p || rc=$?; done\nexit $rc\n";
  // The rate calibration (0.1 s) and the start on top of the window.
  s.timeout_s = w.timeout_s ? w.timeout_s : w.duration_s + 1 + in.margin_s;
}

// With duration_s > 0 it runs for that many seconds instead of `iterations`.
void step(const WorkloadSpec& w, const StepInput& in, GuestStep& s) {
  if (w.mode == "spin") return spin_step(w, in, s);
  std::vector<std::string> argv = {"vmstat-overhead", w.mode,
                                   "--cpu",           std::to_string(*in.cpus.first()),
                                   "--warmup",        std::to_string(w.warmup_iterations)};
  if (w.duration_s > 0)
    argv.insert(argv.end(), {"--duration-s", std::to_string(w.duration_s)});
  else
    argv.insert(argv.end(), {"--iterations", std::to_string(w.iterations)});
  if (w.mode == "idle") argv.insert(argv.end(), {"--sleep-us", std::to_string(w.sleep_us)});
  if (w.touch_pages) argv.emplace_back("--touch");
  argv.insert(argv.end(), w.extra_args.begin(), w.extra_args.end());
  s.script = sh_words(argv) + "\n";
  // Under emulation an idle loop of usleep(10) costs ~100 µs; allow 1 ms per iteration, and
  // the warm-up on top of a duration.
  int run_s = w.duration_s > 0 ? w.duration_s + static_cast<int>(w.warmup_iterations / 1000)
                               : static_cast<int>(w.iterations / 1000);
  s.timeout_s = w.timeout_s ? w.timeout_s : run_s + in.margin_s;
}

// Of the intervals between two events, the share in which the tick may still (or again) be
// running when the next event comes before the step's premise fails: under TCG a loaded host
// can delay the tick's stop past the next event (2 of 135 intervals in one boot at 10 Hz on the
// development machine), and a timer of the CPU may fire a tick in a quiet stretch.
constexpr double kTickingAllowance = 0.10;

// Of the intervals after an event meant to bring the tick back (its CPU timer), the share in
// which it must have come back: a host that does not run the vCPU delays the tick past the next
// event (24 of 158 intervals in one boot of the default at a load average of 17 on the
// development machine), but a timer that never brings it back is no such event.
constexpr double kTickBackShare = 0.5;

// What the spin step's premise needs and the trace did not show; "" when it holds. The
// premise (docs/examples/vmstat-nohz.md): the events ran on the pinned nohz_full CPU, the trace
// holds every event's marker, the tick was stopped when each next event came (the interval's
// quiet part, parse/spin_ticks.h) in all but kTickingAllowance of the intervals, and an event
// that is to bring the tick back (a CPU timer) did so in at least kTickBackShare of them.
std::string spin_premise_failure(const VmstatSpinResult& s, const ChannelRecord* trace) {
  if (!s.pinned || !s.cpu) return "the tool was not pinned to a CPU";
  if (!trace) return "no trace of the step: the tick between the events cannot be checked";
  if (!s.trace_marker) return "the tool could not write trace markers (no tracefs?)";
  const SpinTicks t = spin_ticks(trace->data, *s.cpu);
  const std::string on_cpu = " of CPU " + std::to_string(*s.cpu);
  if (t.lost_events) return "the trace lost events: its counts are partial";
  if (t.markers != s.marked_events || !t.markers_in_order)
    return "the trace holds " + std::to_string(t.markers) + " event markers" + on_cpu +
           (t.markers_in_order ? "" : " (out of order)") + ", the tool wrote " +
           std::to_string(s.marked_events);
  if (t.intervals < 1) return "fewer than 2 events: no interval between events to check";
  const auto allowed = static_cast<long>(kTickingAllowance * static_cast<double>(t.intervals));
  if (t.ticking_at_next > allowed) {
    std::string kept;
    for (const auto& [dep, n] : t.kept_by)
      kept += (kept.empty() ? "; kept on by " : ", ") + dep + " x" + std::to_string(n);
    return "the tick" + on_cpu + " was running when the next event came in " +
           std::to_string(t.ticking_at_next) + " of " + std::to_string(t.intervals) +
           " intervals (allowed: " + std::to_string(allowed) + ")" + kept;
  }
  const auto needed = static_cast<long>(kTickBackShare * static_cast<double>(t.intervals));
  if (s.event.find("cputimer") != std::string::npos && t.tick_came_back < needed)
    return "the CPU timer brought the tick" + on_cpu + " back after " +
           std::to_string(t.tick_came_back) + " of " + std::to_string(t.intervals) +
           " events (needed: " + std::to_string(needed) + ")";
  return "";
}

// "<wl>: 299 events (fault+cputimer, 0 late) on CPU 2; the tick came back after 298 and
// stopped again after 298 of 298; running when the next event came in 0".
std::string spin_note(const std::string& wl, const VmstatSpinResult& s, const SpinTicks& t) {
  return wl + ": " + std::to_string(s.events) + " events (" + s.event + ", " +
         std::to_string(s.late_events) + " late) on CPU " + std::to_string(s.cpu.value_or(-1)) +
         "; the tick came back after " + std::to_string(t.tick_came_back) +
         " and stopped again after " + std::to_string(t.stopped_again) + " of " +
         std::to_string(t.intervals) + "; running when the next event came in " +
         std::to_string(t.ticking_at_next);
}

// The spin mode: no metric of its own (the step's are the trace's noise.* counts), a note per
// CPU on the tick between the events, and the cell invalid when the premise failed on a CPU.
void parse_spin(const WorkloadSpec& w, const StepRecords& r, WorkloadOutcome& o) {
  const std::vector<VmstatSpinResult> runs = parse_vmstat_spin_lines(r.out->data);
  const ChannelRecord* trace = r.all ? r.all->find(w.name + ".trace") : nullptr;
  for (const VmstatSpinResult& s : runs) {
    if (s.cpu && trace) o.notes.push_back(spin_note(w.name, s, spin_ticks(trace->data, *s.cpu)));
    const std::string why = spin_premise_failure(s, trace);
    if (!why.empty() && o.invalid.empty()) o.invalid = "premise failed: " + why;
  }
}

void parse(const WorkloadSpec& w, const StepRecords& r, WorkloadOutcome& o) {
  if (r.out->rc != 0)
    fail_once(o, "vmstat-overhead exited " + std::to_string(r.out->rc) + ": " +
                     sanitize_excerpt(r.err ? r.err->data : "", 400));
  else if (w.mode == "spin")
    parse_spin(w, r, o);
  else
    add_prefixed(o, w.name + ".", vmstat_overhead_metrics(parse_vmstat_overhead(r.out->data)));
}

// cycles_per_<operation> and the instruction counts' names of its mode.
std::vector<std::string> metric_names(const WorkloadSpec& w) {
  const auto n = vmstat_operation_names(w.mode);
  if (!n) return {};  // spin: no timed operation
  return {w.mode == "idle" ? "cycles_per_idle_loop" : "cycles_per_syscall",
          n->all,
          n->kernel,
          n->mean,
          rep_metric_names(n->all).norep,
          rep_metric_names(n->all).rep};
}

// The instructions of its marked operations on the CPU it was pinned to.
void plugin_metrics(const WorkloadSpec& w, const InsnStep& step, const ChannelRecord& out,
                    InsnCellOutcome& o) {
  const auto r = parsed_or_none(parse_vmstat_overhead, out.data);
  if (!r) return;
  const auto names = vmstat_operation_names(r->mode);
  if (!names || !r->marked_regions) return;  // a tool without markers
  const std::string all = w.name + "." + names->all;
  if (!r->cpu || !r->pinned) {
    o.record["invalid"][all] = "the tool was not pinned to a CPU";
    return;
  }
  const InsnPerOperation op = insn_per_operation(step, static_cast<unsigned>(*r->cpu),
                                                 static_cast<std::uint64_t>(*r->marked_regions));
  if (!op.valid) {
    o.record["invalid"][all] = op.reason;
    return;
  }
  const double per = names->operations_per_region;
  o.metrics[w.name + "." + names->mean] =
      instruction_metric("instructions", op.total / per, kPluginSource);
  if (!op.median_total) {
    o.record["invalid"][all] = "the plugin wrote no region median";
    return;
  }
  o.metrics[all] = instruction_metric("instructions", *op.median_total / per, kPluginSource);
  o.metrics[w.name + "." + names->kernel] =
      instruction_metric("instructions", *op.median_kernel / per, kPluginSource);
  add_rep_metrics(w.name, names->all, op, per, o);
}

}  // namespace
}  // namespace tool_vmstat_overhead

const WorkloadTool& vmstat_overhead_tool() {
  static const WorkloadTool t{.name = "vmstat-overhead",
                              .default_duration_s = 0,
                              .own_fields = {"touch_pages", "sleep_us", "rate_hz", "event"},
                              .read_fields = tool_vmstat_overhead::read_fields,
                              .step = tool_vmstat_overhead::step,
                              .parse = tool_vmstat_overhead::parse,
                              .metric_names = tool_vmstat_overhead::metric_names,
                              .plugin_metrics = tool_vmstat_overhead::plugin_metrics,
                              .guest_binary = "vmstat-overhead",
                              .binary_always = true};
  return t;
}

}  // namespace isolab
