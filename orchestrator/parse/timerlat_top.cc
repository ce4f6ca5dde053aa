// `rtla timerlat top` and its auto-analysis (declared in parse/timerlat_top.h).
#include "parse/timerlat_top.h"

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"
#include "parse/text_util.h"

namespace isolab {

using parse_detail::split_ws;
using parse_detail::to_double;
using parse_detail::trim;

namespace {

Error line_error(std::size_t lineno, std::string_view line, const std::string& why) {
  return parse_detail::line_error("rtla timerlat top", lineno, line, why);
}

// The '|'-separated blocks of a line, trimmed.
std::vector<std::string_view> blocks(std::string_view line) {
  std::vector<std::string_view> out;
  for (std::size_t p = 0;;) {
    const std::size_t bar = line.find('|', p);
    out.push_back(trim(line.substr(p, bar == std::string_view::npos ? bar : bar - p)));
    if (bar == std::string_view::npos) return out;
    p = bar + 1;
  }
}

bool is_header(std::string_view line) {
  const auto b = blocks(line);
  const auto w = split_ws(b[0]);
  return b.size() >= 3 && w.size() == 2 && w[0] == "CPU" && w[1] == "COUNT";
}

// One CPU row into the table; false when the line is not a row ("CPU #COUNT | 4 | 4 ...").
bool read_row(std::string_view line, std::size_t lineno, std::size_t nblocks, RtlaHist& t) {
  const auto b = blocks(line);
  if (b.size() != nblocks) return false;
  auto head = split_ws(b[0]);
  if (head.size() == 1 && head[0].find('#') != std::string_view::npos) {  // "4#12322"
    const std::size_t h = head[0].find('#');
    head = {head[0].substr(0, h), head[0].substr(h)};
  }
  if (head.size() != 2 || head[1].empty() || head[1][0] != '#') return false;
  const auto cpu = to_double(head[0]);
  const auto count = to_double(head[1].substr(1));
  if (!cpu || !count || *cpu < 0 || *cpu > 8191)
    throw line_error(lineno, line, "CPU or COUNT is not a number");
  RtlaHistCpu c{.cpu = static_cast<int>(*cpu)};
  using Slot = std::optional<RtlaLatencyStats> RtlaHistCpu::*;
  const Slot slots[] = {&RtlaHistCpu::irq, &RtlaHistCpu::thread, &RtlaHistCpu::user};
  for (std::size_t k = 1; k < b.size() && k <= 3; ++k) {
    const auto v = split_ws(b[k]);
    if (v.size() != 4)
      throw line_error(lineno, line,
                       std::to_string(v.size()) + " values in block " + std::to_string(k) +
                           ", expected cur min avg max");
    RtlaLatencyStats s;
    s.count = static_cast<long long>(*count);
    std::optional<double> x[4];
    for (int i = 0; i < 4; ++i)
      if (!(x[i] = to_double(v[i]))) throw line_error(lineno, line, "a value is not a number");
    s.min_us = x[1], s.avg_us = x[2], s.max_us = x[3];
    if (s.count == 0) s.min_us = s.avg_us = s.max_us = std::nullopt;
    c.*slots[k - 1] = s;
  }
  for (const auto& seen : t.cpus)
    if (seen.cpu == c.cpu) throw line_error(lineno, line, "CPU " + std::string(head[0]) + " twice");
  t.cpus.push_back(c);
  return true;
}

// "Label: 27.49 us (65.52 %)", "IRQ interference 1.00 us (2.00 %)", "Thread latency: 41.96 us
// (100%)", "IRQ latency: 28.13 us": the label (letters and spaces), value, share.
struct LabelledValue {
  std::string label;
  double us = 0;
  std::optional<double> share_pct;
};

std::optional<LabelledValue> labelled_value(std::string_view line) {
  line = trim(line);
  std::size_t p = 0;
  while (p < line.size() && (std::isalpha(static_cast<unsigned char>(line[p])) || line[p] == ' '))
    ++p;
  LabelledValue v;
  v.label = std::string(trim(line.substr(0, p)));
  if (v.label.empty()) return std::nullopt;
  if (p < line.size() && line[p] == ':') ++p;
  auto w = split_ws(line.substr(p));
  if (w.size() < 2 || w[1] != "us") return std::nullopt;
  const auto us = to_double(w[0]);
  if (!us) return std::nullopt;
  v.us = *us;
  if (w.size() >= 3 && w[2].front() == '(') {
    std::string share(w[2].substr(1));
    if (!share.empty() && share.back() == ')') share.pop_back();
    if (!share.empty() && share.back() == '%') share.pop_back();
    v.share_pct = to_double(share);
  }
  return v;
}

// "objtool:49256 3.79 us" or "objtool:49256" -> task and pid (split at the last ':').
bool read_task(std::string_view line, TimerlatAutoAnalysis& a) {
  const auto w = split_ws(trim(line));
  if (w.empty()) return false;
  const std::size_t colon = w[0].rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const auto pid = to_double(w[0].substr(colon + 1));
  if (!pid) return false;
  a.blocking_task = std::string(w[0].substr(0, colon));
  a.blocking_pid = static_cast<long long>(*pid);
  return true;
}

// "Max timerlat IRQ latency from idle: 17.48 us in cpu 4".
void read_idle(std::string_view line, TimerlatAutoAnalysis& a) {
  const std::size_t colon = line.find(':');
  const auto w = split_ws(line.substr(colon + 1));
  if (w.size() == 5 && w[1] == "us" && w[2] == "in" && w[3] == "cpu") {
    a.idle_max_us = to_double(w[0]);
    if (auto c = to_double(w[4])) a.idle_cpu = static_cast<int>(*c);
  }
}

// The labels whose share is a part of the total (timerlat_aa.c).
bool is_part(const std::string& label) {
  static const char* const kParts[] = {
      "IRQ handler delay", "Timerlat IRQ duration", "Blocking thread",    "NMI interference",
      "IRQ interference",  "Softirq interference",  "Thread interference"};
  for (const char* p : kParts)
    if (label == p) return true;
  return false;
}

// One line of the analysis block.
void read_analysis_line(std::string_view raw, TimerlatAutoAnalysis& a, bool& after_blocking) {
  const std::string_view line = trim(raw);
  if (line.rfind("->", 0) == 0) {
    a.blocking_stack.emplace_back(trim(line.substr(2)));
    return;
  }
  if (line.rfind("Max timerlat IRQ latency from idle:", 0) == 0) return read_idle(line, a);
  if (auto v = labelled_value(line)) {
    after_blocking = v->label == "Blocking thread";
    if (v->share_pct && *v->share_pct == 100 && v->label.find("latency") != std::string::npos) {
      a.total_label = v->label;
      a.total_us = v->us;
    } else if (v->share_pct && is_part(v->label)) {
      a.parts.push_back({v->label, v->us, *v->share_pct});
    } else if (v->label == "IRQ latency") {
      a.irq_latency_us = v->us;
    }
    return;
  }
  if (line == "Blocking thread:") after_blocking = true;
  if (after_blocking && a.blocking_task.empty() && read_task(line, a)) after_blocking = false;
}

}  // namespace

RtlaTimerlatTop parse_rtla_timerlat_top(std::string_view raw) {
  const std::string text = strip_rtla_escapes(raw);
  const auto lines = text_lines(text);
  RtlaTimerlatTop r;
  std::size_t nblocks = 0;
  bool after_blocking = false;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const std::string_view line = trim(lines[n]);
    if (line.empty()) continue;
    if (!nblocks && line.find("Timer Latency") != std::string_view::npos && !r.duration_s)
      r.duration_s = parse_rtla_duration(trim(blocks(line)[0]));
    if (!nblocks && is_header(line)) {
      nblocks = blocks(line).size();
      continue;
    }
    if (line == "rtla timerlat hit stop tracing") {
      r.stopped = true;
      continue;
    }
    if (line.rfind("## CPU ", 0) == 0 && line.find("hit stop tracing") != std::string_view::npos) {
      r.analysis = TimerlatAutoAnalysis{};
      if (auto c = to_double(split_ws(line)[2])) r.analysis->cpu = static_cast<int>(*c);
      continue;
    }
    if (r.analysis) {
      read_analysis_line(line, *r.analysis, after_blocking);
      continue;
    }
    // A line of another shape ("Saving trace to ...", a title) is not a row and is skipped.
    if (nblocks) read_row(line, n + 1, nblocks, r.table);
  }
  if (!nblocks) throw Error("rtla timerlat top: no \"CPU COUNT\" header line: no table");
  if (r.table.cpus.empty()) throw Error("rtla timerlat top: no CPU row");
  r.table.duration_s = r.duration_s;
  return r;
}

std::vector<std::string> timerlat_analysis_notes(const RtlaTimerlatTop& top) {
  std::vector<std::string> out;
  auto fixed2 = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return std::string(b);
  };
  auto us = [&](double v) { return fixed2(v) + " us"; };
  if (top.stopped)
    out.push_back("rtla timerlat stopped tracing" +
                  (top.duration_s ? " after " + std::to_string(static_cast<long>(*top.duration_s)) +
                                        " s: the results cover that time only"
                                  : std::string(": the run ended early")));
  if (!top.analysis) return out;
  const TimerlatAutoAnalysis& a = *top.analysis;
  std::string total = "auto-analysis of CPU " + std::to_string(a.cpu) + ": " +
                      (a.total_label.empty() ? "latency" : a.total_label) +
                      (a.total_us ? " " + us(*a.total_us) : "");
  for (const auto& p : a.parts)
    total += "; " + p.label + " " + us(p.us) + " (" + fixed2(p.share_pct) + " %)";
  out.push_back(total);
  if (a.irq_latency_us)
    out.push_back("IRQ latency " + us(*a.irq_latency_us) +
                  " (contains the IRQ handler delay: not a part of the total)");
  if (!a.blocking_task.empty())
    out.push_back("blocking task " + sanitize_excerpt(a.blocking_task, 64) + ", pid " +
                  std::to_string(a.blocking_pid.value_or(-1)) +
                  (a.blocking_stack.empty()
                       ? ""
                       : ", innermost frame " + sanitize_excerpt(a.blocking_stack.front(), 80)));
  if (a.idle_max_us && a.idle_cpu)
    out.push_back("the largest IRQ latency from idle was " + us(*a.idle_max_us) + " on CPU " +
                  std::to_string(*a.idle_cpu) + " (not the stopping CPU's latency)");
  return out;
}

}  // namespace isolab
