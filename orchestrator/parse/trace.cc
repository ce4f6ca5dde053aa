#include "parse/trace.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <set>
#include <tuple>
#include <utility>

#include "parse/text_util.h"
#include "parse/trace_text.h"

namespace isolab {

namespace {

using namespace trace_text;

constexpr const char* kOsnoiseTimer = "irq_noise:local_timer";

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_ident(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameBytes) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// The value of "key" (which ends in '=' or ' ') at a word start, up to the next space.
std::string_view word_after(std::string_view body, std::string_view key) {
  for (std::size_t at = body.find(key); at != std::string_view::npos; at = body.find(key, at + 1)) {
    if (at != 0 && !is_space(body[at - 1]) && body[at - 1] != ':') continue;
    std::string_view v = body.substr(at + key.size());
    return v.substr(0, std::min(v.find(' '), v.size()));
  }
  return {};
}

// "<flags> <ts>" or "<flags><ts>" or "<ts>": the timestamp is read from the end.
struct Stamp {
  std::string_view flags;
  std::optional<int64_t> ns;
};

std::optional<Stamp> parse_stamp(std::string_view head) {
  std::size_t k = head.size();
  while (k > 0 && is_digit(head[k - 1])) --k;
  const std::size_t frac_len = head.size() - k;
  if (frac_len == 0) return std::nullopt;
  Stamp st;
  std::size_t begin = k;
  if (k > 0 && head[k - 1] == '.' && frac_len <= 9) {
    std::size_t m = k - 1;
    while (m > 0 && is_digit(head[m - 1])) --m;
    const std::size_t int_len = k - 1 - m;
    if (int_len == 0 || int_len > 9) return std::nullopt;
    int64_t secs = *to_ll(head.substr(m, int_len));
    int64_t frac = *to_ll(head.substr(k, frac_len));
    for (std::size_t i = frac_len; i < 9; ++i) frac *= 10;
    st.ns = secs * 1000000000 + frac;
    begin = m;
  } else if ((k > 0 && head[k - 1] == '.') || frac_len > 20) {
    return std::nullopt;
  }
  st.flags = trim_blanks(head.substr(0, begin));
  if (st.flags.size() > 16 ||
      std::any_of(st.flags.begin(), st.flags.end(), [](char c) { return is_space(c); }))
    return std::nullopt;
  return st;
}

// "<task>-<pid> [(<tgid>) ]" before the "[cpu]" at i.
bool parse_task(std::string_view pre, TraceLine& out) {
  pre = trim_blanks(pre);
  if (!pre.empty() && pre.back() == ')') {
    std::size_t open = pre.rfind('(');
    if (open == std::string_view::npos) return false;
    pre = trim_blanks(pre.substr(0, open));
  }
  std::size_t dash = pre.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return false;
  std::string_view pid = pre.substr(dash + 1);
  if (pid.empty() || pid.size() > 10 || !std::all_of(pid.begin(), pid.end(), is_digit))
    return false;
  out.pid = static_cast<long>(*to_ll(pid));
  out.task = trim_blanks(pre.substr(0, dash));
  return !out.task.empty();
}

// The osnoise tracer's line at the end of each period (kernel/trace/trace_osnoise.c
// trace_osnoise_print(); Documentation/trace/osnoise-tracer.rst): no event name, nine numbers
// after the timestamp (runtime, noise, % available, max single, then the interference counters
// HW NMI IRQ SIRQ THREAD).
bool is_osnoise_summary(std::string_view tail) {
  const auto words = parse_detail::split_ws(trim_blanks(tail));
  return words.size() == 9 && std::all_of(words.begin(), words.end(), [](std::string_view w) {
           return parse_detail::to_double(w).has_value();
         });
}

std::optional<TraceLine> parse_at(std::string_view line, std::size_t lb) {
  std::size_t rb = lb + 1;
  while (rb < line.size() && is_digit(line[rb])) ++rb;
  if (rb == lb + 1 || rb - lb - 1 > 5 || rb >= line.size() || line[rb] != ']') return std::nullopt;
  TraceLine t;
  long long cpu = *to_ll(line.substr(lb + 1, rb - lb - 1));
  if (cpu > kMaxCpu || !parse_task(line.substr(0, lb), t)) return std::nullopt;
  t.cpu = static_cast<int>(cpu);
  std::string_view rest = line.substr(rb + 1);
  std::size_t colon = rest.find(": ");
  if (colon == std::string_view::npos) return std::nullopt;
  auto stamp = parse_stamp(trim_blanks(rest.substr(0, colon)));
  if (!stamp) return std::nullopt;
  t.flags = stamp->flags;
  t.ts_ns = stamp->ns;
  std::string_view tail = rest.substr(colon + 2);
  if (trim_blanks(tail) == kStackHeader) {
    t.event = kStackHeader;
    return t;
  }
  if (is_osnoise_summary(tail)) {
    t.event = kOsnoiseSummary;
    t.body = trim_blanks(tail);
    return t;
  }
  std::size_t ev_end = tail.find(':');
  if (ev_end == std::string_view::npos || !is_ident(tail.substr(0, ev_end))) return std::nullopt;
  t.event = tail.substr(0, ev_end);
  t.body = tail.substr(ev_end + 1);
  if (!t.body.empty() && t.body.front() == ' ') t.body.remove_prefix(1);
  return t;
}

// Entry/exit pairs and how an entry is keyed (the same key must be on the exit).
enum class PairKey { none, irq, vec, function };
struct PairSpec {
  std::string_view entry, exit, cause;
  PairKey key;
};
constexpr PairSpec kPairs[] = {
    {"local_timer_entry", "local_timer_exit", "local_timer", PairKey::none},
    {"reschedule_entry", "reschedule_exit", "ipi_reschedule", PairKey::none},
    {"call_function_entry", "call_function_exit", "ipi_call_function", PairKey::none},
    {"call_function_single_entry", "call_function_single_exit", "ipi_call_function", PairKey::none},
    {"irq_handler_entry", "irq_handler_exit", "irq", PairKey::irq},
    {"softirq_entry", "softirq_exit", "softirq", PairKey::vec},
    {"workqueue_execute_start", "workqueue_execute_end", "workqueue", PairKey::function},
};

std::string_view softirq_action(std::string_view body) {
  std::string_view a = word_after(body, "[action=");
  if (!a.empty() && a.back() == ']') a.remove_suffix(1);
  return a;
}

std::string pair_key(const PairSpec& p, std::string_view body) {
  switch (p.key) {
    case PairKey::irq:
      return clean_name(word_after(body, "irq="));
    case PairKey::vec:
      return clean_name(word_after(body, "vec="));
    case PairKey::function:
      return clean_name(parse_workqueue_fields(body).function);
    case PairKey::none:
      break;
  }
  return {};
}

// irq_handler_entry "irq=%d name=%s": the name is the rest of the line.
std::string irq_name(std::string_view body) {
  std::size_t at = body.find("name=");
  return at == std::string_view::npos ? std::string()
                                      : clean_name(trim_blanks(body.substr(at + 5)));
}

std::string entry_name(const PairSpec& p, std::string_view body) {
  switch (p.key) {
    case PairKey::irq:
      return irq_name(body);
    case PairKey::vec:
      return clean_name(softirq_action(body));
    case PairKey::function:
      return clean_name(parse_workqueue_fields(body).function);
    case PairKey::none:
      break;
  }
  return {};
}

struct Open {
  std::optional<int64_t> ts_ns;
  std::string name;
};

// Parsing state beyond the result: the open entries per (cpu, entry event, key).
struct State {
  TraceCounts t;
  std::map<std::tuple<int, std::string_view, std::string>, std::vector<Open>> open;
  TraceHeaders headers;
};

void on_entry(State& s, const PairSpec& p, const TraceLine& l) {
  auto& stack = s.open[{l.cpu, p.entry, pair_key(p, l.body)}];
  if (stack.size() >= kMaxOpenPerKey) stack.erase(stack.begin());
  stack.push_back({l.ts_ns, entry_name(p, l.body)});
}

void on_exit(State& s, const PairSpec& p, const TraceLine& l) {
  s.t.exit_events = true;
  auto it = s.open.find({l.cpu, p.entry, pair_key(p, l.body)});
  if (it == s.open.end()) return;
  Open o = std::move(it->second.back());
  it->second.pop_back();
  if (it->second.empty()) s.open.erase(it);
  if (!o.ts_ns || !l.ts_ns || *l.ts_ns < *o.ts_ns) return;
  CpuTrace& c = s.t.per_cpu[l.cpu];
  ++c.complete_pairs;
  const int64_t d = *l.ts_ns - *o.ts_ns;
  if (!c.longest || d > c.longest->duration_ns)
    c.longest = Interruption{std::string(p.cause), std::move(o.name), *o.ts_ns, d};
}

void count_names(CpuTrace& c, const TraceLine& l) {
  if (l.event == "workqueue_execute_start") {
    std::string fn = clean_name(parse_workqueue_fields(l.body).function);
    if (fn.empty()) return;
    ++c.workqueue_functions[fn];
    if (fn == "vmstat_update" && l.ts_ns) c.vmstat_update_ns.push_back(*l.ts_ns);
  } else if (l.event == "irq_handler_entry") {
    std::string name = irq_name(l.body);
    if (!name.empty()) ++c.irq_handlers[name];
  } else if (l.event == "softirq_entry") {
    std::string name = clean_name(softirq_action(l.body));
    if (!name.empty()) ++c.softirq_actions[name];
  }
}

// The osnoise tracer's noise events (include/trace/events/osnoise.h, 6.1):
// "<name>:<number> start <s.ns> duration <ns> ns"; thread_noise names the task ("migration/8:54").
struct OsnoiseNoise {
  std::string_view event, cause;
};
constexpr OsnoiseNoise kOsnoiseNoise[] = {{"irq_noise", "irq"},
                                          {"softirq_noise", "softirq"},
                                          {"nmi_noise", "nmi"},
                                          {"thread_noise", "thread"}};

// The name before the last ':' of the body's first word ("local_timer" of "local_timer:236").
std::string_view osnoise_source(std::string_view body) {
  std::string_view w = trim_blanks(body);
  w = w.substr(0, std::min(w.find(" start "), w.size()));
  return w.substr(0, std::min(w.rfind(':'), w.size()));
}

// irq_noise of the local timer counts as the local_timer cause, like local_timer_entry.
std::string event_key(const TraceLine& l) {
  if (l.event == "irq_noise" && osnoise_source(l.body) == "local_timer") return kOsnoiseTimer;
  return std::string(l.event);
}

// "start 5789.857529929": seconds.nanoseconds to ns.
std::optional<int64_t> osnoise_start_ns(std::string_view body) {
  const std::string_view v = word_after(body, "start ");
  const std::size_t dot = v.find('.');
  if (dot == std::string_view::npos || v.size() - dot - 1 != 9) return std::nullopt;
  const auto sec = to_ll(v.substr(0, dot)), ns = to_ll(v.substr(dot + 1));
  if (!sec || !ns || *sec < 0 || *sec > 9'000'000'000LL) return std::nullopt;
  return *sec * 1'000'000'000LL + *ns;
}

// A noise event is a whole interruption: its duration is on the line.
void on_osnoise_noise(State& s, const OsnoiseNoise& n, const TraceLine& l) {
  const auto d = to_ll(word_after(l.body, "duration "));
  const auto start = osnoise_start_ns(l.body);
  if (!d || *d < 0 || !start) return;
  s.t.exit_events = true;  // its end is known, as an exit event's would be
  CpuTrace& c = s.t.per_cpu[l.cpu];
  ++c.complete_pairs;
  const std::string_view cause = event_key(l) == kOsnoiseTimer ? "local_timer" : n.cause;
  if (!c.longest || *d > c.longest->duration_ns)
    c.longest = Interruption{std::string(cause), clean_name(osnoise_source(l.body)), *start, *d};
}

// Events this parser reads (a noise cause, its exit, workqueue, the osnoise tracer's).
bool is_recognised(std::string_view event) {
  static const std::set<std::string_view> known = [] {
    std::set<std::string_view> k = {"timer_expire_entry",   "hrtimer_expire_entry",
                                    "workqueue_queue_work", "workqueue_activate_work",
                                    "sample_threshold",     kOsnoiseSummary};
    for (const PairSpec& p : kPairs) k.insert({p.entry, p.exit});
    for (const OsnoiseNoise& n : kOsnoiseNoise) k.insert(n.event);
    return k;
  }();
  return known.count(event) != 0;
}

void record(State& s, const TraceLine& l) {
  ++s.t.lines;
  if (is_recognised(l.event)) ++s.t.recognised;
  CpuTrace& c = s.t.per_cpu[l.cpu];
  ++c.events[event_key(l)];
  for (const OsnoiseNoise& n : kOsnoiseNoise)
    if (l.event == n.event) on_osnoise_noise(s, n, l);
  if (l.ts_ns) {
    s.t.first_ns = std::min(s.t.first_ns.value_or(*l.ts_ns), *l.ts_ns);
    s.t.last_ns = std::max(s.t.last_ns.value_or(*l.ts_ns), *l.ts_ns);
  } else {
    s.t.counter_clock = true;
  }
  count_names(c, l);
  for (const PairSpec& p : kPairs) {
    if (l.event == p.entry) on_entry(s, p, l);
    if (l.event == p.exit) on_exit(s, p, l);
  }
}

struct CauseEvents {
  std::string_view cause;
  std::vector<std::string_view> events;
};

const std::vector<CauseEvents>& cause_events() {
  static const std::vector<CauseEvents> t = {
      {"local_timer", {"local_timer_entry", kOsnoiseTimer}},
      {"ipi_reschedule", {"reschedule_entry"}},
      {"ipi_call_function", {"call_function_entry", "call_function_single_entry"}},
      {"irq", {"irq_handler_entry", "irq_noise"}},
      {"softirq", {"softirq_entry", "softirq_noise"}},
      {"timer_callbacks", {"timer_expire_entry", "hrtimer_expire_entry"}},
  };
  return t;
}

long lookup(const std::map<std::string, long>& m, std::string_view key) {
  auto it = m.find(std::string(key));
  return it == m.end() ? 0 : it->second;
}

}  // namespace

std::optional<TraceLine> parse_trace_line(std::string_view line) {
  if (line.size() > kMaxTraceLineBytes) return std::nullopt;
  for (std::size_t lb = line.find('['); lb != std::string_view::npos; lb = line.find('[', lb + 1))
    if (auto t = parse_at(line, lb)) return t;
  return std::nullopt;
}

WorkqueueFields parse_workqueue_fields(std::string_view body) {
  WorkqueueFields w;
  w.function = word_after(body, "function=");
  if (w.function.empty()) w.function = word_after(body, "function ");
  auto cpu_field = [&](std::string_view key, bool req) -> std::optional<int> {
    auto v = to_ll(word_after(body, key));
    if (!v) return std::nullopt;
    if (*v == -1 || *v == 4294967295LL) return -1;
    if (*v >= 0 && *v <= kMaxCpu) return static_cast<int>(*v);
    if (req && *v > kMaxCpu) return -1;
    return std::nullopt;
  };
  w.req_cpu = cpu_field("req_cpu=", true);
  w.cpu = cpu_field("cpu=", false);
  return w;
}

InterruptionStart interruption_start(const TraceLine& l) {
  static constexpr std::pair<std::string_view, std::string_view> kVectors[] = {
      {"local_timer_entry", "local_timer"},
      {"reschedule_entry", "ipi_reschedule"},
      {"call_function_entry", "ipi_call_function"},
      {"call_function_single_entry", "ipi_call_function"},
  };
  for (const auto& [event, cause] : kVectors)
    if (l.event == event) return {cause, {}};
  if (l.event == "irq_handler_entry") return {"irq", irq_name(l.body)};
  if (l.event != "workqueue_execute_start") return {};
  std::string fn = clean_name(parse_workqueue_fields(l.body).function);
  return {fn == "vmstat_update" ? "vmstat_update" : "workqueue_other", std::move(fn)};
}

TraceCounts parse_trace(std::string_view text) {
  State s;
  std::size_t pos = 0;
  long line_no = 0;
  auto malformed = [&] {
    if (s.t.malformed++ == 0) s.t.first_malformed_line = line_no;
  };
  while (pos < text.size()) {
    ++line_no;
    std::size_t eol = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line.size() > kMaxTraceLineBytes) {
      malformed();
    } else if (line[0] == '#') {
      read_comment(s.headers, line);
    } else if (is_lost_line(line)) {
      s.t.lost_events = true;
    } else if (!stack_frame(line).empty()) {
      continue;  // a kernel stack entry's frame
    } else if (auto l = parse_trace_line(line)) {
      if (l->event != kStackHeader) record(s, *l);
    } else {
      malformed();
    }
  }
  s.t.traced_cpus = std::move(s.headers.cpus);
  s.t.lost_events = s.t.lost_events || s.headers.lost_events;
  return std::move(s.t);
}

const std::vector<std::string>& noise_causes() {
  static const std::vector<std::string> c = {"vmstat_update",  "workqueue_other",   "local_timer",
                                             "ipi_reschedule", "ipi_call_function", "irq",
                                             "softirq",        "timer_callbacks"};
  return c;
}

long cause_count(const CpuTrace& c, std::string_view cause) {
  const long vmstat = lookup(c.workqueue_functions, "vmstat_update");
  if (cause == "vmstat_update") return vmstat;
  if (cause == "workqueue_other") return lookup(c.events, "workqueue_execute_start") - vmstat;
  if (cause == "interruptions") {
    long n = 0;
    for (std::string_view k : {"local_timer", "ipi_reschedule", "ipi_call_function", "irq",
                               "vmstat_update", "workqueue_other"})
      n += cause_count(c, k);
    return n + lookup(c.events, "nmi_noise") + lookup(c.events, "thread_noise");
  }
  long n = 0;
  for (const auto& ce : cause_events())
    if (ce.cause == cause)
      for (std::string_view e : ce.events) n += lookup(c.events, e);
  return n;
}

namespace {

const CpuTrace& cpu_or_empty(const TraceCounts& t, int cpu) {
  static const CpuTrace empty;
  auto it = t.per_cpu.find(cpu);
  return it == t.per_cpu.end() ? empty : it->second;
}

std::vector<double> gaps_ms(const CpuTrace& c) {
  std::vector<int64_t> ts = c.vmstat_update_ns;
  std::sort(ts.begin(), ts.end());
  std::vector<double> out;
  for (std::size_t i = 1; i < ts.size(); ++i) out.push_back((ts[i] - ts[i - 1]) / 1e6);
  return out;
}

struct GapStats {
  std::size_t runs = 0, n = 0;
  std::optional<double> min, median, max;  // nullopt with fewer than 2 runs
};

GapStats gap_stats_of(const CpuTrace& c) {
  GapStats s;
  s.runs = c.vmstat_update_ns.size();
  std::vector<double> g = gaps_ms(c);
  s.n = g.size();
  if (g.empty()) return s;
  std::sort(g.begin(), g.end());
  const std::size_t n = g.size();
  s.min = g.front();
  s.median = n % 2 ? g[n / 2] : (g[n / 2 - 1] + g[n / 2]) / 2;
  s.max = g.back();
  return s;
}

nlohmann::json opt_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json gap_stats(const CpuTrace& c) {
  GapStats s = gap_stats_of(c);
  return {{"runs", s.runs},         {"n", s.n},
          {"min", opt_json(s.min)}, {"median", opt_json(s.median)},
          {"max", opt_json(s.max)}, {"status", s.n > 0 ? "ok" : "fewer than 2 runs"}};
}

nlohmann::json name_counts(const std::map<std::string, long>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

struct Window {
  std::optional<double> s;
  const char* source = nullptr;
};

Window choose_window(const TraceCounts& t, std::optional<double> step_s,
                     std::vector<std::string>& notes) {
  if (step_s && std::isfinite(*step_s) && *step_s > 0) return {*step_s, "step"};
  if (t.first_ns && t.last_ns && *t.last_ns > *t.first_ns) {
    double span = (*t.last_ns - *t.first_ns) / 1e9;
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "no usable step window: noise rates use the span of the trace timestamps, "
                  "%.3f s (shorter than the step, so rates read high)",
                  span);
    notes.emplace_back(buf);
    return {span, "trace span"};
  }
  notes.emplace_back(
      "no usable step window and fewer than two trace timestamps: noise rates omitted");
  return {};
}

void add_rate_metric(TraceNoise& out, const TraceCounts& t, const std::vector<int>& cpus,
                     const std::string& cause, double window_s) {
  MetricPerCpu pc;
  pc.kind = "count";
  pc.window_s = window_s;
  for (int cpu : cpus) {
    long n = cause_count(cpu_or_empty(t, cpu), cause);
    pc.cpus.push_back(cpu);
    pc.counts.push_back(n);
    pc.slots.emplace_back(n / window_s);
  }
  if (auto m = make_per_cpu_metric("1/s", true, "mean", std::move(pc)))
    out.metrics["noise." + cause + "_per_s"] = std::move(*m);
}

void add_gap_metric(TraceNoise& out, const TraceCounts& t, const std::vector<int>& cpus) {
  MetricPerCpu pc;
  for (int cpu : cpus)
    for (double g : gaps_ms(cpu_or_empty(t, cpu))) {
      pc.cpus.push_back(cpu);
      pc.slots.emplace_back(g);
    }
  if (auto m = make_per_cpu_metric("ms", false, "min", std::move(pc)))
    out.metrics["noise.vmstat_update_gap_ms"] = std::move(*m);
}

// One slot per traced CPU, null with fewer than 2 runs.
void add_gap_stat_metrics(TraceNoise& out, const TraceCounts& t, const std::vector<int>& cpus) {
  struct Stat {
    const char* name;
    const char* aggregate;
    std::optional<double> GapStats::*field;
  };
  static const Stat stats[] = {{"min", "min", &GapStats::min},
                               {"median", "mean", &GapStats::median},
                               {"max", "max", &GapStats::max}};
  for (const Stat& st : stats) {
    MetricPerCpu pc;
    for (int cpu : cpus) {
      pc.cpus.push_back(cpu);
      pc.slots.push_back(gap_stats_of(cpu_or_empty(t, cpu)).*st.field);
    }
    if (auto m = make_per_cpu_metric("ms", false, st.aggregate, std::move(pc)))
      out.metrics[std::string("noise.vmstat_update_gap_") + st.name + "_ms"] = std::move(*m);
  }
}

void add_longest_metric(TraceNoise& out, const TraceCounts& t, const std::vector<int>& cpus) {
  if (!t.exit_events) {
    out.notes.emplace_back("the trace has no exit events: noise.longest_us omitted");
    return;
  }
  MetricPerCpu pc;
  for (int cpu : cpus) {
    const auto& l = cpu_or_empty(t, cpu).longest;
    pc.cpus.push_back(cpu);
    pc.slots.push_back(l ? std::optional<double>(l->duration_ns / 1e3) : std::nullopt);
  }
  if (auto m = make_per_cpu_metric("us", true, "max", std::move(pc)))
    out.metrics["noise.longest_us"] = std::move(*m);
  else
    out.notes.emplace_back(
        "no complete entry/exit pair on any traced CPU: noise.longest_us omitted");
}

nlohmann::json cpu_details(const CpuTrace& c, int cpu, std::optional<double> window_s) {
  nlohmann::json causes = nlohmann::json::object();
  std::vector<std::string> all = noise_causes();
  all.emplace_back("interruptions");
  for (const auto& cause : all) {
    long n = cause_count(c, cause);
    causes[cause] = {{"count", n},
                     {"per_s", window_s ? nlohmann::json(n / *window_s) : nlohmann::json()}};
  }
  nlohmann::json longest;
  if (c.longest)
    longest = {{"cause", c.longest->cause},
               {"name", c.longest->name},
               {"us", c.longest->duration_ns / 1e3},
               {"at_s", c.longest->start_ns / 1e9}};
  return {{"cpu", cpu},
          {"causes", causes},
          {"events", name_counts(c.events)},
          {"workqueue_functions", name_counts(c.workqueue_functions)},
          {"irq_handlers", name_counts(c.irq_handlers)},
          {"softirq_actions", name_counts(c.softirq_actions)},
          {"vmstat_update_gap_ms", gap_stats(c)},
          {"longest", longest}};
}

}  // namespace

TraceNoise trace_noise(const TraceCounts& t, const std::vector<int>& cpus,
                       std::optional<double> window_s) {
  TraceNoise out;
  Window w = choose_window(t, window_s, out.notes);
  if (w.s) {
    for (const auto& cause : noise_causes()) add_rate_metric(out, t, cpus, cause, *w.s);
    add_rate_metric(out, t, cpus, "interruptions", *w.s);
  }
  add_gap_metric(out, t, cpus);
  add_gap_stat_metrics(out, t, cpus);
  add_longest_metric(out, t, cpus);
  if (t.counter_clock)
    out.notes.emplace_back("the trace clock is a counter, not seconds: no gaps or durations");
  if (t.lost_events)
    out.notes.emplace_back("trace ring buffer overflowed: noise counts are lower bounds");
  if (t.malformed > 0)
    out.notes.push_back(std::to_string(t.malformed) + " malformed trace lines skipped");
  nlohmann::json per_cpu = nlohmann::json::array();
  for (int cpu : cpus) per_cpu.push_back(cpu_details(cpu_or_empty(t, cpu), cpu, w.s));
  out.details = {{"window_s", w.s ? nlohmann::json(*w.s) : nlohmann::json()},
                 {"window_source", w.source ? nlohmann::json(w.source) : nlohmann::json()},
                 {"lost_events", t.lost_events},
                 {"malformed_lines", t.malformed},
                 {"exit_events", t.exit_events},
                 {"cpus", per_cpu}};
  return out;
}

}  // namespace isolab
