// The bodies of the libFuzzer targets, shared by the fuzz executables (tests/fuzz/fuzz_*.cc,
// built with clang and -fsanitize=fuzzer) and the corpus-replay regression test
// (tests/unit/pipeline_fuzzcorpus_test.cc, built with the normal compiler).
//
// Contract of every body: it feeds untrusted bytes to one parser the way the orchestrator does
// and then uses the result the way the orchestrator uses it (metrics, JSON dumps that end in
// result.json or on stdout). It catches only the exception types the parser's header documents
// (isolab::Error and its subclasses, and nothing at all for the parsers documented "never
// throws"). Anything else escapes: under libFuzzer an escaping exception aborts (a crash to
// report), in the replay test it fails the test naming the corpus file. Checks of properties
// the headers promise (a list printed by to_list() parses back to the same set, chunked
// console classification equals whole-log classification, ...) throw FuzzInvariantViolation,
// which is deliberately not an isolab::Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/json_document.h"
#include "base/json_text.h"
#include "cmdline/analysis_output.h"
#include "cmdline/analyze.h"
#include "cmdline/cpulist.h"
#include "cmdline/tokenize.h"
#include "gate/gate.h"
#include "guest/channel.h"
#include "parse/console.h"
#include "parse/cyclictest.h"
#include "parse/lock_contention.h"
#include "parse/metrics.h"
#include "parse/oslat.h"
#include "parse/oslat_json.h"
#include "parse/oslat_text.h"
#include "parse/stressng.h"
#include "parse/trace.h"
#include "parse/vmstat_overhead.h"
#include "parse/vmstat_queueing.h"
#include "parse/yaml_subset.h"
#include "workload/noise.h"

namespace isolab::fuzz {

class FuzzInvariantViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

inline void check(bool ok, const std::string& what) {
  if (!ok) throw FuzzInvariantViolation(what);
}

// Known, reported bugs can be masked while fuzzing for further ones: the environment variable
// ISOLAB_FUZZ_MASK holds comma-separated names ("utf8": nlohmann type_error 316 on dump;
// "json-number": nlohmann out_of_range 406, a JSON number like 1e400 escaping a parser). Unset
// (the default, and in the replay test) nothing is masked.
inline bool masked(std::string_view bug) {
  const char* env = std::getenv("ISOLAB_FUZZ_MASK");
  if (env == nullptr) return false;
  std::string_view list(env);
  while (!list.empty()) {
    size_t comma = list.find(',');
    if (list.substr(0, comma) == bug) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// Runs a parser body; a masked known bug ends the input quietly.
template <typename F>
void with_known_bugs_masked(F&& f) {
  try {
    f();
  } catch (const nlohmann::json::out_of_range& e) {
    if (e.id == 406 && masked("json-number")) return;
    throw;
  } catch (const nlohmann::json::type_error& e) {
    if (e.id == 316 && masked("utf8")) return;
    throw;
  }
}

// result.json and the CLI's --json output are written with base/json_text.h json_text(), which
// replaces invalid UTF-8 (a plain dump() threw type_error 316 on it: the first fuzz finding);
// the dump stays part of the check.
inline void dump_like_result_json(const nlohmann::json& j) {
  with_known_bugs_masked([&] { (void)json_text(j, 2); });
}

inline void dump_metrics(const Metrics& metrics) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, m] : metrics) {
    j[name] = m;
    (void)reduce_metric(m);  // every stored metric has at least one finite value
  }
  dump_like_result_json(j);
}

// --- cmdline ---------------------------------------------------------------------------------

inline void fuzz_tokenize(std::string_view in) {
  std::vector<CmdlineToken> tokens;
  try {
    tokens = tokenize_cmdline(in);
  } catch (const Error&) {
    return;
  }
  for (const auto& t : tokens) {
    check(t.offset <= in.size() && t.raw.size() <= in.size() - t.offset &&
              in.substr(t.offset, t.raw.size()) == t.raw,
          "token raw/offset does not point into the input");
    check(t.normalized == normalize_param_name(t.name), "normalized != normalize_param_name(name)");
    (void)t.canonical();
  }
}

// Input: "<nbits>\n<cpu list or hex mask>"; without a newline nbits is 8 and all of it is text.
inline void fuzz_cpulist(std::string_view in) {
  unsigned nbits = 8;
  std::string_view text = in;
  if (size_t nl = in.find('\n'); nl != std::string_view::npos && nl <= 6) {
    unsigned v = 0;
    bool digits = nl > 0;
    for (char c : in.substr(0, nl)) {
      if (c < '0' || c > '9')
        digits = false;
      else
        v = v * 10 + static_cast<unsigned>(c - '0');
    }
    if (digits) {
      nbits = v;
      text = in.substr(nl + 1);
    }
  }
  const unsigned width = nbits > kMaxCpus ? kMaxCpus : nbits;

  CpuListParse p = try_parse_cpulist(text, nbits);  // documented: never throws
  check(p.set.nbits() == width, "try_parse_cpulist: set width is not the clamped nbits");
  if (p.ok()) {
    check(p.message.empty() && p.bad_token.empty(), "ok parse with an error message");
    CpuSet again;
    try {
      again = parse_cpulist(text, width);
    } catch (const Error& e) {
      check(false, std::string("try_parse ok but parse_cpulist threw: ") + e.what());
    }
    check(again == p.set, "parse_cpulist and try_parse_cpulist disagree");
    // %*pbl output is itself a valid list naming the same CPUs.
    try {
      check(parse_cpulist(p.set.to_list(), width) == p.set, "to_list does not parse back");
    } catch (const Error& e) {
      check(false, std::string("to_list output rejected: ") + e.what());
    }
    if (width > 0) {
      try {
        check(parse_cpumask_hex(p.set.to_mask(), width) == p.set, "to_mask does not parse back");
      } catch (const Error& e) {
        check(false, std::string("to_mask output rejected: ") + e.what());
      }
    }
  } else {
    check(!p.message.empty(), "failed parse without a message");
    try {
      (void)parse_cpulist(text, width);
      check(false, "try_parse failed but parse_cpulist accepted");
    } catch (const CpuListError& e) {
      check(e.errc() == *p.errc, "parse_cpulist and try_parse_cpulist give different errno");
    }
  }
  try {
    CpuSet m = parse_cpumask_hex(text, nbits);  // clamps nbits to kMaxCpus like try_parse
    check(m.nbits() == width, "parse_cpumask_hex: width != clamped nbits");
    check(parse_cpulist(m.to_list(), nbits) == m, "hex mask to_list does not parse back");
  } catch (const Error&) {
  }
}

inline void analyze_one(std::string_view in, const AnalyzeOptions& opt) {
  Analysis a;
  try {
    a = analyze(in, opt);
  } catch (const Error&) {
    return;
  }
  (void)a.guest_cmdline();
  (void)to_text(a);
  dump_like_result_json(to_json(a));  // `isolab cmdline --json`
  ExpectedIsolation e = expected_isolation(a);
  dump_like_result_json(to_json(e));
  check(a.housekeeping.subset_of(CpuSet::all(a.possible)), "housekeeping outside possible CPUs");
}

// Plain command line or dmesg text; analysed as Linux 6.1 and as 5.10 and 4.19 (the three CPU
// list behaviours of analyze.h).
inline void fuzz_analyze(std::string_view in) {
  AnalyzeOptions o;
  analyze_one(in, o);
  o.kernel.major = 5;
  o.kernel.minor = 10;
  analyze_one(in, o);
  o.kernel.major = 4;
  o.kernel.minor = 19;
  o.kernel.nr_cpus_config = 8192;
  analyze_one(in, o);
  (void)find_cmdline_in_dmesg(in);  // documented: nullopt, no throw
}

// Splits "key\nvalue\x1ekey\nvalue..." into a records map (the parsed result channel).
inline std::map<std::string, std::string> split_records(std::string_view in) {
  std::map<std::string, std::string> records;
  size_t pos = 0;
  while (pos <= in.size()) {
    size_t end = in.find('\x1e', pos);
    if (end == std::string_view::npos) end = in.size();
    std::string_view rec = in.substr(pos, end - pos);
    size_t nl = rec.find('\n');
    if (nl == std::string_view::npos)
      records[std::string(rec)] = "";
    else
      records[std::string(rec.substr(0, nl))] = std::string(rec.substr(nl + 1));
    pos = end + 1;
  }
  return records;
}

// Input: records as above. An "expected_cmdline" record, when it analyses, is the host side;
// otherwise a fixed isolation command line is.
inline void fuzz_gate(std::string_view in) {
  std::map<std::string, std::string> records = split_records(in);
  for (const char* key : {"interrupts_before", "interrupts_after"}) {
    auto it = records.find(key);
    if (it == records.end()) continue;
    try {
      InterruptsSnapshot s = parse_proc_interrupts(it->second);
      (void)s.find("LOC");
      for (const auto& row : s.rows)
        check(row.total ? row.counts.empty() : row.counts.size() == s.cpus.size(),
              "interrupt row " + row.name + " has neither a total nor one count per column");
    } catch (const Error&) {
    }
  }
  Analysis host;
  try {
    host = analyze(records.count("expected_cmdline") ? records["expected_cmdline"] : "");
  } catch (const Error&) {
    host = analyze("nohz_full=1-3 isolcpus=1-3 rcu_nocbs=1-3 irqaffinity=0");
  }
  records.erase("expected_cmdline");
  ExpectedIsolation expected = expected_isolation(host);
  GuestFacts facts = parse_guest_facts(records);  // documented: never throws
  (void)facts.clock.summary();
  GateReport report = evaluate_gate(expected, facts);  // pure
  check(report.pass == (report.reason == "PASS"), "gate pass and reason disagree");
  if (!facts.problems.empty()) check(!report.pass, "gate passes despite record problems");
  dump_like_result_json(to_json(report));  // result.json cells[].gate
  (void)to_text(report);
}

// --- parse -----------------------------------------------------------------------------------

inline void cyclictest_use(const CyclictestResult& r) {
  std::vector<std::string> notes;
  Metrics m = cyclictest_metrics(r, &notes);
  dump_metrics(m);
  (void)merged_histogram(r);
}

inline void fuzz_cyclictest_json(std::string_view in) {
  CyclictestResult r;
  try {
    bool masked_bug = true;
    with_known_bugs_masked([&] {
      r = parse_cyclictest_json(in);
      masked_bug = false;
    });
    if (masked_bug) return;
  } catch (const Error&) {
    return;
  }
  cyclictest_use(r);
}

inline void fuzz_cyclictest_text(std::string_view in) {
  for (bool ns : {false, true}) {
    CyclictestResult r;
    try {
      r = parse_cyclictest_text(in, ns);
    } catch (const Error&) {
      continue;
    }
    cyclictest_use(r);
    (void)merge_cyclictest(r, r);
  }
}

// What import and the workload make of an oslat result; every histogram kept accounts for every
// gap of its thread (parse/oslat.h oslat_histogram).
inline void oslat_use(const OslatResult& r) {
  std::vector<std::string> notes;
  dump_metrics(oslat_metrics(r, &notes));
  dump_like_result_json(oslat_histograms_json(r, "oslat", &notes));
  (void)oslat_versions(r, &notes);
  for (const auto& t : r.threads) {
    std::optional<OslatHistogram> h;
    try {
      h = oslat_histogram(r, t, &notes);
    } catch (const Error&) {
      continue;
    }
    if (!h) continue;
    long long sum = h->overflows;
    for (const auto& [bucket, n] : h->counts) sum += n;
    check(sum == t.samples, "oslat histogram does not hold every gap of its thread");
  }
}

// Input: an oslat --json file or text summary, given to both parsers.
inline void fuzz_oslat(std::string_view in) {
  try {
    bool masked_bug = true;
    OslatResult r;
    with_known_bugs_masked([&] {
      r = parse_oslat_json(in);
      masked_bug = false;
    });
    if (!masked_bug) oslat_use(r);
  } catch (const Error&) {
  }
  try {
    oslat_use(parse_oslat_text(in));
  } catch (const Error&) {
  }
}

inline void stressng_use(const StressngResult& r) {
  std::vector<std::string> notes;
  dump_metrics(stressng_metrics(r, &notes));
  if (r.times) (void)r.times->cpus();
}

inline void fuzz_stressng_yaml(std::string_view in) {
  StressngResult r;
  try {
    r = parse_stressng_yaml(in);
  } catch (const Error&) {
    return;
  }
  stressng_use(r);
}

inline void fuzz_stressng_text(std::string_view in) {
  StressngResult r;
  try {
    r = parse_stressng_text(in);
  } catch (const Error&) {
    return;
  }
  stressng_use(r);
}

inline void fuzz_yaml_subset(std::string_view in) {
  try {
    // Not dumped: the raw YAML tree never reaches result.json (only the numbers taken from it
    // and the stressor names, which the stressng targets check through the metrics).
    nlohmann::json j = parse_yaml_subset(in);
    size_t n = 0;
    for (auto it = j.begin(); it != j.end(); ++it) ++n;
    check(n == j.size() || j.is_primitive(), "yaml tree size mismatch");
  } catch (const Error&) {
  }
}

inline void fuzz_vmstat_overhead(std::string_view in) {
  VmstatOverheadResult r;
  try {
    bool masked_bug = true;
    with_known_bugs_masked([&] {
      r = parse_vmstat_overhead(in);
      masked_bug = false;
    });
    if (masked_bug) return;
  } catch (const Error&) {
    return;
  }
  (void)r.unit();
  dump_metrics(vmstat_overhead_metrics(r));
}

inline bool same_finding(const ConsoleFinding& a, const ConsoleFinding& b) {
  return a.klass == b.klass && a.kind == b.kind && a.fatal == b.fatal && a.line == b.line &&
         a.summary == b.summary && a.location == b.location && a.excerpt == b.excerpt;
}

// The log is classified whole and fed in chunks cut at input-dependent points; both must agree.
inline void fuzz_console(std::string_view in) {
  ConsoleReport whole = classify_console(in);  // documented: never throws
  dump_like_result_json(console_report_to_json(whole));
  check(whole.bytes == in.size(), "bytes != input size");
  check(whole.findings.size() <= 64, "more than 64 findings kept");
  check(whole.findings_total >= whole.findings.size(), "findings_total < findings kept");

  ConsoleClassifier c;
  size_t step = in.empty() ? 1 : (static_cast<unsigned char>(in[0]) % 61) + 1;
  for (size_t pos = 0; pos < in.size(); pos += step) c.feed(in.substr(pos, step));
  ConsoleReport chunked = c.finish();
  check(chunked.lines == whole.lines && chunked.bytes == whole.bytes &&
            chunked.long_lines == whole.long_lines &&
            chunked.findings_total == whole.findings_total &&
            chunked.findings.size() == whole.findings.size() &&
            chunked.fatal.has_value() == whole.fatal.has_value(),
        "chunked classification differs from whole-log classification");
  for (size_t i = 0; i < whole.findings.size(); ++i)
    check(same_finding(whole.findings[i], chunked.findings[i]),
          "chunked finding " + std::to_string(i) + " differs");
  if (whole.fatal) check(same_finding(*whole.fatal, *chunked.fatal), "chunked fatal differs");
}

// Input: a trace record ("# cpu N" + per-CPU tracefs text), or, when it starts with "wl.trace\n",
// records as for fuzz_gate ("wl.trace", "wl.window", "wl.interrupts_before", ...) of a step.
inline void check_noise(const Metrics& m, const nlohmann::json& details) {
  for (const auto& [name, metric] : m) {
    check(metric.per_cpu.has_value(), name + " has no per-CPU evidence");
    check(metric.per_cpu->cpus.size() == metric.per_cpu->slots.size(), name + ": cpus/values");
    for (long long c : metric.per_cpu->counts) check(c >= 0, name + ": negative count");
  }
  dump_metrics(m);
  dump_like_result_json(details);
}

inline void fuzz_trace(std::string_view in) {
  if (in.substr(0, 9) == "wl.trace\n") {
    ChannelContents ch;
    for (auto& [name, data] : split_records(in)) ch.records.push_back({name, 0, data, false});
    StepNoise n = step_noise(ch, "wl");  // documented: never throws
    check_noise(n.metrics, n.details);
    return;
  }
  LockContention lc = lock_contention(in);  // documented: never throws
  check(lc.malformed >= 0, "negative malformed lock lines");
  for (const auto& [cpu, c] : lc.per_cpu) {
    check(cpu >= 0 && cpu <= 8191, "lock CPU out of range");
    for (const LockWaits* w : {&c.zone, &c.pcp, &c.other})
      check(w->ended >= 0 && w->ended <= w->count && w->max_wait_ns >= 0 &&
                w->max_wait_ns <= w->wait_ns,
            "inconsistent lock waits");
  }
  TraceCounts t = parse_trace(in);  // documented: never throws
  check(t.lines >= 0 && t.malformed >= 0, "negative line counts");
  for (const auto& [cpu, c] : t.per_cpu) {
    check(cpu >= 0 && cpu <= 8191, "CPU out of range");
    check(cause_count(c, "workqueue_other") >= 0, "negative workqueue_other");
    if (c.longest) check(c.longest->duration_ns >= 0, "negative interruption");
  }
  std::vector<int> cpus = t.traced_cpus;
  if (cpus.empty())
    for (const auto& [cpu, c] : t.per_cpu) cpus.push_back(cpu);
  TraceNoise a = trace_noise(t, cpus, 5.01);  // documented: never throws
  check_noise(a.metrics, a.details);
  TraceNoise b = trace_noise(t, cpus, std::nullopt);
  check_noise(b.metrics, b.details);
}

// The nonce the corpus files use.
inline constexpr const char* kFuzzNonce = "f00dcafe";

inline void fuzz_channel(std::string_view in) {
  ChannelContents ch = parse_channel(in, kFuzzNonce);  // documented: never throws
  check(ch.records.size() <= 4096, "more than 4096 records");
  size_t total = 0;
  for (const auto& r : ch.records) {
    total += r.data.size();
    check(!r.name.empty(), "record without a name");
    check(ch.find(r.name) != nullptr, "find() misses a record");
  }
  check(total <= in.size(), "records hold more bytes than the stream");
  (void)ch.as_map();
  nlohmann::json problems = ch.problems;  // result.json cells[].channel_problems
  dump_like_result_json(problems);
}

// --- JSON documents (specs, result.json, imports) ---------------------------------------------

// Input: a whole document, as `run`, `doctor`, `compare` and `report` read a spec or result.json.
// Refused with a message of at most 1 KiB (it quotes at most 80 bytes of the input), or parsed
// into a value that copies and dumps (the copy is what overflowed the stack 150 000 deep).
inline void fuzz_json_document(std::string_view in) {
  nlohmann::json j;
  try {
    j = parse_json_document(in, "fuzz.json");
  } catch (const Error& e) {
    check(std::string_view(e.what()).size() <= 1024, "error message over 1 KiB");
    return;
  }
  const nlohmann::json copy = j;
  check(copy == j || j.dump() == copy.dump(), "a copy differs from the parsed document");
  dump_like_result_json(copy);
}

// --- registry --------------------------------------------------------------------------------

struct Target {
  const char* name;  // corpus directory tests/fuzz/corpus/<name>, executable fuzz_<name>
  void (*body)(std::string_view);
  size_t max_len;  // -max_len for libFuzzer
};

inline const std::vector<Target>& targets() {
  static const std::vector<Target> t = {
      {"tokenize", fuzz_tokenize, 64 << 10},
      {"cpulist", fuzz_cpulist, 4 << 10},
      {"analyze", fuzz_analyze, 64 << 10},
      {"gate", fuzz_gate, 64 << 10},
      {"cyclictest_json", fuzz_cyclictest_json, 64 << 10},
      {"cyclictest_text", fuzz_cyclictest_text, 64 << 10},
      {"oslat", fuzz_oslat, 64 << 10},
      {"stressng_yaml", fuzz_stressng_yaml, 64 << 10},
      {"stressng_text", fuzz_stressng_text, 64 << 10},
      {"yaml_subset", fuzz_yaml_subset, 64 << 10},
      {"vmstat_overhead", fuzz_vmstat_overhead, 64 << 10},
      {"console", fuzz_console, 1 << 20},
      {"trace", fuzz_trace, 64 << 10},
      {"channel", fuzz_channel, 64 << 10},
      {"json_document", fuzz_json_document, 1 << 20},
  };
  return t;
}

}  // namespace isolab::fuzz

// Defines the libFuzzer entry point of one target.
#define ISOLAB_FUZZ_TARGET(body)                                            \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { \
    body(std::string_view(reinterpret_cast<const char*>(data), size));      \
    return 0;                                                               \
  }
