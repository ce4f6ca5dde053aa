#include "parse/rtla.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <numeric>
#include <set>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"
#include "parse/text_util.h"
#include "parse/trace.h"
#include "parse/trace_text.h"

namespace isolab {

using parse_detail::line_error;
using parse_detail::quote;
using parse_detail::split_ws;
using parse_detail::to_double;
using parse_detail::trim;

namespace {

// Drops terminal control sequences: CSI "ESC [ params letter" and two-byte "ESC c" (rtla's
// colours and screen clears).
std::string strip_escapes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\x1b') {
      out += s[i];
      continue;
    }
    if (i + 1 < s.size() && s[i + 1] == '[') {
      i += 2;
      while (i < s.size() && !std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    } else {
      ++i;  // ESC c, ESC 7, ...
    }
  }
  return out;
}

// "D HH:MM:SS" after a label (rtla's get_duration()).
std::optional<double> parse_duration(std::string_view text) {
  auto w = split_ws(trim(text));
  if (w.size() != 2) return std::nullopt;
  auto days = trace_text::to_ll(w[0]);
  long long h = 0, m = 0, s = 0;
  std::string_view t = w[1];
  if (t.size() != 8 || t[2] != ':' || t[5] != ':') return std::nullopt;
  auto hh = trace_text::to_ll(t.substr(0, 2)), mm = trace_text::to_ll(t.substr(3, 2)),
       ss = trace_text::to_ll(t.substr(6, 2));
  if (!days || !hh || !mm || !ss) return std::nullopt;
  h = *hh, m = *mm, s = *ss;
  return static_cast<double>(((*days * 24 + h) * 60 + m) * 60 + s);
}

// ---- osnoise top ----

enum class OsCol {
  cpu,
  period,
  runtime,
  noise,
  avail,
  max_noise,
  max_single,
  hw,
  nmi,
  irq,
  sirq,
  thread
};

struct OsColName {
  std::string_view name;
  OsCol col;
};

// Longest names first, so "Max Noise" is not read as "Max" + "Noise".
constexpr OsColName kOsCols[] = {
    {"% CPU Aval", OsCol::avail},
    {"Max Noise", OsCol::max_noise},
    {"Max Single", OsCol::max_single},
    {"Softirq", OsCol::sirq},
    {"Runtime", OsCol::runtime},
    {"Period", OsCol::period},
    {"Thread", OsCol::thread},
    {"Noise", OsCol::noise},
    {"CPU", OsCol::cpu},
    {"NMI", OsCol::nmi},
    {"IRQ", OsCol::irq},
    {"HW", OsCol::hw},
};

bool word_at(std::string_view s, std::size_t i, std::string_view name) {
  if (s.substr(i, name.size()) != name) return false;
  std::size_t e = i + name.size();
  return e == s.size() || s[e] == ' ' || s[e] == '\t';
}

// nullopt when a header word is unknown (unknown carries it).
std::optional<std::vector<OsCol>> osnoise_header(std::string_view line, std::string& unknown) {
  std::vector<OsCol> cols;
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ' || line[i] == '\t') {
      ++i;
      continue;
    }
    const OsColName* hit = nullptr;
    for (const auto& c : kOsCols)
      if (word_at(line, i, c.name)) {
        hit = &c;
        break;
      }
    if (!hit) {
      std::size_t e = line.find_first_of(" \t", i);
      unknown = std::string(line.substr(i, e == std::string_view::npos ? e : e - i));
      return std::nullopt;
    }
    cols.push_back(hit->col);
    i += hit->name.size();
  }
  return cols;
}

void set_os_field(RtlaOsnoiseCpu& c, OsCol col, std::string_view f, double scale, bool& ok) {
  auto num = [&](double& out) {
    auto v = to_double(f);
    ok = ok && v && *v >= 0;
    if (v) out = *v * scale;
  };
  auto count = [&](long long& out) {
    auto v = trace_text::to_ll(f);
    ok = ok && v && *v >= 0;
    if (v) out = *v;
  };
  switch (col) {
    case OsCol::cpu: {
      auto v = trace_text::to_ll(f);
      ok = ok && v && *v >= 0 && *v <= 8191;
      if (v) c.cpu = static_cast<int>(*v);
      break;
    }
    case OsCol::period:
      if (!f.empty() && f.front() == '#') f.remove_prefix(1);
      count(c.periods);
      break;
    case OsCol::runtime:
      num(c.runtime_us);
      break;
    case OsCol::noise:
      num(c.noise_us);
      break;
    case OsCol::avail: {
      auto v = to_double(f);
      ok = ok && v && *v >= 0 && *v <= 100;
      if (v) c.cpu_available_pct = *v;
      break;
    }
    case OsCol::max_noise:
      num(c.max_noise_us);
      break;
    case OsCol::max_single:
      num(c.max_single_us);
      break;
    case OsCol::hw:
      count(c.hw);
      break;
    case OsCol::nmi:
      count(c.nmi);
      break;
    case OsCol::irq:
      count(c.irq);
      break;
    case OsCol::sirq:
      count(c.softirq);
      break;
    case OsCol::thread:
      count(c.thread);
      break;
  }
}

}  // namespace

RtlaOsnoiseTop parse_rtla_osnoise_top(std::string_view raw) {
  const std::string text = strip_escapes(raw);
  const auto lines = text_lines(text);
  RtlaOsnoiseTop r;
  std::optional<std::vector<OsCol>> cols;
  double scale = 1;
  std::set<int> seen;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = trim(lines[n]);
    if (line.empty() || line == "Operating System Noise") continue;
    if (line.substr(0, 9) == "duration:") {
      std::string_view rest = line.substr(9);
      std::size_t bar = rest.find('|');
      r.duration_s = parse_duration(rest.substr(0, bar));
      if (bar != std::string_view::npos && rest.find("time is in ns") != std::string_view::npos)
        scale = 0.001;
      continue;
    }
    if (line.substr(0, 4) == "CPU ") {
      std::string unknown;
      cols = osnoise_header(line, unknown);
      if (!cols)
        throw line_error("rtla osnoise top", n + 1, lines[n],
                         "unknown column " + quote(unknown, 40));
      if (std::find(cols->begin(), cols->end(), OsCol::cpu) == cols->end())
        throw line_error("rtla osnoise top", n + 1, lines[n], "no CPU column");
      r.task_noise_columns = std::find(cols->begin(), cols->end(), OsCol::irq) != cols->end();
      continue;
    }
    if (!cols) continue;  // text before the header (rtla's own messages)
    auto f = split_ws(line);
    if (f.size() != cols->size())
      throw line_error(
          "rtla osnoise top", n + 1, lines[n],
          std::to_string(f.size()) + " fields, the header has " + std::to_string(cols->size()));
    RtlaOsnoiseCpu c;
    bool ok = true;
    for (std::size_t i = 0; i < f.size(); ++i) set_os_field(c, (*cols)[i], f[i], scale, ok);
    if (!ok) throw line_error("rtla osnoise top", n + 1, lines[n], "a field is not a number");
    if (!seen.insert(c.cpu).second)
      throw line_error("rtla osnoise top", n + 1, lines[n],
                       "CPU " + std::to_string(c.cpu) + " appears twice");
    r.cpus.push_back(c);
  }
  if (!cols) throw Error("rtla osnoise top: no header line (\"CPU Period ...\"): no summary");
  if (r.cpus.empty()) throw Error("rtla osnoise top: a header but no CPU row: no summary");
  return r;
}

namespace {

// ---- timerlat hist ----

struct HistColumn {
  char kind = 'I';  // 'I' IRQ, 'T' Thr, 'U' Usr (timerlat hist); 'N' CPU (osnoise hist)
  int cpu = 0;
};

// The column names of one tool's histogram: "IRQ-002" -> {'I', 2}.
using ColumnKinds = std::vector<std::pair<std::string_view, char>>;
const ColumnKinds kTimerlatColumns = {{"IRQ-", 'I'}, {"Thr-", 'T'}, {"Usr-", 'U'}};
const ColumnKinds kOsnoiseColumns = {{"CPU-", 'N'}};

std::optional<HistColumn> hist_column(std::string_view name, const ColumnKinds& kinds) {
  for (const auto& [prefix, k] : kinds)
    if (name.substr(0, 4) == prefix) {
      auto cpu = trace_text::to_ll(name.substr(4));
      if (!cpu || *cpu < 0 || *cpu > 8191) return std::nullopt;
      return HistColumn{k, static_cast<int>(*cpu)};
    }
  return std::nullopt;
}

// "-" or a number; nullopt for "-", Error text in bad for anything else.
std::optional<long double> cell(std::string_view f, bool& bad) {
  if (f == "-") return std::nullopt;
  long double v = 0;
  auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
  if (ec != std::errc() || p != f.data() + f.size() || v < 0) bad = true;
  return v;
}

RtlaLatencyStats& stats_of(RtlaHistCpu& c, char kind) {
  auto& slot = kind == 'I' ? c.irq : kind == 'T' ? c.thread : kind == 'N' ? c.noise : c.user;
  if (!slot) slot = RtlaLatencyStats{};
  return *slot;
}

// Summary rows: which field of the stats each label fills.
enum class SumRow { over, count, min, avg, max };

std::optional<SumRow> summary_row(std::string_view label) {
  static constexpr std::pair<std::string_view, SumRow> rows[] = {{"over:", SumRow::over},
                                                                 {"count:", SumRow::count},
                                                                 {"min:", SumRow::min},
                                                                 {"avg:", SumRow::avg},
                                                                 {"max:", SumRow::max}};
  for (const auto& [l, r] : rows)
    if (label == l) return r;
  return std::nullopt;
}

void apply_summary(RtlaLatencyStats& s, SumRow row, std::optional<long double> v, double unit_us) {
  auto us = [&]() -> std::optional<double> {
    if (!v) return std::nullopt;
    return static_cast<double>(*v) * unit_us;
  };
  switch (row) {
    case SumRow::over:
      s.over = v ? static_cast<long long>(*v) : 0;
      break;
    case SumRow::count:
      s.count = v ? static_cast<long long>(*v) : 0;
      break;
    case SumRow::min:
      s.min_us = us();
      break;
    case SumRow::avg:
      s.avg_us = us();
      break;
    case SumRow::max:
      s.max_us = us();
      break;
  }
}

// A column without samples has no statistics, whatever rtla printed (6.1 prints min 2^64-1).
void drop_empty(std::optional<RtlaLatencyStats>& s) {
  if (s && s->count == 0) s->min_us = s->avg_us = s->max_us = std::nullopt;
}

// The histogram of `tool` ("rtla timerlat hist" or "rtla osnoise hist") with its column kinds.
RtlaHist parse_rtla_hist(std::string_view raw, const char* tool, const ColumnKinds& kinds) {
  const std::string text = strip_escapes(raw);
  const auto lines = text_lines(text);
  RtlaHist r;
  std::vector<HistColumn> cols;
  std::vector<std::string> names;
  bool header = false, have_count = false;
  std::map<int, std::size_t> cpu_index;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = trim(lines[n]);
    if (line.empty()) continue;
    if (line.front() == '#') {
      if (line.find("Time unit is") != std::string_view::npos)
        r.unit_us = line.find("(ns)") != std::string_view::npos ? 0.001 : 1;
      std::size_t d = line.find("Duration:");
      if (d != std::string_view::npos) r.duration_s = parse_duration(line.substr(d + 9));
      continue;
    }
    auto f = split_ws(line);
    if (f[0] == "Index") {
      header = true;
      for (std::size_t i = 1; i < f.size(); ++i) {
        auto c = hist_column(f[i], kinds);
        if (!c) throw line_error(tool, n + 1, lines[n], "unknown column " + quote(f[i], 40));
        cols.push_back(*c);
        names.emplace_back(f[i]);
        if (!cpu_index.count(c->cpu)) {
          cpu_index[c->cpu] = r.cpus.size();
          r.cpus.push_back(RtlaHistCpu{.cpu = c->cpu});
        }
        stats_of(r.cpus[cpu_index[c->cpu]], c->kind);
      }
      continue;
    }
    if (!header) continue;
    if (f[0] == "ALL:") break;  // newer rtla's all-CPU block: not per CPU
    if (f.size() != cols.size() + 1)
      throw line_error(tool, n + 1, lines[n],
                       std::to_string(f.size() - 1) + " values, the header has " +
                           std::to_string(cols.size()) + " columns");
    bool bad = false;
    if (auto row = summary_row(f[0])) {
      for (std::size_t i = 0; i < cols.size(); ++i)
        apply_summary(stats_of(r.cpus[cpu_index[cols[i].cpu]], cols[i].kind), *row,
                      cell(f[i + 1], bad), r.unit_us);
      have_count = have_count || *row == SumRow::count;
    } else {
      auto bucket = trace_text::to_ll(f[0]);
      if (!bucket) throw line_error(tool, n + 1, lines[n], "not a bucket row");
      for (std::size_t i = 0; i < cols.size(); ++i) {
        auto v = cell(f[i + 1], bad);
        if (v && *v > 0) r.buckets[names[i]][*bucket] = static_cast<long long>(*v);
      }
    }
    if (bad) throw line_error(tool, n + 1, lines[n], "a value is not a number");
  }
  if (!header) throw Error(std::string(tool) + ": no \"Index\" header line: no histogram");
  if (!have_count) throw Error(std::string(tool) + ": no \"count:\" row: the summary is missing");
  for (auto& c : r.cpus)
    drop_empty(c.irq), drop_empty(c.thread), drop_empty(c.user), drop_empty(c.noise);
  return r;
}

}  // namespace

RtlaHist parse_rtla_timerlat_hist(std::string_view raw) {
  return parse_rtla_hist(raw, "rtla timerlat hist", kTimerlatColumns);
}

RtlaHist parse_rtla_osnoise_hist(std::string_view raw) {
  return parse_rtla_hist(raw, "rtla osnoise hist", kOsnoiseColumns);
}

std::string strip_rtla_escapes(std::string_view text) { return strip_escapes(text); }
std::optional<double> parse_rtla_duration(std::string_view text) { return parse_duration(text); }

bool is_rtla_hist(std::string_view raw) {
  const std::string text = strip_escapes(raw);  // the lines below point into it
  for (std::string_view line : text_lines(text)) {
    line = trim(line);
    if (line.substr(0, 5) == "Index" &&
        (line.size() == 5 || std::isspace(static_cast<unsigned char>(line[5]))))
      return true;
  }
  return false;
}

// ---- metrics ----

namespace {

void add_per_cpu(Metrics& m, const std::string& name, const std::string& unit, bool lower,
                 const std::string& aggregate, MetricPerCpu pc) {
  if (auto metric = make_per_cpu_metric(unit, lower, aggregate, std::move(pc)))
    m[name] = std::move(*metric);
}

struct OsValue {
  const char* name;
  const char* unit;
  bool lower;
  const char* aggregate;
  double (*get)(const RtlaOsnoiseCpu&);
};

constexpr OsValue kOsValues[] = {
    {"osnoise.noise_us", "us", true, "mean", [](const RtlaOsnoiseCpu& c) { return c.noise_us; }},
    {"osnoise.max_noise_us", "us", true, "max",
     [](const RtlaOsnoiseCpu& c) { return c.max_noise_us; }},
    {"osnoise.max_single_us", "us", true, "max",
     [](const RtlaOsnoiseCpu& c) { return c.max_single_us; }},
    {"osnoise.cpu_available_pct", "%", false, "mean",
     [](const RtlaOsnoiseCpu& c) { return c.cpu_available_pct; }},
};

struct OsCount {
  const char* kind;
  long long (*get)(const RtlaOsnoiseCpu&);
  bool task_noise;  // a column rtla hwnoise does not print
};

constexpr OsCount kOsCounts[] = {
    {"hw", [](const RtlaOsnoiseCpu& c) { return c.hw; }, false},
    {"nmi", [](const RtlaOsnoiseCpu& c) { return c.nmi; }, false},
    {"irq", [](const RtlaOsnoiseCpu& c) { return c.irq; }, true},
    {"softirq", [](const RtlaOsnoiseCpu& c) { return c.softirq; }, true},
    {"thread", [](const RtlaOsnoiseCpu& c) { return c.thread; }, true},
};

}  // namespace

namespace {

// One summary line's nine numbers into c (summing); false when one is not a number.
bool add_summary(RtlaOsnoiseCpu& c, std::string_view body) {
  const auto w = parse_detail::split_ws(body);
  std::vector<double> v;
  for (std::string_view x : w)
    if (auto d = parse_detail::to_double(x)) v.push_back(*d);
  if (v.size() != 9) return false;
  ++c.periods;
  c.runtime_us += v[0];
  c.noise_us += v[1];
  c.max_noise_us = std::max(c.max_noise_us, v[1]);
  c.max_single_us = std::max(c.max_single_us, v[3]);
  for (auto [k, field] : {std::pair{4, &RtlaOsnoiseCpu::hw},
                          {5, &RtlaOsnoiseCpu::nmi},
                          {6, &RtlaOsnoiseCpu::irq},
                          {7, &RtlaOsnoiseCpu::softirq},
                          {8, &RtlaOsnoiseCpu::thread}})
    c.*field += static_cast<long long>(v[static_cast<std::size_t>(k)]);
  return true;
}

}  // namespace

RtlaOsnoiseTop osnoise_top_of_trace(std::string_view trace_text) {
  RtlaOsnoiseTop top;
  std::map<int, std::size_t> index;
  for (std::string_view line : text_lines(trace_text)) {
    const auto l = parse_trace_line(line);
    if (!l || l->event != kOsnoiseSummary) continue;
    auto [it, fresh] = index.try_emplace(l->cpu, top.cpus.size());
    if (fresh) top.cpus.push_back(RtlaOsnoiseCpu{.cpu = l->cpu});
    add_summary(top.cpus[it->second], l->body);
  }
  for (auto& c : top.cpus)
    if (c.runtime_us > 0) c.cpu_available_pct = 100.0 * (c.runtime_us - c.noise_us) / c.runtime_us;
  return top;
}

Metrics rtla_osnoise_metrics(const RtlaOsnoiseTop& top) {
  Metrics m;
  for (const OsValue& v : kOsValues) {
    MetricPerCpu pc;
    for (const auto& c : top.cpus) pc.cpus.push_back(c.cpu), pc.slots.emplace_back(v.get(c));
    add_per_cpu(m, v.name, v.unit, v.lower, v.aggregate, std::move(pc));
  }
  for (const OsCount& k : kOsCounts) {
    if (k.task_noise && !top.task_noise_columns) continue;
    MetricPerCpu pc;
    pc.kind = "count";
    for (const auto& c : top.cpus) {
      if (!(c.runtime_us > 0)) continue;  // never sampled: no rate
      const double sampled_s = c.runtime_us / 1e6;
      pc.cpus.push_back(c.cpu);
      pc.counts.push_back(k.get(c));
      pc.windows_s.push_back(sampled_s);
      pc.slots.emplace_back(static_cast<double>(k.get(c)) / sampled_s);
    }
    add_per_cpu(m, std::string("osnoise.") + k.kind + "_per_s", "1/s", true, "mean", std::move(pc));
  }
  return m;
}

Metrics rtla_timerlat_metrics(const RtlaHist& h, std::vector<std::string>* notes) {
  Metrics m;
  using Slot = std::optional<RtlaLatencyStats> RtlaHistCpu::*;
  static const std::pair<const char*, Slot> kinds[] = {
      {"irq", &RtlaHistCpu::irq}, {"thread", &RtlaHistCpu::thread}, {"user", &RtlaHistCpu::user}};
  using Stat = std::optional<double> RtlaLatencyStats::*;
  static const std::tuple<const char*, Stat, const char*> stats[] = {
      {"min", &RtlaLatencyStats::min_us, "min"},
      {"avg", &RtlaLatencyStats::avg_us, "mean"},
      {"max", &RtlaLatencyStats::max_us, "max"}};
  for (const auto& [kind, slot] : kinds) {
    bool printed = std::any_of(h.cpus.begin(), h.cpus.end(),
                               [s = slot](const RtlaHistCpu& c) { return (c.*s).has_value(); });
    if (!printed) continue;
    for (const auto& [stat, field, aggregate] : stats) {
      MetricPerCpu pc;
      for (const auto& c : h.cpus) {
        pc.cpus.push_back(c.cpu);
        pc.slots.push_back(c.*slot ? (*(c.*slot)).*field : std::nullopt);
      }
      std::string name = std::string("timerlat.") + kind + "_" + stat + "_us";
      const std::size_t before = m.size();
      add_per_cpu(m, name, "us", true, aggregate, std::move(pc));
      if (m.size() == before && notes) notes->push_back(name + ": no CPU had samples");
    }
  }
  return m;
}

Metrics rtla_osnoise_hist_metrics(const RtlaHist& h, std::vector<std::string>* notes) {
  Metrics m;
  using Get = std::optional<double> (*)(const RtlaLatencyStats&);
  struct HistValue {
    const char* name;
    const char* unit;
    const char* kind;
    const char* aggregate;
    Get get;
  };
  static const HistValue kValues[] = {
      {"osnoise.hist_samples", "count", "count", "sum",
       [](const RtlaLatencyStats& s) -> std::optional<double> {
         return static_cast<double>(s.count);
       }},
      {"osnoise.hist_over", "count", "count", "sum",
       [](const RtlaLatencyStats& s) -> std::optional<double> {
         return static_cast<double>(s.over);
       }},
      {"osnoise.hist_max_bucket_us", "us", "", "max",
       [](const RtlaLatencyStats& s) { return s.max_us; }},
  };
  for (const HistValue& v : kValues) {
    MetricPerCpu pc;
    pc.kind = v.kind;
    for (const auto& c : h.cpus) {
      if (!c.noise) continue;
      pc.cpus.push_back(c.cpu);
      pc.slots.push_back(v.get(*c.noise));
      if (pc.kind == "count") pc.counts.push_back(static_cast<long long>(*pc.slots.back()));
    }
    add_per_cpu(m, v.name, v.unit, true, v.aggregate, std::move(pc));
  }
  long long width = 0;
  std::size_t rows = 0;
  std::set<long long> indices;
  for (const auto& [column, buckets] : h.buckets)
    for (const auto& [index, n] : buckets) indices.insert(index);
  for (long long i : indices) width = std::gcd(width, i), rows += 1;
  if (notes && rows >= 2 && width > 0)
    notes->push_back("osnoise hist: bucket width " + std::to_string(width) +
                     (h.unit_us == 1 ? " us" : " ns") +
                     " (the greatest common divisor of the Index values)");
  return m;
}

// ---- failures ----

namespace {

bool has(std::string_view text, std::string_view what) {
  return text.find(what) != std::string_view::npos;
}

bool lists_tracer(std::string_view available, std::string_view tracer) {
  for (auto line : text_lines(available))
    for (auto w : split_ws(line))
      if (w == tracer) return true;
  return false;
}

std::string first_line_with(std::string_view text, std::string_view what) {
  for (auto line : text_lines(text))
    if (has(line, what)) return quote(trim(line), 120);
  return {};
}

}  // namespace

RtlaRunCheck check_rtla_run(std::string_view tracer, std::string_view out, std::string_view err,
                            int rc, std::optional<std::string_view> available_tracers) {
  RtlaRunCheck c;
  auto fail = [&](std::string kind, std::string reason) {
    c.ok = false;
    c.kind = std::move(kind);
    c.reason = std::move(reason);
    return c;
  };
  const std::string both = std::string(out) + "\n" + std::string(err);
  const std::string not_found = "Tracer " + std::string(tracer) + " not found!";
  if (available_tracers && !lists_tracer(*available_tracers, tracer))
    return fail("tracer unavailable",
                "the guest's available_tracers lacks " + std::string(tracer) + " (" +
                    quote(trim(*available_tracers), 120) +
                    "): the kernel was built without CONFIG_" +
                    (tracer == "timerlat" ? "TIMERLAT_TRACER" : "OSNOISE_TRACER"));
  if (has(both, not_found))
    return fail("tracer unavailable",
                "rtla: " + quote(not_found) + ": a kernel configuration failure (CONFIG_" +
                    (tracer == "timerlat" ? "TIMERLAT_TRACER" : "OSNOISE_TRACER") +
                    ", tracefs), not a measurement of no noise");
  for (std::string_view msg : {"Failed to set runtime and/or period", "Could not apply config"})
    if (has(both, msg))
      return fail("tool configuration failed", "rtla could not configure the " +
                                                   std::string(tracer) +
                                                   " tracer: " + first_line_with(both, msg));
  if (rc >= 128 || has(both, "Floating point exception"))
    return fail("crashed", "rtla was killed by signal " + std::to_string(rc >= 128 ? rc - 128 : 8) +
                               " (exit status " + std::to_string(rc) +
                               "); stderr: " + quote(trim(err), 200));
  if (rc != 0)
    return fail("exited non-zero",
                "rtla exited " + std::to_string(rc) + "; stderr: " + quote(trim(err), 200));
  if (std::all_of(out.begin(), out.end(),
                  [](char ch) { return std::isspace(static_cast<unsigned char>(ch)); }))
    return fail("no output",
                "rtla exited 0 but printed no summary; stderr: " + quote(trim(err), 200));
  return c;
}

}  // namespace isolab
