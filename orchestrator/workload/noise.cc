#include "workload/noise.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/error.h"
#include "base/files.h"

namespace isolab {

namespace {

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size() && out.size() < 3) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t b = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

std::optional<double> to_seconds(std::string_view s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) || v < 0)
    return std::nullopt;
  return v;
}

struct CheckedRow {
  const char* row;     // /proc/interrupts row
  const char* cause;   // noise cause (parse/trace.h)
  const char* events;  // what the trace counted, for the note
};

constexpr CheckedRow kCheckedRows[] = {
    {"LOC", "local_timer", "local_timer_entry"},
    {"RES", "ipi_reschedule", "reschedule_entry"},
    {"CAL", "ipi_call_function", "call_function_entry+call_function_single_entry"},
};

const CpuTrace& cpu_trace(const TraceCounts& t, int cpu) {
  static const CpuTrace empty;
  auto it = t.per_cpu.find(cpu);
  return it == t.per_cpu.end() ? empty : it->second;
}

std::optional<uint64_t> row_delta(const InterruptRow* b, const InterruptRow* a, int cpu) {
  if (!b || !a) return std::nullopt;
  auto ib = b->counts.find(static_cast<unsigned>(cpu));
  auto ia = a->counts.find(static_cast<unsigned>(cpu));
  if (ib == b->counts.end() || ia == a->counts.end()) return std::nullopt;
  return counter_delta(ib->second, ia->second);
}

std::optional<InterruptsSnapshot> snapshot(const ChannelContents& ch, const std::string& name,
                                           std::vector<std::string>& notes) {
  const ChannelRecord* r = ch.find(name);
  if (!r) return std::nullopt;
  try {
    return parse_proc_interrupts(r->data);
  } catch (const Error& e) {
    notes.push_back(name + ": " + e.what() + ": no cross-check with the trace");
    return std::nullopt;
  }
}

std::optional<double> step_window(const ChannelContents& ch, const std::string& wl,
                                  std::vector<std::string>& notes) {
  const ChannelRecord* r = ch.find(wl + ".window");
  if (!r) {
    notes.push_back(wl + ".window: missing");
    return std::nullopt;
  }
  std::string problem;
  auto w = parse_step_window(r->data, problem);
  if (!w) notes.push_back(wl + ".window: " + problem);
  return w;
}

std::vector<int> traced_cpus(const TraceCounts& t, const std::string& wl,
                             std::vector<std::string>& notes) {
  if (!t.traced_cpus.empty()) return t.traced_cpus;
  std::vector<int> seen;
  for (const auto& [cpu, c] : t.per_cpu) seen.push_back(cpu);
  if (!seen.empty())
    notes.push_back(wl + ".trace has no '# cpu N' headers: using the CPUs with events");
  return seen;
}

// How vmstat_update was queued (docs/examples/vmstat-shepherd-locks.md) on each traced CPU. Count
// metrics like the others (kind count over the step window); details per CPU. Needs
// "<wl>.vmstat_queue" (guest/init_script.cc) and workqueue_queue_work among the boot trace events.
void add_vmstat_queueing(StepNoise& out, const ChannelContents& ch, const std::string& wl,
                         std::string_view run_text, const std::vector<int>& cpus,
                         std::optional<double> window) {
  const ChannelRecord* q = ch.find(wl + ".vmstat_queue");
  const ChannelRecord* enabled = ch.find("trace_events");
  if (!q || !enabled || enabled->data.find("workqueue_queue_work") == std::string::npos) {
    out.notes.push_back(wl +
                        ": workqueue_queue_work was not traced: no vmstat_update queueing "
                        "counts");
    return;
  }
  const auto per_cpu = vmstat_queueing(q->data, run_text);
  struct Field {
    const char* metric;
    long VmstatQueueing::*count;
  };
  static const Field fields[] = {
      {"noise.vmstat_queued_while_pending_per_s", &VmstatQueueing::while_pending},
      {"noise.vmstat_queued_while_running_per_s", &VmstatQueueing::while_running}};
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    auto it = per_cpu.find(cpus[i]);
    const VmstatQueueing v = it == per_cpu.end() ? VmstatQueueing{} : it->second;
    if (out.details["cpus"].is_array() && i < out.details["cpus"].size())
      out.details["cpus"][i]["vmstat_queueing"] = {{"queued", v.queued},
                                                   {"while_pending", v.while_pending},
                                                   {"while_running", v.while_running}};
  }
  if (!window || *window <= 0) return;
  for (const Field& f : fields) {
    MetricPerCpu pc;
    pc.kind = "count";
    pc.window_s = *window;
    for (int cpu : cpus) {
      auto it = per_cpu.find(cpu);
      const long n = it == per_cpu.end() ? 0 : it->second.*f.count;
      pc.cpus.push_back(cpu);
      pc.counts.push_back(n);
      pc.slots.emplace_back(n / *window);
    }
    if (auto m = make_per_cpu_metric("1/s", true, "mean", std::move(pc)))
      out.metrics[f.metric] = std::move(*m);
  }
}

// Zone and pcp lock contention (docs/examples/vmstat-shepherd-locks.md). Why there is
// none, or "ok".
std::string lock_contention_status(const ChannelContents& ch, const std::string& wl) {
  const ChannelRecord* enabled = ch.find("trace_events");
  if (!enabled || enabled->data.find("lock:contention_begin") == std::string::npos)
    return "lock:contention_begin was not traced (not in the guest's set_event: a kernel "
           "without the lock tracepoints)";
  const ChannelRecord* trig = ch.find("lock_contention_trigger");
  // The trigger file lists the triggers set ("stacktrace:unlimited if ..."), or only
  // "# Available triggers: ..." comment lines when none is.
  if (!trig || (trig->data.rfind("stacktrace", 0) != 0 &&
                trig->data.find("\nstacktrace") == std::string::npos))
    return "no stacktrace trigger on lock:contention_begin (CONFIG_STACKTRACE off?): zone "
           "and pcp locks cannot be told apart";
  if (!ch.find(wl + ".lock_contention")) return "no " + wl + ".lock_contention record";
  return "ok";
}

nlohmann::json waits_json(const LockWaits& w) {
  return {{"count", w.count},
          {"ended", w.ended},
          {"wait_us", w.wait_ns / 1e3},
          {"max_wait_us", w.max_wait_ns / 1e3}};
}

nlohmann::json lock_cpu_json(const CpuLockContention& c) {
  return {{"zone", waits_json(c.zone)},
          {"pcp", waits_json(c.pcp)},
          {"other", waits_json(c.other)},
          {"no_stack", c.no_stack}};
}

struct LockField {
  const char* name;  // "zone" -> noise.zone_lock_*
  LockWaits CpuLockContention::*waits;
};
constexpr LockField kLockFields[] = {{"zone", &CpuLockContention::zone},
                                     {"pcp", &CpuLockContention::pcp}};

// Per lock over cpus: contentions per second (kind count; aggregate rate_aggregate) and the
// summed wait in µs (aggregate "sum"), named noise.<lock>_lock_contentions<scope>_per_s and
// noise.<lock>_lock_wait<scope>_us.
void add_lock_metrics(StepNoise& out, const LockContention& lc, const std::vector<int>& cpus,
                      double window, const std::string& scope, const char* rate_aggregate) {
  for (const LockField& f : kLockFields) {
    MetricPerCpu rate, wait;
    rate.kind = "count";
    rate.window_s = window;
    for (int cpu : cpus) {
      auto it = lc.per_cpu.find(cpu);
      const LockWaits w = it == lc.per_cpu.end() ? LockWaits{} : it->second.*f.waits;
      rate.cpus.push_back(cpu);
      rate.counts.push_back(w.count);
      rate.slots.emplace_back(w.count / window);
      wait.cpus.push_back(cpu);
      wait.slots.emplace_back(w.wait_ns / 1e3);
    }
    const std::string base = std::string("noise.") + f.name + "_lock_";
    if (auto m = make_per_cpu_metric("1/s", true, rate_aggregate, std::move(rate)))
      out.metrics[base + "contentions" + scope + "_per_s"] = std::move(*m);
    if (auto m = make_per_cpu_metric("us", true, "sum", std::move(wait)))
      out.metrics[base + "wait" + scope + "_us"] = std::move(*m);
  }
}

void sum_waits(LockWaits& into, const LockWaits& w) {
  into.count += w.count;
  into.ended += w.ended;
  into.wait_ns += w.wait_ns;
  into.max_wait_ns = std::max(into.max_wait_ns, w.max_wait_ns);
}

// Contention on the zone and pcp locks (parse/trace.h lock_contention()), per traced
// CPU and over all CPUs. Without the tracepoints, the trigger or the record: no metrics (a
// metric cannot be all null), and details.lock_contention.status says why.
void add_lock_contention(StepNoise& out, const ChannelContents& ch, const std::string& wl,
                         const std::vector<int>& cpus, std::optional<double> window) {
  const std::string status = lock_contention_status(ch, wl);
  if (status != "ok") {
    out.details["lock_contention"] = {{"status", status}};
    out.notes.push_back(wl + ": no lock contention metrics: " + status);
    return;
  }
  const LockContention lc = lock_contention(ch.find(wl + ".lock_contention")->data);
  CpuLockContention all;
  nlohmann::json by_cpu = nlohmann::json::object();
  for (const auto& [cpu, c] : lc.per_cpu) {
    by_cpu[std::to_string(cpu)] = lock_cpu_json(c);
    sum_waits(all.zone, c.zone);
    sum_waits(all.pcp, c.pcp);
    sum_waits(all.other, c.other);
    all.no_stack += c.no_stack;
  }
  out.details["lock_contention"] = {{"status", status},
                                    {"lost_events", lc.lost_events},
                                    {"malformed_lines", lc.malformed},
                                    {"all_cpus", lock_cpu_json(all)},
                                    {"per_cpu", by_cpu}};
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    auto it = lc.per_cpu.find(cpus[i]);
    if (out.details["cpus"].is_array() && i < out.details["cpus"].size())
      out.details["cpus"][i]["lock_contention"] =
          lock_cpu_json(it == lc.per_cpu.end() ? CpuLockContention{} : it->second);
  }
  if (lc.lost_events)
    out.notes.push_back(wl + ": the lock contention trace lost events: counts are lower bounds");
  if (all.no_stack > 0)
    out.notes.push_back(wl + ": " + std::to_string(all.no_stack) +
                        " lock contentions without a stack trace were not classified");
  if (!window || *window <= 0) return;
  add_lock_metrics(out, lc, cpus, *window, "", "mean");
  // Every CPU of the guest (the load usually runs on the housekeeping CPUs), summed per cell.
  add_lock_metrics(out, lc, lc.cpus, *window, "_all_cpus", "sum");
}

}  // namespace

std::optional<double> parse_step_window(std::string_view text, std::string& problem) {
  const auto w = words(text);
  std::optional<double> start, end;
  if (w.size() == 2) start = to_seconds(w[0]), end = to_seconds(w[1]);
  if (!start || !end) {
    problem = "expected '<start> <end>' in seconds, got '" + sanitize_excerpt(text, 80) + "'";
    return std::nullopt;
  }
  if (*end <= *start) {
    problem = "the step ends (" + std::string(w[1]) + ") no later than it starts (" +
              std::string(w[0]) + ")";
    return std::nullopt;
  }
  return *end - *start;
}

std::optional<uint64_t> counter_delta(uint64_t before, uint64_t after) {
  constexpr uint64_t kWrap = uint64_t{1} << 32;
  if (after >= before) return after - before;
  if (before < kWrap) return after + kWrap - before;
  return std::nullopt;
}

uint64_t cross_check_tolerance(uint64_t proc_delta, uint64_t trace_count) {
  return 2 + std::max(proc_delta, trace_count) / 20;
}

void cross_check_interrupts(const TraceCounts& t, const std::vector<int>& cpus,
                            const InterruptsSnapshot& before, const InterruptsSnapshot& after,
                            nlohmann::json& details, std::vector<std::string>& notes) {
  nlohmann::json unchecked = nlohmann::json::array();
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    const int cpu = cpus[i];
    nlohmann::json rows = nlohmann::json::object();
    std::string disagree;
    for (const CheckedRow& r : kCheckedRows) {
      auto delta = row_delta(before.find(r.row), after.find(r.row), cpu);
      if (!delta) {
        unchecked.push_back(std::string(r.row) + " on CPU " + std::to_string(cpu));
        continue;
      }
      const auto n = static_cast<uint64_t>(cause_count(cpu_trace(t, cpu), r.cause));
      const uint64_t tol = cross_check_tolerance(*delta, n);
      const uint64_t diff = *delta > n ? *delta - n : n - *delta;
      const bool agree = diff <= tol;
      rows[r.row] = {{"delta", *delta}, {"trace", n}, {"tolerance", tol}, {"agree", agree}};
      if (!agree && !(t.lost_events && n < *delta))
        disagree += (disagree.empty() ? "" : "; ") + std::string(r.row) + " +" +
                    std::to_string(*delta) + ", " + r.events + " " + std::to_string(n);
    }
    if (details["cpus"].is_array() && i < details["cpus"].size())
      details["cpus"][i]["interrupts"] = rows;
    if (!disagree.empty())
      notes.push_back("trace and /proc/interrupts disagree on CPU " + std::to_string(cpu) + ": " +
                      disagree);
  }
  details["interrupts_unchecked"] = unchecked;
}

StepNoise step_noise(const ChannelContents& ch, const std::string& wl) {
  StepNoise out;
  const ChannelRecord* tr = ch.find(wl + ".trace");
  if (!tr) return out;
  TraceCounts t = parse_trace(tr->data);
  std::vector<int> cpus = traced_cpus(t, wl, out.notes);
  if (cpus.empty()) {
    out.notes.push_back(wl + ".trace names no CPU: no noise metrics");
    return out;
  }
  std::optional<double> window = step_window(ch, wl, out.notes);
  TraceNoise tn = trace_noise(t, cpus, window);
  out.metrics = std::move(tn.metrics);
  out.details = std::move(tn.details);
  out.notes.insert(out.notes.end(), tn.notes.begin(), tn.notes.end());
  std::optional<double> used_window;  // the step window, or the trace span trace_noise() chose
  if (out.details.is_object() && out.details["window_s"].is_number())
    used_window = out.details["window_s"].get<double>();
  add_vmstat_queueing(out, ch, wl, tr->data, cpus, used_window);
  add_lock_contention(out, ch, wl, cpus, used_window);
  auto before = snapshot(ch, wl + ".interrupts_before", out.notes);
  auto after = snapshot(ch, wl + ".interrupts_after", out.notes);
  if (before && after) cross_check_interrupts(t, cpus, *before, *after, out.details, out.notes);
  return out;
}

}  // namespace isolab
