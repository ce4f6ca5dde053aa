#include "parse/latency_trace.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <regex>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"
#include "parse/text_util.h"

namespace isolab {

using namespace parse_detail;
using nlohmann::json;

double parse_max_latency_us(std::string_view text) {
  std::string_view t = text;  // the file ends with "\n"; parse_detail::trim keeps it
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  std::optional<long> v = to_long(t);
  if (!v || *v < 0 || *v >= 1'000'000'000'000L)
    throw Error("tracing_max_latency: not a latency in µs: " + quote(text));
  return static_cast<double>(*v);
}

namespace {

bool tracer_frame(std::string_view f) {
  static const char* const kTracer[] = {"__ftrace_trace_stack", "__trace_stack", "probe_wakeup",
                                        "probe_wakeup_sched_switch"};
  return std::any_of(std::begin(kTracer), std::end(kTracer), [&](const char* t) { return f == t; });
}

// " => madvise_pageout+0x1a/0x40" -> "madvise_pageout+0x1a/0x40"; "" if not a frame line.
std::string_view frame_of(std::string_view line) {
  std::string_view t = trim(line);
  if (t.size() < 3 || t.substr(0, 2) != "=>") return {};
  return trim(t.substr(2));
}

void read_header(std::string_view line, WakeupTraceSummary& s) {
  static const std::regex tracer_re(R"(^#\s*([a-z_]{1,32}) latency trace v)");
  static const std::regex lat_re(
      R"(^#\s*latency:\s*([0-9]{1,12})\s*us,\s*(#([0-9]{1,9})/[0-9]{1,9},)?.*CPU#([0-9]{1,5}))");
  static const std::regex task_re(R"(^#\s*\|\s*task:\s*(\S{1,64}))");
  static const std::regex prio_re(R"(policy:([0-9]{1,2}) rt_prio:([0-9]{1,3}))");
  std::string l(line.substr(0, 400));
  std::smatch m;
  if (s.tracer.empty() && std::regex_search(l, m, tracer_re)) {
    s.tracer = m[1].str();
  } else if (!s.latency_us && std::regex_search(l, m, lat_re)) {
    s.latency_us = std::stod(m[1].str());
    if (m[3].matched) s.entries = std::stol(m[3].str());
    s.cpu = std::stoi(m[4].str());
  } else if (s.task.empty() && std::regex_search(l, m, task_re)) {
    s.task = m[1].str();
    if (std::regex_search(l, m, prio_re))
      s.policy = std::stoi(m[1].str()), s.rt_prio = std::stoi(m[2].str());
  }
}

}  // namespace

WakeupTraceSummary parse_wakeup_trace(std::string_view text) {
  WakeupTraceSummary s;
  std::vector<std::vector<std::string>> stacks;
  bool in_stack = false;
  for (std::string_view line : text_lines(text)) {
    if (!line.empty() && line.front() == '#') {
      read_header(line, s);
      continue;
    }
    std::string_view f = frame_of(line);
    if (f.empty()) {
      in_stack = line.find("<stack trace>") != std::string_view::npos;
      if (in_stack) stacks.emplace_back();
      continue;
    }
    if (in_stack && !tracer_frame(f) && f.size() <= 200) stacks.back().emplace_back(f);
  }
  if (!stacks.empty()) {
    s.wakeup_frames = stacks.front();
    if (stacks.size() > 1) s.switch_frames = stacks.back();
  }
  return s;
}

std::map<std::string, FunctionProfileRow> parse_function_profile_rows(std::string_view text) {
  std::map<std::string, FunctionProfileRow> rows;
  int n = 0;
  for (std::string_view line : text_lines(text)) {
    ++n;
    auto w = split_ws(line);
    if (w.size() < 2 || w[0] == "Function" || w[0].find_first_not_of('-') == std::string::npos)
      continue;
    std::optional<long> h = to_long(w[1]);
    if (!h || *h < 0)
      throw Error("function profile line " + std::to_string(n) +
                  ": hit count is not a number: " + quote(line));
    FunctionProfileRow& r = rows[std::string(w[0].substr(0, 200))];
    r.hits += *h;
    if (w.size() >= 4 && w[3] == "us") {
      const std::optional<double> t = to_double(w[2]);
      if (!t || *t < 0)
        throw Error("function profile line " + std::to_string(n) +
                    ": time is not a number: " + quote(line));
      r.time_us = r.time_us.value_or(0) + *t;
    }
  }
  return rows;
}

std::map<std::string, long long> parse_function_profile(std::string_view text) {
  std::map<std::string, long long> hits;
  for (const auto& [name, row] : parse_function_profile_rows(text)) hits[name] = row.hits;
  return hits;
}

namespace {

[[noreturn]] void mp_fail(const std::string& why, std::string_view text) {
  throw Error("madvise-pressure output: " + why + ": " + quote(text));
}

double mp_number(const json& j, const char* key, std::string_view text) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number() || it->get<double>() < 0)
    mp_fail(std::string("field \"") + key + "\" missing, not a number or negative", text);
  return it->get<double>();
}

}  // namespace

MadvisePressureResult parse_madvise_pressure(std::string_view text) {
  std::string_view last;
  for (std::string_view line : text_lines(text))
    if (!trim(line).empty() && trim(line).front() == '{') last = trim(line);
  if (last.empty()) mp_fail("no JSON line", text);
  json j = json::parse(last, nullptr, false);
  if (j.is_discarded() || !j.is_object()) mp_fail("not a JSON object", last);
  if (j.value("tool", "") != "madvise-pressure") mp_fail("\"tool\" is not madvise-pressure", last);
  if (mp_number(j, "version", last) != 1) mp_fail("unknown \"version\"", last);
  MadvisePressureResult r;
  auto adv = j.find("advice");
  if (adv == j.end() || !adv->is_string()) mp_fail("field \"advice\" missing", last);
  r.advice = sanitize_excerpt(adv->get<std::string>(), 20);
  r.procs = static_cast<long>(mp_number(j, "procs", last));
  r.mib = static_cast<long>(mp_number(j, "mib", last));
  r.calls = static_cast<long long>(mp_number(j, "calls", last));
  r.failed_calls = static_cast<long long>(mp_number(j, "failed_calls", last));
  r.max_call_us = mp_number(j, "max_call_us", last);
  r.mean_call_us = mp_number(j, "mean_call_us", last);
  r.elapsed_s = mp_number(j, "elapsed_s", last);
  return r;
}

Metrics madvise_pressure_metrics(const MadvisePressureResult& r) {
  Metrics m;
  add_metric_value(m, "madvise_calls", "count", false, "sum", static_cast<double>(r.calls));
  add_metric_value(m, "madvise_call_max_us", "us", true, "max", r.max_call_us);
  add_metric_value(m, "madvise_call_mean_us", "us", true, "mean", r.mean_call_us);
  return m;
}

}  // namespace isolab
