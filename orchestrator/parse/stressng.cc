#include "parse/stressng.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"
#include "parse/text_util.h"
#include "parse/yaml_subset.h"

namespace isolab {

using nlohmann::json;
using namespace parse_detail;

namespace {

constexpr std::size_t kMaxStressNgBytes = 64u << 20;

std::optional<double> number_field(const json& obj, const std::string& key,
                                   const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    if (auto v = to_double(it->get<std::string>())) return v;
  }
  throw Error("stress-ng yaml: \"" + where + "/" + key + "\" is not a number: " +
              quote(it->dump(-1, ' ', false, json::error_handler_t::replace), 80));
}

void apply_not_accounted(StressngStressor& s, std::vector<std::string>& notes) {
  if (s.bogo_ops_per_s_usr_sys && *s.bogo_ops_per_s_usr_sys == 0) {
    bool no_cpu_time = s.user_s && s.system_s && *s.user_s + *s.system_s == 0;
    bool ops_done = s.bogo_ops && *s.bogo_ops > 0;
    if (no_cpu_time || ops_done) {
      s.bogo_ops_per_s_usr_sys.reset();
      notes.push_back(s.stressor + ": usr+sys bogo ops/s is 0 with " +
                      (no_cpu_time ? std::string("no user+system time accounted")
                                   : std::string("bogo ops done")) +
                      ": not accounted, stored as missing");
    }
  }
  if (s.bogo_ops_per_s_real && *s.bogo_ops_per_s_real == 0 && s.wall_clock_s &&
      *s.wall_clock_s == 0) {
    s.bogo_ops_per_s_real.reset();
    notes.push_back(s.stressor +
                    ": real-time bogo ops/s is 0 with 0 wall-clock time: stored as missing");
  }
}

}  // namespace

std::optional<int> StressngTimes::cpus() const {
  if (!run_time_s || !available_cpu_s || *run_time_s <= 0) return std::nullopt;
  return static_cast<int>(std::lround(*available_cpu_s / *run_time_s));
}

StressngResult parse_stressng_yaml(std::string_view text) {
  json doc = parse_yaml_subset(text);
  StressngResult r;
  r.format = "yaml";
  if (!doc.is_object())
    throw Error("stress-ng yaml: the document is not a mapping: " + quote(text, 200));
  if (auto si = doc.find("system-info"); si != doc.end() && si->is_object()) {
    if (auto v = si->find("stress-ng-version"); v != si->end() && v->is_string())
      r.version = v->get<std::string>();
  }
  auto metrics = doc.find("metrics");
  if (metrics == doc.end() || !metrics->is_array())
    throw Error("stress-ng yaml: no \"metrics\" list (was --metrics or --metrics-brief given?): " +
                quote(text, 200));
  static const std::map<std::string, std::optional<double> StressngStressor::*> known = {
      {"bogo-ops", &StressngStressor::bogo_ops},
      {"bogo-ops-per-second-real-time", &StressngStressor::bogo_ops_per_s_real},
      {"bogo-ops-per-second-usr-sys-time", &StressngStressor::bogo_ops_per_s_usr_sys},
      {"wall-clock-time", &StressngStressor::wall_clock_s},
      {"user-time", &StressngStressor::user_s},
      {"system-time", &StressngStressor::system_s},
      {"cpu-usage-per-instance", &StressngStressor::cpu_usage_per_instance_pct},
      {"max-rss", &StressngStressor::max_rss_kb}};
  for (std::size_t i = 0; i < metrics->size(); ++i) {
    const json& m = (*metrics)[i];
    const std::string where = "metrics/" + std::to_string(i);
    if (!m.is_object()) throw Error("stress-ng yaml: \"" + where + "\" is not a mapping");
    auto name = m.find("stressor");
    if (name == m.end() || !name->is_string() || name->get<std::string>().empty())
      throw Error("stress-ng yaml: \"" + where + "\" has no \"stressor\"");
    StressngStressor s;
    s.stressor = name->get<std::string>();
    for (const auto& [key, value] : m.items()) {
      if (key == "stressor") continue;
      if (auto k = known.find(key); k != known.end()) {
        s.*(k->second) = number_field(m, key, where);
      } else if (value.is_string()) {
        if (auto v = to_double(value.get<std::string>())) s.extra[key] = *v;
      }
    }
    apply_not_accounted(s, r.notes);
    r.stressors.push_back(std::move(s));
  }
  if (auto t = doc.find("times"); t != doc.end() && t->is_object()) {
    StressngTimes times;
    times.run_time_s = number_field(*t, "run-time", "times");
    times.available_cpu_s = number_field(*t, "available-cpu-time", "times");
    times.user_s = number_field(*t, "user-time", "times");
    times.system_s = number_field(*t, "system-time", "times");
    times.total_s = number_field(*t, "total-time", "times");
    r.times = times;
  }
  if (r.stressors.empty()) r.notes.emplace_back("the metrics list is empty");
  return r;
}

StressngResult parse_stressng_text(std::string_view text) {
  if (text.size() > kMaxStressNgBytes)
    throw Error("stress-ng text: " + std::to_string(text.size()) +
                " bytes is more than the 64 MiB limit");
  StressngResult r;
  r.format = "text";
  StressngTimes times;
  bool have_times = false;
  auto seconds = [](std::string_view tok) -> std::optional<double> {
    if (tok.empty() || tok.back() != 's') return std::nullopt;
    return to_double(tok.substr(0, tok.size() - 1));
  };
  for (std::string_view line : text_lines(text)) {
    std::string_view s = trim(line);
    if (s.substr(0, 10) == "stress-ng:") {
      s = trim(s.substr(10));
      std::size_t colon = s.find(':');  // level: info, metrc, warn, fail, ...
      if (colon != std::string_view::npos && colon < 8) s = trim(s.substr(colon + 1));
      if (!s.empty() && s.front() == '[') {
        std::size_t close = s.find(']');
        if (close != std::string_view::npos) s = trim(s.substr(close + 1));
      }
    }
    auto tok = split_ws(s);
    if (tok.empty()) continue;
    // --times block.
    if (tok.size() == 5 && tok[0] == "for" && tok[1] == "a" && tok[3] == "run" &&
        tok[4] == "time:") {
      if ((times.run_time_s = seconds(tok[2]))) have_times = true;
      continue;
    }
    if (tok.size() >= 3 && seconds(tok[0])) {
      std::string what = std::string(tok[1]) + " " + std::string(tok[2]);
      if (what == "available CPU") times.available_cpu_s = seconds(tok[0]);
      if (what == "user time") times.user_s = seconds(tok[0]);
      if (what == "system time") times.system_s = seconds(tok[0]);
      if (what == "total time") times.total_s = seconds(tok[0]);
      continue;
    }
    // Stressor rows: a name and 6 to 8 numbers.
    if (tok.size() < 7 || tok.size() > 9 || to_double(tok[0])) continue;
    std::vector<double> nums;
    for (std::size_t i = 1; i < tok.size(); ++i) {
      auto v = to_double(tok[i]);
      if (!v) break;
      nums.push_back(*v);
    }
    if (nums.size() + 1 != tok.size()) continue;
    StressngStressor st;
    st.stressor = std::string(tok[0]);
    st.bogo_ops = nums[0];
    st.wall_clock_s = nums[1];
    st.user_s = nums[2];
    st.system_s = nums[3];
    st.bogo_ops_per_s_real = nums[4];
    st.bogo_ops_per_s_usr_sys = nums[5];
    if (nums.size() > 6) st.cpu_usage_per_instance_pct = nums[6];
    if (nums.size() > 7) st.max_rss_kb = nums[7];
    apply_not_accounted(st, r.notes);
    r.stressors.push_back(std::move(st));
  }
  if (r.stressors.empty())
    throw Error(
        "stress-ng text: no stressor row (name, bogo ops, real/usr/sys time, two rates) in " +
        quote(text, 300));
  if (have_times) r.times = times;
  return r;
}

Metrics stressng_metrics(const StressngResult& result, std::vector<std::string>* notes) {
  Metrics m;
  for (const auto& s : result.stressors) {
    auto add = [&](const std::string& suffix, const char* unit, const std::optional<double>& v) {
      const std::string name = s.stressor + "." + suffix;
      if (!v || !add_metric_value(m, name, unit, false, "sum", *v)) {
        if (notes && !m.count(name)) notes->push_back("stress-ng: " + name + ": no value");
      }
    };
    add("bogo_ops", "bogo ops", s.bogo_ops);
    add("bogo_ops_per_s_real", "bogo ops/s", s.bogo_ops_per_s_real);
    add("bogo_ops_per_s_usr_sys", "bogo ops/s", s.bogo_ops_per_s_usr_sys);
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// Exit status and log (docs/sources.md [s3]).

namespace {

// "stress-ng: info:  [123] text" -> "text"; lines without the prefix are returned trimmed.
std::string_view strip_log_prefix(std::string_view s) {
  s = trim(s);
  if (s.substr(0, 10) != "stress-ng:") return s;
  s = trim(s.substr(10));
  std::size_t colon = s.find(':');  // level: info, metrc, warn, fail, error, debug
  if (colon != std::string_view::npos && colon < 8) s = trim(s.substr(colon + 1));
  if (!s.empty() && s.front() == '[') {
    std::size_t close = s.find(']');
    if (close != std::string_view::npos) s = trim(s.substr(close + 1));
  }
  return s;
}

// The first word without a trailing ':' ("sctp: SCTP protocol..." -> "sctp").
std::string first_word(std::string_view s) {
  auto tok = split_ws(s);
  if (tok.empty()) return "";
  std::string_view w = tok[0];
  if (!w.empty() && w.back() == ':') w.remove_suffix(1);
  return std::string(w);
}

// "process [123] (vm) aborted early" -> "vm".
std::string process_name(std::string_view s) {
  std::size_t open = s.find('(');
  std::size_t close = s.find(')', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) return "";
  return std::string(s.substr(open + 1, close - open - 1));
}

// "dispatching hogs: 2 cpu, 1 vm" -> {"cpu", "vm"}.
std::vector<std::string> dispatched_names(std::string_view rest) {
  std::vector<std::string> out;
  while (!rest.empty()) {
    std::size_t comma = rest.find(',');
    auto tok = split_ws(rest.substr(0, comma));
    if (tok.size() == 2) out.emplace_back(tok[1]);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return out;
}

// "skipped: 2: apparmor (1) sctp (1)" -> {"apparmor", "sctp"}; "passed: 0" -> {}.
std::vector<std::string> summary_names(std::string_view rest) {
  std::vector<std::string> out;
  std::size_t colon = rest.find(':');
  if (colon == std::string_view::npos) return out;
  auto tok = split_ws(rest.substr(colon + 1));
  for (std::size_t i = 0; i + 1 < tok.size(); i += 2) out.emplace_back(tok[i]);
  return out;
}

void note_line(std::map<std::string, StressngLogLine>& m, const std::string& name,
               const StressngLogLine& l) {
  if (!name.empty()) m.try_emplace(name, l);
}

// The summary lines "<key>: N[: name (n) ...]" (stress_exit_status_type()).
bool read_summary_line(StressngLog& log, std::string_view s, const StressngLogLine& l) {
  static const std::map<std::string_view, std::map<std::string, StressngLogLine> StressngLog::*>
      keys = {{"passed:", &StressngLog::passed},
              {"skipped:", &StressngLog::skipped},
              {"failed:", &StressngLog::failed},
              {"metrics untrustworthy:", &StressngLog::untrustworthy}};
  for (const auto& [key, member] : keys) {
    if (!s.starts_with(key)) continue;
    std::string_view rest = trim(s.substr(key.size()));
    if (rest.empty() || !std::isdigit(static_cast<unsigned char>(rest.front()))) return false;
    if (key == "passed:") log.passed_summary = l;
    for (const auto& n : summary_names(rest)) note_line(log.*member, n, l);
    return true;
  }
  return false;
}

// One log line (prefix stripped) into the log.
void read_log_line(StressngLog& log, std::string_view s, const StressngLogLine& l) {
  if (s.starts_with("setting to a ")) {  // "setting to a 5 second run per stressor" (0.15)
    auto tok = split_ws(s);
    if (tok.size() > 4 && tok[4].starts_with("sec")) log.run_seconds = to_double(tok[3]);
  } else if (s.starts_with("dispatching hogs:")) {
    for (auto& n : dispatched_names(s.substr(17))) log.dispatched.push_back(std::move(n));
  } else if (read_summary_line(log, s, l)) {
  } else if (s.starts_with("process [")) {
    if (contains(s, "out of system resources"))
      note_line(log.no_resources, process_name(s), l);
    else if (contains(s, "terminated with an error") || contains(s, "terminated on signal"))
      note_line(log.failed, process_name(s), l);
  } else if (contains(s, "No stress workers invoked")) {
    if (!log.no_workers.line) log.no_workers = l;
  } else if (contains(s, "run completed in")) {
    log.completed = l;
    log.successful = !s.starts_with("unsuccessful");
  } else if (contains(s, "metrics are untrustworthy") || contains(s, "corrupted bogo-ops") ||
             contains(s, "hash error in bogo-ops")) {
    note_line(log.untrustworthy, first_word(s), l);
  } else if (contains(s, "skipping stressor") || contains(s, "will be skipped") ||
             contains(s, "not implemented")) {
    note_line(log.skipped, first_word(s), l);
  }
}

using Outcome = StressngRunCheck::Outcome;

StressngRunCheck outcome(Outcome o, std::string reason, std::size_t line = 0) {
  StressngRunCheck c;
  c.outcome = o;
  c.reason = std::move(reason);
  c.line = line;
  return c;
}

std::string with_line(const std::string& what, const StressngLogLine& l) {
  return l.line ? what + ": " + l.text : what;
}

// Step 1: failures from the exit status and the log (nullopt: none).
std::optional<StressngRunCheck> failure_of(const StressngLog& log, std::optional<int> status) {
  const bool status_failed = status && *status != 0 && *status != 7;
  // "stress-ng exited 2 (...): " when the status is known.
  const std::string head = status ? "stress-ng exited " + std::to_string(*status) + " (" +
                                        stressng_exit_meaning(*status) + "): "
                                  : std::string();
  for (const auto* m : {&log.failed, &log.no_resources}) {
    if (m->empty()) continue;
    const auto& [name, l] = *m->begin();
    std::string why = m == &log.failed ? "stressor " + name + " failed"
                                       : "stressor " + name + " had not enough resources";
    return outcome(Outcome::failed, with_line(head + why, l), l.line);
  }
  const bool unsuccessful = status_failed || log.successful == false;
  if (unsuccessful && !log.untrustworthy.empty()) {  // e.g. a worker killed: counters corrupted
    const auto& [name, l] = *log.untrustworthy.begin();
    return outcome(Outcome::failed, with_line(head + "stressor " + name, l), l.line);
  }
  if (status_failed) return outcome(Outcome::failed, head.substr(0, head.size() - 2));
  if (log.successful == false)
    return outcome(Outcome::failed, with_line(head + "unsuccessful run", log.completed),
                   log.completed.line);
  return std::nullopt;
}

// Step 2: why `s` did not run ("" when it ran).
std::optional<StressngLogLine> not_run_line(const StressngLog& log, const std::string& s,
                                            const StressngResult& reported) {
  if (auto it = log.skipped.find(s); it != log.skipped.end()) return it->second;
  if (log.passed_summary.line) {  // newer stress-ng: the summary is its own verdict
    if (log.passed.count(s)) return std::nullopt;
    return log.passed_summary;
  }
  if (log.no_workers.line) return log.no_workers;
  auto row = std::find_if(reported.stressors.begin(), reported.stressors.end(),
                          [&](const StressngStressor& r) { return r.stressor == s; });
  if (row == reported.stressors.end()) return StressngLogLine{0, "no metrics row"};
  // 0.15.06 prints a row for a skipped stressor: 0 bogo ops in a fraction of the run time.
  const double short_s = log.run_seconds ? *log.run_seconds / 2 : 1.0;
  if (row->bogo_ops.value_or(0) == 0 && row->wall_clock_s.value_or(0) < short_s) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "its metrics row has 0 bogo ops in %.3g s", *row->wall_clock_s);
    return StressngLogLine{0, row->wall_clock_s ? buf : "its metrics row has 0 bogo ops"};
  }
  return std::nullopt;
}

}  // namespace

StressngLog parse_stressng_log(std::string_view text) {
  StressngLog log;
  if (text.size() > kMaxStressNgBytes) text = text.substr(0, kMaxStressNgBytes);
  auto lines = text_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view s = strip_log_prefix(lines[i]);
    if (s.empty()) continue;
    read_log_line(log, s, StressngLogLine{i + 1, sanitize_excerpt(s, 200)});
  }
  return log;
}

std::string stressng_exit_meaning(int status) {
  static const std::map<int, std::string> meaning = {
      {0, "success"},
      {1, "harness or usage error"},
      {2, "a stressor failed (or an unexpected signal)"},
      {3, "not enough resources"},
      {4, "not implemented"},
      {5, "killed by a signal"},
      {6, "a stressor ended with _exit()"},
      {7, "metrics untrustworthy"}};
  auto it = meaning.find(status);
  return it == meaning.end() ? "not a stress-ng exit status" : it->second;
}

StressngRunCheck check_stressng_run(const StressngLog& log, std::optional<int> exit_status,
                                    std::vector<std::string> requested,
                                    const StressngResult& reported) {
  if (auto f = failure_of(log, exit_status)) return *f;
  if (requested.empty()) requested = log.dispatched;
  if (requested.empty() && log.no_workers.line)
    return outcome(Outcome::invalid, with_line("no stressor ran", log.no_workers),
                   log.no_workers.line);
  for (const auto& s : requested) {
    if (auto l = not_run_line(log, s, reported))
      return outcome(Outcome::invalid, "stressor " + s + " did not run: " + l->text, l->line);
  }
  StressngRunCheck c;
  for (const auto& [name, l] : log.untrustworthy) c.untrustworthy[name] = l.text;
  if (exit_status == 7)
    for (const auto& r : reported.stressors)
      c.untrustworthy.try_emplace(r.stressor, "stress-ng exited 7 (metrics untrustworthy)");
  return c;
}

}  // namespace isolab
