#include "pipeline/import.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <regex>

#include "base/error.h"
#include "base/files.h"
#include "base/json_document.h"
#include "base/json_text.h"
#include "base/utc_time.h"
#include "cmdline/cpulist.h"
#include "parse/cyclictest.h"
#include "parse/hwlat.h"
#include "parse/latency_trace.h"
#include "parse/oslat.h"
#include "parse/oslat_json.h"
#include "parse/oslat_text.h"
#include "parse/rtla.h"
#include "parse/stressng.h"
#include "parse/timerlat_top.h"
#include "parse/trace.h"
#include "results/host.h"
#include "results/result.h"
#include "workload/noise.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {

namespace {

constexpr std::size_t kMaxImportBytes = std::size_t{256} << 20;

std::string prefix_of(const ImportOptions& o) {
  return (o.workload.empty() ? o.tool : o.workload) + ".";
}

void add_prefixed(ImportedCell& c, const std::string& prefix, const Metrics& m) {
  for (const auto& [name, metric] : m) c.metrics[prefix + name] = metric;
}

// Runs a parser, putting the file name in front of its error.
template <typename F>
auto in_file(const std::string& file, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    throw Error(file + ": " + e.what());
  }
}

std::string first_non_blank(const std::string& text) {
  const auto at = text.find_first_not_of(" \t\r\n");
  return at == std::string::npos ? "" : text.substr(at, 3);
}

std::string line_at(const std::string& text, std::size_t line_no) {
  std::size_t pos = 0;
  for (std::size_t i = 1; i < line_no && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (pos == std::string::npos) return "";
  return sanitize_excerpt(text.substr(pos, text.find('\n', pos) - pos), 120);
}

[[noreturn]] void bad_line(const std::string& file, const std::string& text, std::size_t line_no,
                           const std::string& what) {
  throw Error(file + ": line " + std::to_string(line_no) + ": " + what + ": '" +
              line_at(text, line_no) + "'");
}

// ---- cyclictest

ImportedCell import_cyclictest(const std::string& text, const std::string& file,
                               const ImportOptions& o) {
  const bool is_json = first_non_blank(text).starts_with("{");
  CyclictestResult r = in_file(file, [&] {
    return is_json ? parse_cyclictest_json(text) : parse_cyclictest_text(text, o.values_in_ns);
  });
  if (r.first_skipped_line) bad_line(file, text, r.first_skipped_line, "not cyclictest output");
  ImportedCell c;
  c.notes = r.notes;
  add_prefixed(c, prefix_of(o), cyclictest_metrics(r, &c.notes));
  c.tool_versions = cyclictest_versions(r, &c.notes);
  CyclictestHistogram h = merged_histogram(r);
  if (!h.counts.empty()) {
    json counts = json::object();
    for (const auto& [bucket, n] : h.counts) counts[std::to_string(bucket)] = n;
    c.histograms[prefix_of(o).substr(0, prefix_of(o).size() - 1)] = {
        {"unit", "us"}, {"bucket_ns", h.bucket_ns}, {"counts", counts}, {"overflows", h.overflows}};
  }
  if (c.metrics.empty()) c.invalid_reason = "cyclictest: no thread has samples";
  // docs/sources.md [t3]: return_code says whether the run succeeded.
  if (r.return_code && *r.return_code != 0)
    c.invalid_reason = "cyclictest return_code " + std::to_string(*r.return_code) +
                       ": the run reported a failure, its numbers are no measurement";
  return c;
}

// ---- oslat

ImportedCell import_oslat(const std::string& text, const std::string& file,
                          const ImportOptions& o) {
  const bool is_json = first_non_blank(text).starts_with("{");
  const OslatResult r =
      in_file(file, [&] { return is_json ? parse_oslat_json(text) : parse_oslat_text(text); });
  ImportedCell c;
  c.notes = r.notes;
  add_prefixed(c, prefix_of(o), oslat_metrics(r, &c.notes));
  c.tool_versions = oslat_versions(r, &c.notes);
  c.histograms =
      oslat_histograms_json(r, prefix_of(o).substr(0, prefix_of(o).size() - 1), &c.notes);
  if (c.metrics.empty()) c.invalid_reason = "oslat: no thread has samples";
  if (r.return_code && *r.return_code != 0)
    c.invalid_reason = "oslat return_code " + std::to_string(*r.return_code) +
                       ": the run reported a failure, its numbers are no measurement";
  return c;
}

// ---- stress-ng

bool looks_like_yaml(const std::string& text) {
  return first_non_blank(text).starts_with("---") || text.starts_with("system-info:") ||
         text.starts_with("metrics:") || text.find("\nmetrics:") != std::string::npos;
}

// stress-ng's exit status and summary lines (docs/sources.md [s3]) on an imported run: a text FILE
// is stress-ng's log (stderr), whose status lines are read; a YAML FILE has none. The exit status
// is known only from --exit-status. A failed run or a requested stressor that did not run is an
// error naming the file and the log line; the stressors asked for are the log's "dispatching hogs:"
// list, or else those with a row.
void judge_imported_stressng(ImportedCell& c, const StressngResult& r, const std::string& log,
                             const std::string& file, const ImportOptions& o) {
  const StressngLog parsed = parse_stressng_log(log);
  std::vector<std::string> requested = parsed.dispatched;
  if (requested.empty())
    for (const auto& s : r.stressors) requested.push_back(s.stressor);
  const StressngRunCheck check = check_stressng_run(parsed, o.exit_status, requested, r);
  if (check.outcome != StressngRunCheck::Outcome::ok) {
    const std::string where = check.line ? file + ": line " + std::to_string(check.line) : file;
    throw Error(where + ": stress-ng: " + check.reason +
                (o.exit_status ? " (exit status from --exit-status)" : ""));
  }
  for (const auto& [stressor, why] : check.untrustworthy) {
    const std::string reason = "stress-ng: metrics untrustworthy: " + why;
    if (mark_untrustworthy(c.metrics, prefix_of(o) + stressor + ".", reason))
      c.notes.push_back(stressor + ": " + reason + " (kept out of comparisons)");
  }
}

ImportedCell import_stressng(const std::string& text, const std::string& file,
                             const ImportOptions& o) {
  const bool yaml = looks_like_yaml(text);
  StressngResult r;
  try {
    r = in_file(file, [&] { return yaml ? parse_stressng_yaml(text) : parse_stressng_text(text); });
  } catch (const Error&) {
    // A log without rows can still say why (everything skipped, exit status 0).
    ImportedCell none;
    if (!yaml) judge_imported_stressng(none, StressngResult{}, text, file, o);
    throw;
  }
  ImportedCell c;
  c.notes = r.notes;
  if (!r.version.empty()) c.tool_versions["stress-ng"] = sanitize_excerpt(r.version, 40);
  add_prefixed(c, prefix_of(o), stressng_metrics(r, &c.notes));
  judge_imported_stressng(c, r, yaml ? std::string() : text, file, o);
  if (c.metrics.empty()) c.invalid_reason = "stress-ng: no stressor reported bogo ops";
  return c;
}

// ---- rtla (docs/sources.md [r1], [r2]: a missing tracer or a crashed rtla is
// a failed measurement)

void check_rtla_text(const std::string& tracer, const std::string& text, const std::string& file) {
  const RtlaRunCheck check = check_rtla_run(tracer, text, "", 0, std::nullopt);
  if (!check.ok) throw Error(file + ": rtla " + tracer + ": " + check.kind + ": " + check.reason);
}

ImportedCell import_rtla_osnoise(const std::string& text, const std::string& file,
                                 const ImportOptions& o) {
  check_rtla_text("osnoise", text, file);
  ImportedCell c;
  if (is_rtla_hist(text)) {
    const RtlaHist hist = in_file(file, [&] { return parse_rtla_osnoise_hist(text); });
    add_prefixed(c, prefix_of(o), rtla_osnoise_hist_metrics(hist, &c.notes));
    if (c.metrics.empty()) c.invalid_reason = "rtla osnoise hist: no CPU column";
    return c;
  }
  RtlaOsnoiseTop top = in_file(file, [&] { return parse_rtla_osnoise_top(text); });
  add_prefixed(c, prefix_of(o), rtla_osnoise_metrics(top));
  return c;
}

ImportedCell import_rtla_timerlat(const std::string& text, const std::string& file,
                                  const ImportOptions& o) {
  check_rtla_text("timerlat", text, file);
  ImportedCell c;
  if (!is_rtla_hist(text)) {
    const RtlaTimerlatTop top = in_file(file, [&] { return parse_rtla_timerlat_top(text); });
    c.notes = timerlat_analysis_notes(top);
    add_prefixed(c, prefix_of(o), rtla_timerlat_metrics(top.table, &c.notes));
    if (c.metrics.empty()) c.invalid_reason = "rtla timerlat top: no CPU has samples";
    return c;
  }
  RtlaHist hist = in_file(file, [&] { return parse_rtla_timerlat_hist(text); });
  add_prefixed(c, prefix_of(o), rtla_timerlat_metrics(hist, &c.notes));
  if (c.metrics.empty()) c.invalid_reason = "rtla timerlat: no CPU has samples";
  return c;
}

// ---- trace and interrupts

std::vector<int> cpus_option(const ImportOptions& o) {
  std::vector<int> out;
  if (o.cpus.empty()) return out;
  for (unsigned c : in_file("--cpus", [&] { return parse_cpulist(o.cpus, kMaxCpus); }).cpus())
    out.push_back(static_cast<int>(c));
  return out;
}

// The events of a trace by count, most first, at most five: "sched_switch 120, sched_wakeup 3".
std::string event_names(const TraceCounts& t) {
  std::map<std::string, long> all;
  for (const auto& [cpu, c] : t.per_cpu)
    for (const auto& [e, n] : c.events) all[e] += n;
  std::vector<std::pair<long, std::string>> by_count;
  for (const auto& [e, n] : all) by_count.emplace_back(-n, e);
  std::sort(by_count.begin(), by_count.end());
  std::string out;
  for (std::size_t i = 0; i < by_count.size() && i < 5; ++i)
    out += (i ? ", " : "") + by_count[i].second + " " + std::to_string(-by_count[i].first);
  return out;
}

// The hwlat tracer's trace: its samples per CPU (docs/sources.md [w1]).
ImportedCell import_hwlat(const std::string& text, const std::string& file,
                          const ImportOptions& o) {
  const auto samples = in_file(file, [&] { return parse_hwlat_trace(text); });
  ImportedCell c;
  add_prefixed(c, prefix_of(o), hwlat_metrics(samples));
  c.notes.push_back("hwlat: " + std::to_string(samples.size()) +
                    " samples; each CPU is where the hwlat thread's windows ran");
  return c;
}

// A wakeup / wakeup_rt / wakeup_dl latency trace (docs/sources.md [w2]): the recorded maximum.
ImportedCell import_wakeup(const WakeupTraceSummary& s, const ImportOptions& o) {
  ImportedCell c;
  if (!s.latency_us) {
    c.invalid_reason = s.tracer + " trace without a \"# latency:\" line: nothing recorded";
    return c;
  }
  Metric m;
  m.unit = "us";
  m.aggregate = "max";
  m.values = {*s.latency_us};
  add_prefixed(c, prefix_of(o), Metrics{{s.tracer + ".max_latency_us", m}});
  const std::size_t dash = s.task.rfind('-');
  std::string note = s.tracer + ": " + std::to_string(static_cast<long long>(*s.latency_us)) +
                     " us on CPU " + (s.cpu ? std::to_string(*s.cpu) : std::string("?"));
  if (dash != std::string::npos && dash > 0)
    note += ", task " + sanitize_excerpt(s.task.substr(0, dash), 64) + " (pid " +
            sanitize_excerpt(s.task.substr(dash + 1), 16) + ")";
  static const char* const kPolicy[] = {"SCHED_OTHER", "SCHED_FIFO", "SCHED_RR"};
  if (s.policy && *s.policy >= 0 && *s.policy <= 2 && s.rt_prio)
    note += ", " + std::string(kPolicy[*s.policy]) + " rt_prio " + std::to_string(*s.rt_prio);
  if (s.entries) note += ", " + std::to_string(*s.entries) + " entries";
  c.notes.push_back(note);
  return c;
}

ImportedCell import_trace(const std::string& text, const std::string& file,
                          const ImportOptions& o) {
  if (is_hwlat_trace(text)) return import_hwlat(text, file, o);
  if (const WakeupTraceSummary w = parse_wakeup_trace(text); !w.tracer.empty())
    return import_wakeup(w, o);
  TraceCounts t = parse_trace(text);
  if (t.first_malformed_line)
    bad_line(file, text, static_cast<std::size_t>(t.first_malformed_line),
             "not a trace event line");
  if (t.lines == 0) throw Error(file + ": no trace event lines");
  if (t.recognised == 0)
    throw Error(file + ": no recognised events among " + std::to_string(t.lines) +
                " event lines (" + event_names(t) +
                "): isolab reads irq_vectors (local_timer, reschedule, call_function), irq, "
                "softirq, timer, workqueue and osnoise tracer events");
  std::vector<int> cpus = cpus_option(o);
  if (cpus.empty()) cpus = t.traced_cpus;
  if (cpus.empty())
    for (const auto& [cpu, ct] : t.per_cpu) cpus.push_back(cpu);
  TraceNoise n = trace_noise(t, cpus, o.window_s);
  ImportedCell c;
  add_prefixed(c, prefix_of(o), n.metrics);
  // The osnoise tracer's per-period lines: the metrics of rtla osnoise top, from the same sums.
  add_prefixed(c, prefix_of(o), rtla_osnoise_metrics(osnoise_top_of_trace(text)));
  c.noise = std::move(n.details);
  c.notes = std::move(n.notes);
  return c;
}

// The 1-based number of the first line that is not blank.
std::size_t first_text_line(const std::string& text) {
  const auto at = text.find_first_not_of(" \t\r\n");
  const auto upto = at == std::string::npos ? text.size() : at;
  const auto nl = std::count(text.begin(), text.begin() + static_cast<long>(upto), '\n');
  return 1 + static_cast<std::size_t>(nl);
}

// The snapshots of a FILE: each starts at a header line ("CPU0 CPU1 ...").
std::vector<std::pair<std::size_t, std::string>> split_snapshots(const std::string& text) {
  std::vector<std::pair<std::size_t, std::string>> out;  // first line number, text
  std::size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    const std::size_t eol = std::min(text.find('\n', pos), text.size());
    const std::string line = text.substr(pos, eol - pos);
    ++line_no;
    const auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 3, "CPU") == 0)
      out.emplace_back(line_no, "");
    if (!out.empty()) out.back().second += line + "\n";
    pos = eol + 1;
  }
  return out;
}

InterruptsSnapshot snapshot_of(const std::pair<std::size_t, std::string>& part,
                               const std::string& file, const std::string& text) {
  InterruptsSnapshot s = in_file(file + ": line " + std::to_string(part.first),
                                 [&] { return parse_proc_interrupts(part.second); });
  if (s.first_malformed_line)
    bad_line(file, text, part.first + s.first_malformed_line - 1, "not a /proc/interrupts row");
  return s;
}

ImportedCell import_interrupts(const std::string& text, const std::string& file,
                               const ImportOptions& o) {
  if (!o.window_s) throw Error("--tool interrupts needs --window-s (seconds between snapshots)");
  const auto parts = split_snapshots(text);
  const std::size_t first = first_text_line(text);
  if (parts.empty() || parts.front().first != first)
    bad_line(file, text, first, "not a /proc/interrupts header (\"CPU0 CPU1 ...\")");
  if (parts.size() != 2)
    throw Error(file + ": holds " + std::to_string(parts.size()) +
                " /proc/interrupts snapshot(s); need two, before and after the measurement (cat "
                "/proc/interrupts; sleep S; cat /proc/interrupts, and --window-s S)");
  const InterruptsSnapshot before = snapshot_of(parts[0], file, text);
  const InterruptsSnapshot after = snapshot_of(parts[1], file, text);
  ImportedCell c;
  add_prefixed(c, prefix_of(o), in_file(file, [&] {
                 return interrupts_noise(before, after, cpus_option(o), *o.window_s);
               }));
  return c;
}

// ---- /proc/interrupts rows by meaning

bool is_arch_timer(const InterruptRow& r) { return r.description.ends_with("arch_timer"); }
bool is_irq_number(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), ::isdigit);
}

// Which noise cause a row counts, "" for none.
std::string cause_of_row(const InterruptRow& r) {
  if (r.name == "LOC" || (is_irq_number(r.name) && is_arch_timer(r))) return "local_timer";
  if (r.description == "Rescheduling interrupts") return "ipi_reschedule";
  if (r.description == "Function call interrupts" ||
      r.description == "Single function call interrupts")
    return "ipi_call_function";
  if (is_irq_number(r.name)) return "irq";
  return "";
}

std::optional<uint64_t> row_count(const InterruptsSnapshot& s, const std::string& name,
                                  unsigned cpu) {
  const InterruptRow* r = s.find(name);
  if (!r) return std::nullopt;
  auto it = r->counts.find(cpu);
  if (it == r->counts.end()) return std::nullopt;
  return it->second;
}

}  // namespace

Metrics interrupts_noise(const InterruptsSnapshot& before, const InterruptsSnapshot& after,
                         const std::vector<int>& cpus_in, double window_s) {
  if (!(window_s > 0)) throw Error("--window-s must be a positive number of seconds");
  std::vector<int> cpus = cpus_in;
  if (cpus.empty())
    for (unsigned c : after.cpus) cpus.push_back(static_cast<int>(c));
  for (int cpu : cpus)
    for (const InterruptsSnapshot* s : {&before, &after})
      if (std::find(s->cpus.begin(), s->cpus.end(), static_cast<unsigned>(cpu)) == s->cpus.end())
        throw Error("CPU " + std::to_string(cpu) + " is not a column of both snapshots");
  std::map<std::string, std::vector<long long>> counts;  // cause -> per CPU
  for (const char* cause : {"local_timer", "ipi_reschedule", "ipi_call_function", "irq"})
    counts[cause].assign(cpus.size(), 0);
  for (const InterruptRow& row : after.rows) {
    const std::string cause = cause_of_row(row);
    if (cause.empty() || row.total) continue;
    for (std::size_t i = 0; i < cpus.size(); ++i) {
      const auto b = row_count(before, row.name, static_cast<unsigned>(cpus[i]));
      const auto a = row_count(after, row.name, static_cast<unsigned>(cpus[i]));
      if (!a) continue;
      const auto d = counter_delta(b.value_or(0), *a);
      if (!d)
        throw Error("row " + row.name + ", CPU " + std::to_string(cpus[i]) +
                    ": the count fell from " + std::to_string(*b) + " to " + std::to_string(*a) +
                    " (more than one 32-bit wrap, or the snapshots are in the wrong order)");
      counts[cause][i] += static_cast<long long>(*d);
    }
  }
  Metrics m;
  for (const auto& [cause, per_cpu] : counts) {
    MetricPerCpu pc;
    pc.kind = "count";
    pc.window_s = window_s;
    for (std::size_t i = 0; i < cpus.size(); ++i) {
      pc.cpus.push_back(cpus[i]);
      pc.counts.push_back(per_cpu[i]);
      pc.slots.emplace_back(static_cast<double>(per_cpu[i]) / window_s);
    }
    if (auto metric = make_per_cpu_metric("1/s", true, "mean", std::move(pc)))
      m["noise." + cause + "_per_s"] = std::move(*metric);
  }
  return m;
}

// ---- function profiler

// trace_stat/function<N> (one file per CPU, or their concatenation): calls.<function> (hits)
// and calls.<function>.time_us (with the graph tracer), as the cyclictest step names them.
ImportedCell import_function_profile(const std::string& text, const std::string& file,
                                     const ImportOptions& o) {
  if (text.find("Function") == std::string::npos)
    throw Error(file + ": no \"Function  Hit\" header: not trace_stat/function output");
  const auto rows = in_file(file, [&] { return parse_function_profile_rows(text); });
  ImportedCell c;
  for (const auto& [name, row] : rows) {
    add_metric_value(c.metrics, prefix_of(o) + "calls." + name, "count", false, "sum",
                     static_cast<double>(row.hits));
    if (row.time_us)
      add_metric_value(c.metrics, prefix_of(o) + "calls." + name + ".time_us", "us", true, "sum",
                       *row.time_us);
    if (name.size() == 30)
      c.notes.push_back("'" + sanitize_excerpt(name, 40) +
                        "' is cut to 30 characters by the profiler: the function's full name "
                        "starts so");
  }
  if (c.metrics.empty()) c.invalid_reason = "function profile: no function row";
  return c;
}

const std::map<std::string, ImportTool>& import_tools() {
  static const std::map<std::string, ImportTool> tools = {
      {"cyclictest",
       {import_cyclictest,
        "cyclictest --json file, or its text: -q summary lines, redrawn (ESC) output, -h "
        "histogram (both footers), -N with --ns"}},
      {"stress-ng",
       {import_stressng, "stress-ng --yaml file, or its --metrics / --metrics-brief text"}},
      {"trace",
       {import_trace,
        "tracefs trace text: irq, irq_vectors, softirq, timer and workqueue events, the "
        "osnoise tracer's events and per-period summary lines, the hwlat tracer's samples, the "
        "wakeup / wakeup_rt latency trace"}},
      {"interrupts", {import_interrupts, "two /proc/interrupts snapshots, one after the other"}},
      {"function-profile",
       {import_function_profile,
        "the function profiler's trace_stat/function<N> files (one or concatenated): hits, and "
        "time with the graph tracer"}},
      {"oslat",
       {import_oslat,
        "oslat --json file, or its text summary (every version: rt-tests, and xzpeter/oslat "
        "v0.1.x), after any wrapper lines"}},
      {"rtla-osnoise", {import_rtla_osnoise, "rtla osnoise top text, or rtla osnoise hist text"}},
      {"rtla-timerlat",
       {import_rtla_timerlat,
        "rtla timerlat hist text, or rtla timerlat top text with its auto-analysis block"}},
  };
  return tools;
}

std::string import_formats_text() {
  std::string out;
  for (const auto& [name, tool] : import_tools()) {
    out += "  " + name + std::string(name.size() < 14 ? 14 - name.size() : 1, ' ') + tool.formats +
           "\n";
  }
  return out;
}

namespace {

ImportParser parser_for(const std::string& tool) {
  const auto& tools = import_tools();
  auto it = tools.find(tool);
  if (it != tools.end()) return it->second.parse;
  throw Error("--tool " + tool + ": not a format isolab reads; --tool takes:\n" +
              import_formats_text());
}

void check_label(const std::string& label) {
  static const std::regex ok("[A-Za-z0-9_.-]{1,40}");
  if (!std::regex_match(label, ok))
    throw Error("--label '" + sanitize_excerpt(label, 60) +
                "': use 1-40 characters of A-Z a-z 0-9 _ . -");
}

std::string read_input(const fs::path& f) {
  std::error_code ec;
  if (const std::string dir = directory_given(f); !dir.empty()) throw Error(dir);
  if (!fs::is_regular_file(f, ec)) throw Error(f.string() + ": no such file");
  return read_file(f, kMaxImportBytes);
}

json host_doc(const ImportOptions& o, const std::string& source_dir) {
  json host = {{"cpu_model", "unknown"},
               {"nproc", nullptr},
               {"host_kernel", "unknown"},
               {"qemu_version", "none"},
               {"accelerator", "bare-metal"},
               {"accelerator_reason", "imported from a real machine"},
               {"imported", true}};
  for (const auto& [k, v] : o.host) host[k] = v;
  if (o.host.count("nproc")) {
    try {
      host["nproc"] = std::stoi(o.host.at("nproc"));
    } catch (const std::exception&) {
      throw Error("--host nproc=" + o.host.at("nproc") + ": not a number");
    }
  }
  host["isolab_source"] = source_dir;
  if (o.host.count("accelerator")) host["accelerator_reason"] = "--host accelerator";
  return host;
}

// "bare-metal", or --host accelerator= when it is one isolab knows.
std::string accelerator_of(const ImportOptions& o) {
  auto it = o.host.find("accelerator");
  if (it == o.host.end()) return "bare-metal";
  if (it->second != "kvm" && it->second != "tcg" && it->second != "bare-metal")
    throw Error("--host accelerator=" + sanitize_excerpt(it->second, 40) +
                ": expected kvm, tcg or bare-metal");
  return it->second;
}

// The cell of FILE k: ok, or invalid when the file measured nothing.
results::CellRecord cell_record(const ImportOptions& o, std::size_t k, ImportedCell cell) {
  const std::string id = o.label + "-r" + std::to_string(k);
  results::CellRecord c;
  c.id = id;
  c.variant = o.label;
  c.repetition = static_cast<std::int64_t>(k);
  c.warmup = false;
  c.status = cell.invalid_reason.empty() ? results::CellStatus::ok : results::CellStatus::invalid;
  c.failure_class = results::Nullable<results::FailureClass>();
  c.reason = cell.invalid_reason;
  c.accelerator = accelerator_of(o);
  c.raw_dir = "cells/" + id;
  c.metrics = json::object();
  for (const auto& [name, m] : cell.metrics) (*c.metrics)[name] = m;
  c.histograms = std::move(cell.histograms);
  c.rest["imported_from"] = fs::absolute(o.files[k]).string();
  c.rest["gate"] = {{"pass", true}, {"reason", "not checked: imported"}, {"rows", json::array()}};
  const std::string wl = prefix_of(o).substr(0, prefix_of(o).size() - 1);
  if (!cell.notes.empty()) c.rest["notes"][wl] = cell.notes;
  if (!cell.tool_versions.empty()) c.rest["tool_versions"][wl] = cell.tool_versions;
  if (!cell.noise.is_null()) c.rest["noise"][wl] = std::move(cell.noise);
  return c;
}

json import_spec(const ImportOptions& o) {
  const std::string wl = prefix_of(o).substr(0, prefix_of(o).size() - 1);
  json spec = {{"name", o.label},
               {"imported", {{"tool", o.tool}}},
               {"workloads", json::array({{{"name", wl}, {"tool", o.tool}, {"imported", true}}})}};
  if (o.window_s) spec["imported"]["window_s"] = *o.window_s;
  if (!o.cpus.empty()) spec["imported"]["cpus"] = o.cpus;
  return spec;
}

// The one variant: the machine's kernel and command line.
results::VariantRecord import_variant(const ImportOptions& o) {
  results::VariantRecord v;
  v.kernel_release = o.kernel_release.empty() ? "unknown" : o.kernel_release;
  v.patches = json::array();
  v.cmdline = o.cmdline;
  v.rest["imported"] = true;
  return v;
}

// The run around the cells (see import.h for the comparison key).
results::RunResult import_run_record(const ImportOptions& o, const std::string& source_dir) {
  results::RunResult r;
  const json spec = import_spec(o);
  const json host = host_doc(o, source_dir);
  const std::string t = utc_now("%Y-%m-%dT%H:%M:%SZ");
  r.run_id = utc_now("%Y%m%dT%H%M%SZ") + "-" + o.label + "-import";
  r.spec_name = o.label;
  r.spec = spec;
  r.spec_sha256 = sha256_hex(json_text(spec));
  r.started_at = t;
  r.finished_at = t;
  r.status = results::RunStatus::complete;
  r.rest["imported"] = true;
  r.host = host;
  r.comparison_key = {{"accelerator", accelerator_of(o)},
                      {"cmdline", o.cmdline},
                      {"vcpus", host["nproc"]},
                      {"memory_mib", nullptr},
                      {"workloads_sha256", sha256_hex(json_text(spec["workloads"]))},
                      {"host_fingerprint_sha256", host_fingerprint_sha256(host)}};
  r.variants.emplace();
  (*r.variants)[o.label] = import_variant(o);
  r.variant_order = std::vector<std::string>{o.label};
  return r;
}

}  // namespace

results::RunResult import_record(const ImportOptions& o, const std::string& source_dir) {
  const ImportParser parse = parser_for(o.tool);
  check_label(o.label);
  if (o.files.empty()) throw Error("import: give at least one FILE");
  cpus_option(o);     // a bad --cpus is refused for every tool, not only where it selects CPUs
  accelerator_of(o);  // and a bad --host accelerator= before any FILE is read
  std::vector<results::CellRecord> cells;
  for (std::size_t k = 0; k < o.files.size(); ++k) {
    const std::string text = read_input(o.files[k]);
    cells.push_back(cell_record(o, k, parse(text, o.files[k].string(), o)));
  }
  results::RunResult r = import_run_record(o, source_dir);
  r.cells = std::move(cells);
  return r;
}

json import_result(const ImportOptions& o, const std::string& source_dir) {
  return results::to_json(import_record(o, source_dir));
}

fs::path import_run(const ImportOptions& o, fs::path run_dir, const fs::path& results_dir,
                    const std::string& source_dir) {
  const results::RunResult r = import_record(o, source_dir);
  if (run_dir.empty()) run_dir = results_dir / *r.run_id;
  std::error_code ec;
  if (fs::exists(run_dir, ec) && !fs::is_empty(run_dir, ec))
    throw Error("-o " + run_dir.string() + ": exists and is not empty");
  fs::create_directories(run_dir, ec);
  if (ec) throw Error(run_dir.string() + ": cannot create: " + ec.message());
  for (std::size_t k = 0; k < o.files.size(); ++k) {
    const fs::path cdir = run_dir / *r.cells[k].raw_dir;
    fs::create_directories(cdir);
    fs::copy_file(o.files[k], cdir / o.files[k].filename(), fs::copy_options::overwrite_existing);
  }
  // One space per level: the layout imported runs have always had.
  results::write_result(run_dir / "result.json", r, 1);
  return run_dir;
}

}  // namespace isolab
