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

namespace isolab {

namespace {

constexpr std::size_t kMaxNameBytes = 64;
constexpr std::size_t kMaxOpenPerKey = 16;
constexpr int kMaxCpu = 8191;
constexpr std::string_view kStackHeader = "<stack trace>";

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && (is_space(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<long long> to_ll(std::string_view s) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

bool is_ident(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameBytes) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Printable ASCII, at most kMaxNameBytes: names from the guest end up in result.json.
std::string clean_name(std::string_view s) {
  std::string out(s.substr(0, kMaxNameBytes));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  return out;
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
  st.flags = trim(head.substr(0, begin));
  if (st.flags.size() > 16 ||
      std::any_of(st.flags.begin(), st.flags.end(), [](char c) { return is_space(c); }))
    return std::nullopt;
  return st;
}

// "<task>-<pid> [(<tgid>) ]" before the "[cpu]" at i.
bool parse_task(std::string_view pre, TraceLine& out) {
  pre = trim(pre);
  if (!pre.empty() && pre.back() == ')') {
    std::size_t open = pre.rfind('(');
    if (open == std::string_view::npos) return false;
    pre = trim(pre.substr(0, open));
  }
  std::size_t dash = pre.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return false;
  std::string_view pid = pre.substr(dash + 1);
  if (pid.empty() || pid.size() > 10 || !std::all_of(pid.begin(), pid.end(), is_digit))
    return false;
  out.pid = static_cast<long>(*to_ll(pid));
  out.task = trim(pre.substr(0, dash));
  return !out.task.empty();
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
  auto stamp = parse_stamp(trim(rest.substr(0, colon)));
  if (!stamp) return std::nullopt;
  t.flags = stamp->flags;
  t.ts_ns = stamp->ns;
  std::string_view tail = rest.substr(colon + 2);
  if (trim(tail) == kStackHeader) {
    t.event = kStackHeader;
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
  return at == std::string_view::npos ? std::string() : clean_name(trim(body.substr(at + 5)));
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
  std::set<int> headers;
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

void record(State& s, const TraceLine& l) {
  ++s.t.lines;
  CpuTrace& c = s.t.per_cpu[l.cpu];
  ++c.events[std::string(l.event)];
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

// "# entries-in-buffer/entries-written: 7542/7542   #P:8" and our "# cpu N".
void on_comment(State& s, std::string_view line) {
  if (line.substr(0, 6) == "# cpu ") {
    auto n = to_ll(trim(line.substr(6)));
    if (n && *n >= 0 && *n <= kMaxCpu && s.headers.insert(static_cast<int>(*n)).second)
      s.t.traced_cpus.push_back(static_cast<int>(*n));
    return;
  }
  std::size_t k = line.find("entries-written: ");
  if (k == std::string_view::npos) return;
  std::string_view rest = line.substr(k + 17);
  rest = rest.substr(0, std::min(rest.find(' '), rest.size()));
  std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return;
  auto a = to_ll(rest.substr(0, slash)), b = to_ll(rest.substr(slash + 1));
  if (a && b && *a < *b) s.t.lost_events = true;
}

// "CPU:5 [LOST 123 EVENTS]" (kernel/trace/trace.c print_trace_line()).
bool is_lost_line(std::string_view line) {
  return line.substr(0, 4) == "CPU:" && line.find(" [LOST ") != std::string_view::npos;
}

// " => rmqueue_bulk+0x1a/0x40" (kernel/trace/trace_output.c trace_stack_print()): the function
// name, "" when the line is no frame.
std::string_view stack_frame(std::string_view line) {
  if (line.substr(0, 4) != " => ") return {};
  std::string_view f = trim(line.substr(4));
  return f.substr(0, std::min(f.find('+'), f.size()));
}

struct CauseEvents {
  std::string_view cause;
  std::vector<std::string_view> events;
};

const std::vector<CauseEvents>& cause_events() {
  static const std::vector<CauseEvents> t = {
      {"local_timer", {"local_timer_entry"}},
      {"ipi_reschedule", {"reschedule_entry"}},
      {"ipi_call_function", {"call_function_entry", "call_function_single_entry"}},
      {"irq", {"irq_handler_entry"}},
      {"softirq", {"softirq_entry"}},
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
      on_comment(s, line);
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
    return n;
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
  all.push_back("interruptions");
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

namespace isolab {

namespace {

enum class VmstatEv { run_end, run_start, queue };  // same-instant order: end, start, queue

struct TimedEv {
  int64_t ns;
  VmstatEv ev;
  int cpu;
};

void for_each_line(std::string_view text, const std::function<void(const TraceLine&)>& f) {
  for (std::string_view line : parse_detail::split_lines(text)) {
    if (line.empty() || line[0] == '#') continue;
    if (auto l = parse_trace_line(line); l && l->ts_ns) f(*l);
  }
}

}  // namespace

std::map<int, VmstatQueueing> vmstat_queueing(std::string_view queue_text,
                                              std::string_view run_text) {
  std::vector<TimedEv> evs;
  for_each_line(queue_text, [&](const TraceLine& l) {
    if (l.event != "workqueue_queue_work") return;
    WorkqueueFields w = parse_workqueue_fields(l.body);
    if (w.function != "vmstat_update") return;
    int target = w.cpu ? *w.cpu : w.req_cpu ? *w.req_cpu : l.cpu;
    if (target >= 0) evs.push_back({*l.ts_ns, VmstatEv::queue, target});
  });
  for_each_line(run_text, [&](const TraceLine& l) {
    const bool start = l.event == "workqueue_execute_start";
    if (!start && l.event != "workqueue_execute_end") return;
    if (parse_workqueue_fields(l.body).function != "vmstat_update") return;
    evs.push_back({*l.ts_ns, start ? VmstatEv::run_start : VmstatEv::run_end, l.cpu});
  });
  std::stable_sort(evs.begin(), evs.end(), [](const TimedEv& a, const TimedEv& b) {
    return std::tie(a.ns, a.ev) < std::tie(b.ns, b.ev);
  });
  struct State {
    bool pending = false, running = false;
  };
  std::map<int, State> st;
  std::map<int, VmstatQueueing> out;
  for (const TimedEv& e : evs) {
    State& s = st[e.cpu];
    VmstatQueueing& q = out[e.cpu];
    switch (e.ev) {
      case VmstatEv::queue:
        ++q.queued;
        if (s.pending) ++q.while_pending;
        if (s.running) ++q.while_running;
        s.pending = true;
        break;
      case VmstatEv::run_start:
        s.pending = false;
        s.running = true;
        break;
      case VmstatEv::run_end:
        s.running = false;
        break;
    }
  }
  return out;
}

}  // namespace isolab

namespace isolab {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Frames of the lock and tracing machinery, skipped before classifying (prefixes).
bool is_machinery_frame(std::string_view f) {
  static constexpr std::string_view kPrefixes[] = {"queued_spin_lock_slowpath",
                                                   "native_queued_spin_lock_slowpath",
                                                   "__pv_queued_spin_lock_slowpath",
                                                   "_raw_spin_lock",
                                                   "do_raw_spin_lock",
                                                   "rt_spin_lock",
                                                   "rtlock_",
                                                   "rt_mutex",
                                                   "__rt_mutex",
                                                   "trace_",
                                                   "__trace",
                                                   "ftrace",
                                                   "event_trigger",
                                                   "stack_trace_",
                                                   "__bpf_trace",
                                                   "perf_trace",
                                                   "__traceiter"};
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](std::string_view p) { return starts_with(f, p); });
}

// See classify_lock_stack() in trace.h for where each name comes from.
const std::map<std::string_view, LockClass>& lock_takers() {
  static const std::map<std::string_view, LockClass> m = [] {
    std::map<std::string_view, LockClass> t;
    for (std::string_view f : {"rmqueue_bulk",
                               "rmqueue_buddy",
                               "free_pcppages_bulk",
                               "free_one_page",
                               "__free_pages_ok",
                               "split_free_page",
                               "reserve_highatomic_pageblock",
                               "unreserve_highatomic_pageblock",
                               "mark_free_pages",
                               "__setup_per_zone_wmarks",
                               "take_page_off_buddy",
                               "put_page_back_buddy",
                               "alloc_contig_pages",
                               "__offline_isolated_pages",
                               "__show_free_areas",
                               "set_migratetype_isolate",
                               "unset_migratetype_isolate",
                               "page_reporting_cycle",
                               "isolate_freepages_block",
                               "compact_lock_irqsave",
                               "__rmqueue_pcplist",
                               "get_page_from_freelist",
                               "free_unref_page",
                               "free_unref_page_list"})
      t[f] = LockClass::zone;
    for (std::string_view f :
         {"drain_zone_pages", "drain_pages_zone", "drain_pages", "drain_local_pages",
          "__drain_all_pages", "refresh_cpu_vm_stats", "vmstat_update"})
      t[f] = LockClass::pcp;
    return t;
  }();
  return m;
}

// A contention_begin seen, waiting for its stack and its end.
struct Contention {
  std::string addr;
  int64_t begin_ns = 0;
  std::optional<LockClass> cls;
  std::optional<int64_t> wait_ns;
};

struct LockState {
  std::vector<std::pair<int, Contention>> all;   // (cpu, contention) in input order
  std::map<int, std::vector<std::size_t>> open;  // per CPU: indexes into all, not yet ended
  std::optional<std::size_t> stack_of;           // the begin the frames being read belong to
  std::vector<std::string> frames;
};

// The hashed address: the first word of the body ("(____ptrval____)" early in boot).
std::string lock_addr(std::string_view body) {
  body = trim(body);
  return clean_name(body.substr(0, std::min(body.find(' '), body.size())));
}

void close_stack(LockState& s) {
  if (s.stack_of && !s.frames.empty()) {
    std::vector<std::string_view> v(s.frames.begin(), s.frames.end());
    s.all[*s.stack_of].second.cls = classify_lock_stack(v);
  }
  s.stack_of.reset();
  s.frames.clear();
}

void on_lock_line(LockState& s, const TraceLine& l) {
  if (!l.ts_ns) return;
  if (l.event == "contention_begin") {
    auto& open = s.open[l.cpu];
    if (open.size() >= kMaxOpenPerKey) open.erase(open.begin());
    open.push_back(s.all.size());
    s.all.push_back({l.cpu, {lock_addr(l.body), *l.ts_ns, std::nullopt, std::nullopt}});
  } else if (l.event == kStackHeader) {
    auto it = s.open.find(l.cpu);
    if (it != s.open.end() && !it->second.empty() && !s.all[it->second.back()].second.cls)
      s.stack_of = it->second.back();
  } else if (l.event == "contention_end") {
    auto it = s.open.find(l.cpu);
    if (it == s.open.end()) return;
    const std::string addr = lock_addr(l.body);
    auto& open = it->second;
    for (auto k = open.rbegin(); k != open.rend(); ++k) {
      Contention& c = s.all[*k].second;
      if (c.addr != addr) continue;
      if (*l.ts_ns >= c.begin_ns) c.wait_ns = *l.ts_ns - c.begin_ns;
      open.erase(std::next(k).base());
      break;
    }
  }
}

void add_wait(LockWaits& w, const Contention& c) {
  ++w.count;
  if (!c.wait_ns) return;
  ++w.ended;
  w.wait_ns += *c.wait_ns;
  w.max_wait_ns = std::max(w.max_wait_ns, *c.wait_ns);
}

}  // namespace

LockClass classify_lock_stack(const std::vector<std::string_view>& frames) {
  for (std::string_view f : frames) {
    f = f.substr(0, std::min(f.find('+'), f.size()));
    if (f.empty() || is_machinery_frame(f)) continue;
    auto it = lock_takers().find(f);
    return it == lock_takers().end() ? LockClass::other : it->second;
  }
  return LockClass::other;
}

LockContention lock_contention(std::string_view text) {
  LockContention out;
  LockState s;
  State headers;
  for (std::string_view line : parse_detail::split_lines(text)) {
    if (line.empty()) continue;
    std::string_view frame = stack_frame(line);
    if (!frame.empty()) {
      if (s.stack_of && s.frames.size() < 32) s.frames.push_back(clean_name(frame));
      continue;
    }
    close_stack(s);
    if (line.size() > kMaxTraceLineBytes) {
      ++out.malformed;
    } else if (line[0] == '#') {
      on_comment(headers, line);  // "# cpu N" and the overflow check of parse_trace()
    } else if (is_lost_line(line)) {
      out.lost_events = true;
    } else if (auto l = parse_trace_line(line)) {
      on_lock_line(s, *l);
    } else {
      ++out.malformed;
    }
  }
  close_stack(s);
  out.lost_events = out.lost_events || headers.t.lost_events;
  out.cpus = headers.t.traced_cpus;
  for (const auto& [cpu, c] : s.all) {
    CpuLockContention& pc = out.per_cpu[cpu];
    if (!c.cls) {
      ++pc.no_stack;
      continue;
    }
    add_wait(*c.cls == LockClass::zone ? pc.zone : *c.cls == LockClass::pcp ? pc.pcp : pc.other, c);
  }
  if (out.cpus.empty())
    for (const auto& [cpu, c] : out.per_cpu) out.cpus.push_back(cpu);
  return out;
}

}  // namespace isolab
