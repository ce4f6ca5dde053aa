#include "compare/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "base/error.h"
#include "cmdline/cpulist.h"

namespace isolab {

namespace {

std::string num(double v, const char* f = "%.8g") {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string opt_bucket(const std::optional<std::int64_t>& v, std::uint64_t overflows) {
  if (v) return std::to_string(*v);
  return overflows > 0 ? "overflow" : "n/a";
}

nlohmann::json jnum(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json jopt(const std::optional<double>& v) { return v ? jnum(*v) : nlohmann::json(); }

nlohmann::json jbucket(const std::optional<std::int64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json stats_json(const SampleStats& s, const std::vector<double>& values) {
  return {{"n", s.n},
          {"median", jnum(s.median)},
          {"mean", jnum(s.mean)},
          {"stddev", jnum(s.stddev)},
          {"min", jnum(s.min)},
          {"max", jnum(s.max)},
          {"cv", jnum(s.cv)},
          {"values", values}};
}

std::string p_text(const MetricRow& r) {
  if (r.test.a.n == 0 || r.test.b.n == 0) return "n/a";
  return num(r.test.p_value(), "%.3g");
}

bool is_count(const MetricRow& r) { return r.kind == MetricKind::count && r.test.count; }

// "5-7" (the kernel's list format), "" for no CPUs.
std::string cpu_list_text(const std::vector<unsigned>& cpus) {
  if (cpus.empty()) return "";
  CpuSet set(*std::max_element(cpus.begin(), cpus.end()) + 1);
  for (unsigned cpu : cpus) set.set(cpu);
  return set.to_list();
}

// p for a summary line: 3 decimals ("0.008"), two significant digits below 0.001.
std::string p_short(double p) { return num(p, p >= 0.001 ? "%.3f" : "%.2g"); }

// "<wl>: <cause>" for "<wl>.noise.<cause>[_per_s]", else the name itself.
std::string count_label(const std::string& name) {
  const std::string mid = ".noise.";
  const std::size_t at = name.find(mid);
  if (at == std::string::npos || at == 0) return name;
  std::string cause = name.substr(at + mid.size());
  const std::string suffix = "_per_s";
  if (cause.size() > suffix.size() &&
      cause.compare(cause.size() - suffix.size(), suffix.size(), suffix) == 0) {
    cause.resize(cause.size() - suffix.size());
  }
  return name.substr(0, at) + ": " + cause;
}

bool moved(const MetricRow& r) {
  return r.verdict.verdict == Verdict::improved || r.verdict.verdict == Verdict::regressed;
}

SummaryLine count_summary(const MetricRow& r) {
  const CountTest& c = *r.test.count;
  const std::string cpus = cpu_list_text(r.cpus);
  const std::string where =
      cpus.empty() ? "" : (r.cpus.size() == 1 ? " on CPU " : " on CPUs ") + cpus;
  const bool is_new = c.mean_a == 0 && c.mean_b > 0;
  SummaryLine l;
  l.text = count_label(r.name) + where + ": " + format_count_amount(c.mean_a, r.unit) + " -> " +
           format_count_amount(c.mean_b, r.unit) + (is_new ? " (new)" : "") + ", " +
           verdict_name(r.verdict.verdict) + ", p = " + p_short(r.test.p_value());
  l.detail = {{"metric", r.name},
              {"kind", "count"},
              {"verdict", verdict_name(r.verdict.verdict)},
              {"text", l.text},
              {"label", count_label(r.name)},
              {"cpus", cpus},
              {"unit", r.unit},
              {"a", jnum(c.mean_a)},
              {"b", jnum(c.mean_b)},
              {"p", jnum(r.test.p_value())}};
  return l;
}

SummaryLine timing_summary(const MetricRow& r) {
  SummaryLine l;
  l.text = r.name + ": " + num(r.test.a.median, "%.6g") + " -> " + num(r.test.b.median, "%.6g") +
           (r.unit.empty() ? "" : " " + r.unit) + " (" + num(r.change_pct, "%+.2f") + "%), " +
           verdict_name(r.verdict.verdict) + ", p = " + p_short(r.test.p_value());
  l.detail = {{"metric", r.name},
              {"kind", "timing"},
              {"verdict", verdict_name(r.verdict.verdict)},
              {"text", l.text},
              {"unit", r.unit},
              {"a", jnum(r.test.a.median)},
              {"b", jnum(r.test.b.median)},
              {"change_pct", jnum(r.change_pct)},
              {"p", jnum(r.test.p_value())}};
  return l;
}

// The count metrics' rest line. When some count metric moved, it also says how many of the
// tested ones (not inconclusive) would be significant by chance alone with no real change:
// tested x alpha, the expected number of false positives of that many tests at level alpha
// (no multiplicity correction is applied: at 5 boots a side the smallest permutation p is
// 2/252 = 0.008, which a Bonferroni or Benjamini-Hochberg threshold over ~40 metrics would never
// reach, so the reader is told instead).
SummaryLine count_rest_summary(const Comparison& c) {
  std::size_t counts = 0, no_change = 0, inconclusive = 0, moved_counts = 0;
  for (const auto& r : c.metrics) {
    if (r.kind != MetricKind::count) continue;
    ++counts;
    no_change += r.verdict.verdict == Verdict::no_change;
    inconclusive += r.verdict.verdict == Verdict::inconclusive;
    moved_counts += moved(r);
  }
  const std::size_t tested = counts - inconclusive;
  const double by_chance = static_cast<double>(tested) * c.settings.alpha;
  SummaryLine l;
  if (counts == 0) {
    l.text = "no count metrics of the isolated CPUs in these runs";
  } else {
    l.text = "no significant change on the isolated CPUs in " + std::to_string(no_change) +
             " count metric" + (no_change == 1 ? "" : "s");
    if (inconclusive > 0) l.text += ", " + std::to_string(inconclusive) + " inconclusive";
    if (moved_counts > 0)
      l.text += "; of the " + std::to_string(tested) + " tested at alpha " +
                num(c.settings.alpha, "%.3g") + ", about " + num(by_chance, "%.1f") +
                " would be significant by chance alone: repeat a lone verdict near p = " +
                num(c.settings.alpha, "%.3g") + " before trusting it";
  }
  l.detail = {{"metric", ""},
              {"kind", "count"},
              {"verdict", verdict_name(Verdict::no_change)},
              {"text", l.text},
              {"no_change", no_change},
              {"inconclusive", inconclusive},
              {"tested", tested},
              {"expected_significant_by_chance", by_chance}};
  return l;
}

std::string pad(const std::string& s, std::size_t w, bool right = false) {
  // Width by code points, so "µs" lines up.
  std::size_t cps = 0;
  for (unsigned char ch : s) cps += (ch & 0xC0) != 0x80;
  if (cps >= w) return s;
  const std::string fill(w - cps, ' ');
  return right ? fill + s : s + fill;
}

std::string header_line(const Comparison& c) {
  auto side = [](const std::string& v, const std::string& run, const std::string& kernel) {
    std::string s = v;
    std::string extra;
    if (!run.empty()) extra += "run " + run;
    if (!kernel.empty()) extra += (extra.empty() ? "" : ", ") + kernel;
    if (!extra.empty()) s += " (" + extra + ")";
    return s;
  };
  return "A = " + side(c.variant_a, c.run_a, c.kernel_a) +
         "\nB = " + side(c.variant_b, c.run_b, c.kernel_b);
}

std::string settings_line(const Comparison& c) {
  const auto& s = c.settings;
  return "cells: A " + std::to_string(c.cells_a) + ", B " + std::to_string(c.cells_b) +
         "; two-sided Mann-Whitney U, alpha " + num(s.alpha, "%.3g") + ", min_samples " +
         std::to_string(s.min_samples) + ", threshold " + num(s.default_threshold_pct, "%.3g") +
         "% (or per-metric/noise floor); " + num(100 * s.confidence_level, "%.3g") +
         "% bootstrap CI of the median change, " + std::to_string(s.bootstrap_resamples) +
         " resamples, seed " + std::to_string(s.seed) + "; timing threshold under TCG at least " +
         num(s.tcg_timing_threshold_pct, "%.3g") +
         "%; count metrics: permutation test of per-boot means, floor " +
         format_count_amount(s.count_floor_for("1/s"), "1/s") + " per CPU or " +
         format_count_amount(s.count_floor_for("count"), "count") + " event(s)" +
         (c.stratified ? "; cells from " + std::to_string(c.hosts.size()) +
                             " hosts: the p and verdict columns are the stratified tests' "
                             "(van Elteren for timings, permutation within hosts for counts)"
                       : "");
}

std::string issue_line(const CellIssue& i) {
  std::string s = i.side + " " + i.cell_id + ": " + i.status;
  if (!i.failure_class.empty()) s += " (" + i.failure_class + ")";
  if (!i.reason.empty()) s += ": " + i.reason;
  if (i.kernel_failure && i.side == "B") s += " [kernel failure: counts as a regression]";
  return s;
}

// "B b-r1: cpu.bogo_ops: stress-ng: metrics untrustworthy: ..."
std::string untrusted_line(const UntrustedValues& u) {
  return u.side + " " + u.cell_id + ": " + u.metric + ": " + u.reason;
}

// The warnings B's build adds over A's, one line each; the ones in files B's series touches
// count against B (as a kernel test robot's report would be about them).
std::vector<std::string> warning_lines(const Comparison& c) {
  std::vector<std::string> out;
  if (!c.new_warnings) return out;
  for (const auto& n : *c.new_warnings)
    out.push_back(n.warning.describe() +
                  (n.in_touched_file ? "  [new in a file the series touches: counts against B]"
                                     : "  [new, in a file the series does not touch]"));
  return out;
}

std::string summary_line(const Comparison& c) {
  return std::to_string(c.count(Verdict::regressed)) + " regressed, " +
         std::to_string(c.count(Verdict::improved)) + " improved, " +
         std::to_string(c.count(Verdict::no_change)) + " no significant change, " +
         std::to_string(c.count(Verdict::inconclusive)) + " inconclusive; " +
         std::to_string(c.kernel_failures_b()) + " kernel failure(s) in B; " +
         std::to_string(c.new_warnings_in_touched_files()) +
         " new build warning(s) of B in files it touches; exit status " +
         std::to_string(compare_exit_status(c));
}

// Keeps the raw Markdown readable as plain text (mailing lists): only what breaks a table row
// or could become HTML is escaped.
std::string md_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') {
      out += "\\|";
    } else if (ch == '<') {
      out += "&lt;";
    } else if (ch == '>') {
      out += "&gt;";
    } else if (ch == '\n' || ch == '\r') {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out;
}

// md_escape, but the summary's "->" stays readable: a '>' inside a line starts no HTML tag and
// no block quote.
std::string md_escape_summary(const std::string& s) {
  std::string out = md_escape(s);
  for (std::size_t at = out.find("-&gt;"); at != std::string::npos; at = out.find("-&gt;", at)) {
    out.replace(at, 5, "->");
  }
  return out;
}

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not valid.
std::size_t utf8_len(const std::string& s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  std::size_t len;
  std::uint32_t cp;
  if (b < 0x80) return 1;
  if ((b & 0xE0) == 0xC0) {
    len = 2;
    cp = b & 0x1F;
  } else if ((b & 0xF0) == 0xE0) {
    len = 3;
    cp = b & 0x0F;
  } else if ((b & 0xF8) == 0xF0) {
    len = 4;
    cp = b & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  const bool overlong =
      (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
  const bool bad =
      overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF;
  return bad ? 0 : len;
}

}  // namespace

ReportFormat parse_report_format(const std::string& s) {
  if (s == "text") return ReportFormat::text;
  if (s == "json") return ReportFormat::json;
  if (s == "markdown" || s == "md") return ReportFormat::markdown;
  if (s == "junit") return ReportFormat::junit;
  throw Error("--format: unknown report format '" + s + "' (text, json, markdown, junit)");
}

std::vector<SummaryLine> summarize(const Comparison& c) {
  std::vector<SummaryLine> lines;
  for (const auto& r : c.metrics) {
    if (is_count(r) && moved(r)) lines.push_back(count_summary(r));
  }
  for (const auto& r : c.metrics) {
    if (!is_count(r) && moved(r)) lines.push_back(timing_summary(r));
  }
  if (c.new_warnings_in_touched_files() > 0)
    lines.push_back({std::to_string(c.new_warnings_in_touched_files()) +
                         " new build warning(s) of " + c.variant_b +
                         " in files its series touches: regressed (see build warnings)",
                     {{"new_build_warnings_in_touched_files", c.new_warnings_in_touched_files()},
                      {"verdict", "regressed"}}});
  lines.push_back(count_rest_summary(c));
  return lines;
}

namespace {

std::string format_count_change(const MetricRow& r) {
  const CountTest& c = *r.test.count;
  std::string s = (c.diff > 0 ? "+" : "") + format_count_amount(c.diff, r.unit);
  if (c.diff_ci) {
    s += " [" + num(c.diff_ci->low, "%.3g") + ", " + num(c.diff_ci->high, "%.3g") + "]";
  } else {
    s += " [CI n/a]";
  }
  if (std::isinf(c.relative_change)) return s + " (new)";
  return s + " (" + num(100 * c.relative_change, "%+.2f") + "%)";
}

}  // namespace

std::string format_change(const MetricRow& r) {
  if (is_count(r)) return format_count_change(r);
  if (!std::isfinite(r.change_pct)) return "n/a";
  std::string s = num(r.change_pct, "%+.2f") + "%";
  if (r.ci_low_pct && r.ci_high_pct) {
    s += " [" + num(*r.ci_low_pct, "%.1f") + ", " + num(*r.ci_high_pct, "%.1f") + "]";
  } else {
    s += " [CI n/a]";
  }
  return s;
}

// "3/3 PASS", "1/3 FAIL", "-" (no cell ran the check).
static std::string gate_cell(std::size_t pass, std::size_t total) {
  if (total == 0) return "-";
  return std::to_string(pass) + "/" + std::to_string(total) + (pass == total ? " PASS" : " FAIL");
}

namespace {

void timing_table_text(const Comparison& c, std::ostringstream& o) {
  std::size_t wname = 6, wunit = 4, rows = 0;
  for (const auto& r : c.metrics) {
    if (is_count(r)) continue;
    ++rows;
    wname = std::max(wname, r.name.size());
    wunit = std::max(wunit, r.unit.size());
  }
  if (rows == 0) return;
  const std::string ci_head = "change [" + num(100 * c.settings.confidence_level, "%.3g") + "% CI]";
  o << pad("metric", wname) << "  " << pad("unit", wunit) << "  " << pad("A median", 12, true)
    << "  " << pad("B median", 12, true) << "  " << pad(ci_head, 26) << "  " << pad("p", 8, true)
    << "  " << pad("nA", 3, true) << " " << pad("nB", 3, true) << "  "
    << "verdict\n";
  for (const auto& r : c.metrics) {
    if (is_count(r)) continue;
    o << pad(r.name, wname) << "  " << pad(r.unit, wunit) << "  "
      << pad(num(r.test.a.median), 12, true) << "  " << pad(num(r.test.b.median), 12, true) << "  "
      << pad(format_change(r), 26) << "  " << pad(p_text(r), 8, true) << "  "
      << pad(std::to_string(r.test.a.n), 3, true) << " " << pad(std::to_string(r.test.b.n), 3, true)
      << "  " << verdict_name(r.verdict.verdict) << "\n";
  }
}

void count_table_text(const Comparison& c, std::ostringstream& o) {
  std::size_t wname = 6, wunit = 4, wcpus = 4, rows = 0;
  for (const auto& r : c.metrics) {
    if (!is_count(r)) continue;
    ++rows;
    wname = std::max(wname, r.name.size());
    wunit = std::max(wunit, r.unit.size());
    wcpus = std::max(wcpus, cpu_list_text(r.cpus).size());
  }
  if (rows == 0) return;
  o << "\ncount metrics on the isolated CPUs (per-boot means; B-A with its "
    << num(100 * c.settings.confidence_level, "%.3g")
    << "% bootstrap CI; two-sided permutation test of the means):\n";
  o << pad("metric", wname) << "  " << pad("unit", wunit) << "  " << pad("CPUs", wcpus) << "  "
    << pad("A mean", 10, true) << "  " << pad("B mean", 10, true) << "  "
    << pad("B-A [CI] (change)", 34) << "  " << pad("p", 8, true) << "  " << pad("nA", 3, true)
    << " " << pad("nB", 3, true) << "  verdict\n";
  for (const auto& r : c.metrics) {
    if (!is_count(r)) continue;
    o << pad(r.name, wname) << "  " << pad(r.unit, wunit) << "  "
      << pad(cpu_list_text(r.cpus), wcpus) << "  "
      << pad(num(r.test.count->mean_a, "%.4g"), 10, true) << "  "
      << pad(num(r.test.count->mean_b, "%.4g"), 10, true) << "  " << pad(format_change(r), 34)
      << "  " << pad(p_text(r), 8, true) << "  " << pad(std::to_string(r.test.a.n), 3, true) << " "
      << pad(std::to_string(r.test.b.n), 3, true) << "  " << verdict_name(r.verdict.verdict)
      << "\n";
  }
}

// One line per cell with a max-latency trace, grouped per side:
//   "  before c0001-before-r0 latency: 1969 us, cyclictest-250 on CPU 1: preempt_schedule <
//    migrate_enable < rt_spin_unlock < madvise_cold_or_pageout_pte_range < ..."
// (the first kTopFrames frames of the switch-side stack, innermost first).
constexpr std::size_t kTopFrames = 8;

std::string latency_trace_line(const Comparison& c, const LatencyTraceRow& r) {
  std::string s = (r.side == 0 ? c.variant_a : c.variant_b) + " " + r.cell_id + " " + r.workload +
                  ": " + num(r.max_latency_us) + " us";
  if (!r.task.empty()) s += ", " + r.task;
  if (r.cpu) s += " on CPU " + std::to_string(*r.cpu);
  std::string frames;
  for (std::size_t i = 0; i < r.frames.size() && i < kTopFrames; ++i)
    frames += (i ? " < " : "") + r.frames[i];
  if (r.frames.size() > kTopFrames) frames += " < ...";
  return s + ": " + (frames.empty() ? "(no stack trace)" : frames);
}

void latency_traces_text(const Comparison& c, std::ostringstream& o) {
  if (c.latency_traces.empty()) return;
  o << "\nmax-latency traces (" << c.latency_traces.front().tracer
    << "; what the woken task's CPU ran until it switched, innermost first; informational):\n";
  for (int side : {0, 1}) {
    for (const auto& r : c.latency_traces)
      if (r.side == side) o << "  " << latency_trace_line(c, r) << "\n";
  }
}

}  // namespace

namespace {

// Per-host rows and the combined (stratified) line of every metric, when the cells came from
// two or more hosts.
void hosts_text(const Comparison& c, std::ostringstream& o) {
  if (!c.stratified) return;
  o << "\nhosts (the host is a blocking factor: tests within each host, combined by a stratified "
       "test):\n";
  for (std::size_t h = 0; h < c.hosts.size(); ++h) {
    const HostSummary& s = c.hosts[h];
    o << "  [" << h + 1 << "] " << s.uri << "  " << s.hostname << ", " << s.cpu_model
      << ", fingerprint " << s.fingerprint_sha256.substr(0, 12) << ", cells A " << s.cells_a
      << " B " << s.cells_b << "\n";
  }
  if (c.pooled_unlike_hosts) {
    o << "  POOLED (--pool-hosts): these hosts differ:\n";
    for (const auto& d : c.host_differences) o << "    - " << d << "\n";
  }
  o << "\nper host and combined:\n";
  for (const auto& r : c.metrics) {
    o << "  " << r.name << "\n";
    for (std::size_t h = 0; h < r.per_host.size(); ++h) {
      const HostMetricRow& hr = r.per_host[h];
      const bool count = hr.test.count.has_value();
      o << "    host [" << h + 1 << "] n=" << hr.test.a.n << "+" << hr.test.b.n << "  "
        << (count ? "mean" : "median") << " A " << num(count ? hr.test.a.mean : hr.test.a.median)
        << " B " << num(count ? hr.test.b.mean : hr.test.b.median) << "  change "
        << num(hr.change_pct, "%+.2f") << "%  p " << p_short(hr.test.p_value()) << "  "
        << verdict_name(hr.verdict.verdict) << "\n";
    }
    if (r.test.stratified)
      o << "    combined n=" << r.test.a.n << "+" << r.test.b.n << " over "
        << r.test.stratified->strata_used << " host(s): "
        << (r.kind == MetricKind::count ? "stratified permutation p " : "van Elteren p ")
        << p_short(r.test.stratified->p) << " (smallest attainable "
        << p_short(r.test.stratified->min_p) << ")  " << verdict_name(r.verdict.verdict) << "\n";
  }
}

nlohmann::json hosts_json(const Comparison& c) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& s : c.hosts)
    hosts.push_back({{"uri", s.uri},
                     {"hostname", s.hostname},
                     {"cpu_model", s.cpu_model},
                     {"fingerprint_sha256", s.fingerprint_sha256},
                     {"cells_a", s.cells_a},
                     {"cells_b", s.cells_b}});
  return hosts;
}

nlohmann::json per_host_json(const MetricRow& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& hr : r.per_host)
    out.push_back(
        {{"host", hr.host},
         {"a", stats_json(hr.test.a, {})},
         {"b", stats_json(hr.test.b, {})},
         {"change_pct", jnum(hr.change_pct)},
         {"p_value", (hr.test.a.n && hr.test.b.n) ? jnum(hr.test.p_value()) : nlohmann::json()},
         {"verdict", verdict_name(hr.verdict.verdict)},
         {"reason", hr.verdict.reason}});
  return out;
}

}  // namespace

std::string render_text(const Comparison& c) {
  std::ostringstream o;
  o << "isolab compare" << (c.spec_name.empty() ? "" : ": " + c.spec_name) << "\n";
  o << header_line(c) << "\n";
  o << "summary:\n";
  for (const auto& l : summarize(c)) o << "  " << l.text << "\n";
  o << settings_line(c) << "\n";
  if (c.forced) {
    o << "FORCED: these runs are not comparable; the comparison was forced. Differences:\n";
    for (const auto& d : c.differences) o << "  - " << d << "\n";
  }
  o << "\n";
  timing_table_text(c, o);
  count_table_text(c, o);
  if (c.metrics.empty()) o << "(no metrics)\n";
  hosts_text(c, o);
  bool any_reason = false;
  for (const auto& r : c.metrics) {
    // A "no significant change" needs no explanation unless its test was significant.
    const bool significant = r.test.a.n && r.test.b.n && r.test.p_value() < c.settings.alpha;
    if (r.verdict.verdict == Verdict::no_change && !significant) continue;
    if (!any_reason) o << "\nwhy:\n";
    any_reason = true;
    o << "  " << r.name << ": " << verdict_name(r.verdict.verdict) << ": " << r.verdict.reason
      << "\n";
  }
  if (!c.tails.empty()) {
    o << "\ntails of merged histograms (nearest rank; informational, not tested):\n";
    for (const auto& t : c.tails) {
      o << "  " << t.histogram << " (" << t.unit << "): p99 A "
        << opt_bucket(t.a.p99, t.a.overflows) << " B " << opt_bucket(t.b.p99, t.b.overflows)
        << "; p99.9 A " << opt_bucket(t.a.p99_9, t.a.overflows) << " B "
        << opt_bucket(t.b.p99_9, t.b.overflows) << "; max A " << opt_bucket(t.a.max, t.a.overflows)
        << " B " << opt_bucket(t.b.max, t.b.overflows) << "; samples A " << t.a.samples << " B "
        << t.b.samples << "\n";
    }
  }
  latency_traces_text(c, o);
  if (!c.gate.empty()) {
    o << "\nisolation gate (cells passing / cells checked):\n";
    o << "  " << std::left << std::setw(28) << "check" << std::setw(10) << "A"
      << "B\n";
    for (const auto& g : c.gate)
      o << "  " << std::left << std::setw(28) << g.check << std::setw(10)
        << gate_cell(g.a_pass, g.a_total) << gate_cell(g.b_pass, g.b_total) << "\n";
  }
  if (!c.issues.empty()) {
    o << "\ncells that did not count:\n";
    for (const auto& i : c.issues) {
      o << "  " << issue_line(i) << "\n";
      for (const auto& g : i.gate_failures) o << "    gate: " << g << "\n";
    }
  }
  if (!c.untrusted.empty()) {
    o << "\nvalues left out of the comparison (untrustworthy):\n";
    for (const auto& u : c.untrusted) o << "  " << untrusted_line(u) << "\n";
  }
  if (c.new_warnings) {
    o << "\nbuild warnings B adds over A (matched by file, class and message): "
      << c.new_warnings->size() << "\n";
    for (const auto& l : warning_lines(c)) o << "  " << l << "\n";
  }
  o << "\n" << summary_line(c) << "\n";
  return o.str();
}

namespace {

nlohmann::json count_json(const MetricRow& r, const CompareSettings& s) {
  const CountTest& c = *r.test.count;
  return {{"mean_a", jnum(c.mean_a)},
          {"mean_b", jnum(c.mean_b)},
          {"diff", jnum(c.diff)},
          {"diff_ci_low", c.diff_ci ? jnum(c.diff_ci->low) : nlohmann::json()},
          {"diff_ci_high", c.diff_ci ? jnum(c.diff_ci->high) : nlohmann::json()},
          {"relative_change_pct", jnum(100 * c.relative_change)},
          {"new", c.mean_a == 0 && c.mean_b > 0},
          {"min_p", jnum(c.permutation.min_p)},
          {"reassignments", c.permutation.reassignments},
          {"floor", jnum(s.count_floor_for(r.unit))}};
}

}  // namespace

nlohmann::json render_json(const Comparison& c) {
  nlohmann::json j;
  j["schema"] = "isolab-comparison";
  j["version"] = 1;
  j["spec_name"] = c.spec_name;
  j["run_a"] = c.run_a;
  j["run_b"] = c.run_b;
  j["variant_a"] = c.variant_a;
  j["variant_b"] = c.variant_b;
  j["kernel_a"] = c.kernel_a;
  j["kernel_b"] = c.kernel_b;
  j["cells_a"] = c.cells_a;
  j["cells_b"] = c.cells_b;
  j["forced"] = c.forced;
  j["differences"] = c.differences;
  j["settings"] = settings_to_json(c.settings);
  j["stratified"] = c.stratified;
  j["hosts"] = hosts_json(c);
  j["pooled_unlike_hosts"] = c.pooled_unlike_hosts;
  j["host_differences"] = c.host_differences;
  j["metrics"] = nlohmann::json::array();
  for (const auto& r : c.metrics) {
    nlohmann::json m = {
        {"name", r.name},
        {"unit", r.unit},
        {"better", r.better},
        {"kind", metric_kind_name(r.kind)},
        {"cpus", cpu_list_text(r.cpus)},
        {"tcg", r.tcg},
        {"a", stats_json(r.test.a, r.a_values)},
        {"b", stats_json(r.test.b, r.b_values)},
        {"change_pct", jnum(r.change_pct)},
        {"ci_low_pct", jopt(r.ci_low_pct)},
        {"ci_high_pct", jopt(r.ci_high_pct)},
        {"test", is_count(r) ? "permutation-mean" : "mann-whitney"},
        {"p_value", (r.test.a.n && r.test.b.n) ? jnum(r.test.p_value()) : nlohmann::json()},
        {"p_exact", r.test.p_exact()},
        {"permutation_p", jopt(r.test.permutation_p)},
        {"threshold_pct", jnum(r.verdict.threshold_pct)},
        {"verdict", verdict_name(r.verdict.verdict)},
        {"reason", r.verdict.reason}};
    if (is_count(r)) m["count"] = count_json(r, c.settings);
    if (r.test.stratified) {
      m["test"] = is_count(r) ? "stratified-permutation-mean" : "stratified-van-elteren";
      m["stratified"] = {{"p", jnum(r.test.stratified->p)},
                         {"min_p", jnum(r.test.stratified->min_p)},
                         {"exact", r.test.stratified->exact},
                         {"reassignments", r.test.stratified->reassignments},
                         {"strata", r.test.stratified->strata_used}};
      m["per_host"] = per_host_json(r);
    }
    j["metrics"].push_back(std::move(m));
  }
  j["tails"] = nlohmann::json::array();
  for (const auto& t : c.tails) {
    auto tail = [](const HistogramTail& h) {
      return nlohmann::json{{"samples", h.samples},
                            {"overflows", h.overflows},
                            {"p99", jbucket(h.p99)},
                            {"p99_9", jbucket(h.p99_9)},
                            {"max", jbucket(h.max)}};
    };
    j["tails"].push_back(
        {{"histogram", t.histogram}, {"unit", t.unit}, {"a", tail(t.a)}, {"b", tail(t.b)}});
  }
  j["latency_traces"] = nlohmann::json::array();
  for (const auto& r : c.latency_traces)
    j["latency_traces"].push_back({{"variant", r.side == 0 ? c.variant_a : c.variant_b},
                                   {"side", r.side == 0 ? "A" : "B"},
                                   {"cell_id", r.cell_id},
                                   {"workload", r.workload},
                                   {"tracer", r.tracer},
                                   {"max_latency_us", jnum(r.max_latency_us)},
                                   {"task", r.task},
                                   {"cpu", r.cpu ? nlohmann::json(*r.cpu) : nlohmann::json()},
                                   {"frames", r.frames},
                                   {"file", r.file}});
  j["gate"] = nlohmann::json::array();
  for (const auto& g : c.gate)
    j["gate"].push_back({{"check", g.check},
                         {"a_pass", g.a_pass},
                         {"a_total", g.a_total},
                         {"b_pass", g.b_pass},
                         {"b_total", g.b_total}});
  j["issues"] = nlohmann::json::array();
  for (const auto& i : c.issues) {
    j["issues"].push_back(
        {{"side", i.side},
         {"variant", i.variant},
         {"cell_id", i.cell_id},
         {"status", i.status},
         {"failure_class",
          i.failure_class.empty() ? nlohmann::json() : nlohmann::json(i.failure_class)},
         {"reason", i.reason},
         {"gate_failures", i.gate_failures},
         {"kernel_failure", i.kernel_failure}});
  }
  j["untrusted"] = nlohmann::json::array();
  for (const auto& u : c.untrusted)
    j["untrusted"].push_back(
        {{"side", u.side}, {"cell_id", u.cell_id}, {"metric", u.metric}, {"reason", u.reason}});
  if (c.new_warnings) {
    j["new_build_warnings"] = nlohmann::json::array();
    for (const auto& n : *c.new_warnings) {
      nlohmann::json w = build_warning_to_json(n.warning);
      w["in_touched_file"] = n.in_touched_file;
      j["new_build_warnings"].push_back(w);
    }
  } else {
    j["new_build_warnings"] = nullptr;
  }
  j["summary"] = {{"improved", c.count(Verdict::improved)},
                  {"regressed", c.count(Verdict::regressed)},
                  {"no_change", c.count(Verdict::no_change)},
                  {"inconclusive", c.count(Verdict::inconclusive)},
                  {"kernel_failures_b", c.kernel_failures_b()},
                  {"new_warnings_in_touched_files", c.new_warnings_in_touched_files()},
                  {"regressions", c.regressions()},
                  {"exit_status", compare_exit_status(c)},
                  {"lines", nlohmann::json::array()}};
  for (const auto& l : summarize(c)) j["summary"]["lines"].push_back(l.detail);
  return j;
}

std::string render_markdown(const Comparison& c) {
  std::ostringstream o;
  o << "**isolab compare" << (c.spec_name.empty() ? "" : ": " + md_escape(c.spec_name)) << "**\n\n";
  o << "- A = " << md_escape(c.variant_a)
    << (c.kernel_a.empty() ? "" : " (" + md_escape(c.kernel_a) + ")")
    << (c.run_a.empty() ? "" : ", run " + md_escape(c.run_a)) << "\n";
  o << "- B = " << md_escape(c.variant_b)
    << (c.kernel_b.empty() ? "" : " (" + md_escape(c.kernel_b) + ")")
    << (c.run_b.empty() ? "" : ", run " + md_escape(c.run_b)) << "\n";
  o << "\n**Summary**\n\n";
  for (const auto& l : summarize(c)) o << "- " << md_escape_summary(l.text) << "\n";
  o << "\n- " << md_escape(settings_line(c)) << "\n";
  if (c.forced) {
    o << "\n**FORCED comparison of unlike runs.** Differences:\n\n";
    for (const auto& d : c.differences) o << "- " << md_escape(d) << "\n";
  }
  auto verdict_md = [](const MetricRow& r) {
    return r.verdict.verdict == Verdict::regressed ? std::string("**regressed**")
                                                   : std::string(verdict_name(r.verdict.verdict));
  };
  o << "\n| metric | unit | A median | B median | change [CI] | p | nA | nB | verdict |\n";
  o << "|---|---|---:|---:|---|---:|---:|---:|---|\n";
  for (const auto& r : c.metrics) {
    if (is_count(r)) continue;
    o << "| " << md_escape(r.name) << " | " << md_escape(r.unit) << " | " << num(r.test.a.median)
      << " | " << num(r.test.b.median) << " | " << md_escape(format_change(r)) << " | " << p_text(r)
      << " | " << r.test.a.n << " | " << r.test.b.n << " | " << verdict_md(r) << " |\n";
  }
  if (std::any_of(c.metrics.begin(), c.metrics.end(), is_count)) {
    o << "\nCount metrics on the isolated CPUs (per-boot means, permutation test):\n\n";
    o << "| metric | unit | CPUs | A mean | B mean | B-A [CI] (change) | p | nA | nB | verdict |\n";
    o << "|---|---|---|---:|---:|---|---:|---:|---:|---|\n";
    for (const auto& r : c.metrics) {
      if (!is_count(r)) continue;
      o << "| " << md_escape(r.name) << " | " << md_escape(r.unit) << " | " << cpu_list_text(r.cpus)
        << " | " << num(r.test.count->mean_a, "%.4g") << " | " << num(r.test.count->mean_b, "%.4g")
        << " | " << md_escape(format_change(r)) << " | " << p_text(r) << " | " << r.test.a.n
        << " | " << r.test.b.n << " | " << verdict_md(r) << " |\n";
    }
  }
  if (!c.tails.empty()) {
    o << "\nTails of merged histograms (nearest rank, informational):\n\n";
    o << "| histogram | unit | p99 A | p99 B | p99.9 A | p99.9 B | max A | max B |\n";
    o << "|---|---|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& t : c.tails) {
      o << "| " << md_escape(t.histogram) << " | " << md_escape(t.unit) << " | "
        << opt_bucket(t.a.p99, t.a.overflows) << " | " << opt_bucket(t.b.p99, t.b.overflows)
        << " | " << opt_bucket(t.a.p99_9, t.a.overflows) << " | "
        << opt_bucket(t.b.p99_9, t.b.overflows) << " | " << opt_bucket(t.a.max, t.a.overflows)
        << " | " << opt_bucket(t.b.max, t.b.overflows) << " |\n";
    }
  }
  if (!c.latency_traces.empty()) {
    o << "\nMax-latency traces (" << md_escape(c.latency_traces.front().tracer)
      << ", switch-side stack, innermost first; informational):\n\n";
    for (const auto& r : c.latency_traces) o << "- " << md_escape(latency_trace_line(c, r)) << "\n";
  }
  if (!c.gate.empty()) {
    o << "\nIsolation gate (cells passing / cells checked):\n\n| check | A | B |\n|---|---|---|\n";
    for (const auto& g : c.gate)
      o << "| " << md_escape(g.check) << " | " << gate_cell(g.a_pass, g.a_total) << " | "
        << gate_cell(g.b_pass, g.b_total) << " |\n";
  }
  if (!c.issues.empty()) {
    o << "\nCells that did not count:\n\n";
    for (const auto& i : c.issues) {
      o << "- " << md_escape(issue_line(i)) << "\n";
      for (const auto& g : i.gate_failures) o << "  - gate: " << md_escape(g) << "\n";
    }
  }
  if (!c.untrusted.empty()) {
    o << "\nValues left out of the comparison (untrustworthy):\n\n";
    for (const auto& u : c.untrusted) o << "- " << md_escape(untrusted_line(u)) << "\n";
  }
  if (c.new_warnings) {
    o << "\nBuild warnings B adds over A: " << c.new_warnings->size() << "\n\n";
    for (const auto& l : warning_lines(c)) o << "- `" << md_escape(l) << "`\n";
  }
  o << "\n" << md_escape(summary_line(c)) << "\n";
  return o.str();
}

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto ch = static_cast<unsigned char>(s[i]);
    if (ch >= 0x80) {
      const std::size_t len = utf8_len(s, i);
      if (len == 0) {
        out += '?';
        ++i;
      } else {
        out.append(s, i, len);
        i += len;
      }
      continue;
    }
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\t':
      case '\n':
      case '\r':
        out += static_cast<char>(ch);
        break;
      default:
        out += (ch < 0x20 || ch == 0x7F) ? '?' : static_cast<char>(ch);
    }
    ++i;
  }
  return out;
}

namespace {

// One testcase for the warnings B adds, failed when one is in a file B's series touches; none
// when either build recorded no warnings.
void junit_build_warnings(const Comparison& c, const std::string& classname,
                          std::ostringstream& o) {
  if (!c.new_warnings) return;
  o << "    <testcase classname=\"" << xml_escape(classname) << "\" name=\"build-warnings."
    << xml_escape(c.variant_b) << "\" time=\"0\"";
  if (c.new_warnings_in_touched_files() == 0) {
    o << "/>\n";
    return;
  }
  std::string detail;
  for (const auto& l : warning_lines(c)) detail += l + "\n";
  o << ">\n      <failure type=\"new-build-warning\" message=\""
    << xml_escape(std::to_string(c.new_warnings_in_touched_files()) +
                  " new build warning(s) in files the series touches")
    << "\">" << xml_escape(detail) << "</failure>\n    </testcase>\n";
}

}  // namespace

std::string render_junit(const Comparison& c) {
  const std::string classname =
      "isolab.compare." + (c.spec_name.empty() ? std::string("run") : c.spec_name);
  // + kernel-health, + build-warnings when both builds recorded their warnings
  const std::size_t tests = c.metrics.size() + 1 + (c.new_warnings ? 1 : 0);
  const std::size_t failures = c.count(Verdict::regressed) + (c.kernel_failures_b() > 0 ? 1 : 0) +
                               (c.new_warnings_in_touched_files() > 0 ? 1 : 0);
  const std::size_t skipped = c.count(Verdict::inconclusive);
  const std::string suite = (c.spec_name.empty() ? std::string("isolab") : c.spec_name) + ": " +
                            c.variant_a + " vs " + c.variant_b;
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o << "<testsuites name=\"isolab compare\" tests=\"" << tests << "\" failures=\"" << failures
    << "\" errors=\"0\" time=\"0\">\n";
  o << "  <testsuite name=\"" << xml_escape(suite) << "\" tests=\"" << tests << "\" failures=\""
    << failures << "\" errors=\"0\" skipped=\"" << skipped << "\" time=\"0\">\n";
  o << "    <properties>\n";
  auto prop = [&](const std::string& n, const std::string& v) {
    o << "      <property name=\"" << xml_escape(n) << "\" value=\"" << xml_escape(v) << "\"/>\n";
  };
  prop("run_a", c.run_a);
  prop("run_b", c.run_b);
  prop("variant_a", c.variant_a);
  prop("variant_b", c.variant_b);
  prop("kernel_a", c.kernel_a);
  prop("kernel_b", c.kernel_b);
  prop("cells_a", std::to_string(c.cells_a));
  prop("cells_b", std::to_string(c.cells_b));
  prop("alpha", num(c.settings.alpha, "%.3g"));
  prop("min_samples", std::to_string(c.settings.min_samples));
  prop("forced", c.forced ? "true" : "false");
  for (std::size_t k = 0; k < c.differences.size(); ++k) {
    prop("difference." + std::to_string(k), c.differences[k]);
  }
  o << "    </properties>\n";
  for (const auto& r : c.metrics) {
    o << "    <testcase classname=\"" << xml_escape(classname) << "\" name=\"" << xml_escape(r.name)
      << "\" time=\"0\"";
    const std::string msg = std::string(verdict_name(r.verdict.verdict)) + ": " + format_change(r) +
                            ", " + r.verdict.reason;
    const char* stat = is_count(r) ? "mean" : "median";
    const double va = is_count(r) ? r.test.count->mean_a : r.test.a.median;
    const double vb = is_count(r) ? r.test.count->mean_b : r.test.b.median;
    const std::string detail = std::string("A ") + stat + " " + num(va) + " " + r.unit +
                               " (n=" + std::to_string(r.test.a.n) + "), B " + stat + " " +
                               num(vb) + " " + r.unit + " (n=" + std::to_string(r.test.b.n) +
                               "), p=" + p_text(r) + ", better " + r.better;
    if (r.verdict.verdict == Verdict::regressed) {
      o << ">\n      <failure type=\"regression\" message=\"" << xml_escape(msg) << "\">"
        << xml_escape(detail) << "</failure>\n    </testcase>\n";
    } else if (r.verdict.verdict == Verdict::inconclusive) {
      o << ">\n      <skipped message=\"" << xml_escape(msg) << "\"/>\n    </testcase>\n";
    } else {
      o << ">\n      <system-out>" << xml_escape(msg + "; " + detail) << "</system-out>\n"
        << "    </testcase>\n";
    }
  }
  o << "    <testcase classname=\"" << xml_escape(classname) << "\" name=\"kernel-health."
    << xml_escape(c.variant_b) << "\" time=\"0\"";
  if (c.kernel_failures_b() > 0) {
    std::string detail;
    for (const auto& i : c.issues) {
      if (i.side == "B" && i.kernel_failure) detail += issue_line(i) + "\n";
    }
    o << ">\n      <failure type=\"kernel-failure\" message=\""
      << xml_escape(std::to_string(c.kernel_failures_b()) + " kernel failure(s) in B cells")
      << "\">" << xml_escape(detail) << "</failure>\n    </testcase>\n";
  } else {
    o << "/>\n";
  }
  junit_build_warnings(c, classname, o);
  o << "    <system-out>" << xml_escape(render_text(c)) << "</system-out>\n";
  o << "  </testsuite>\n</testsuites>\n";
  return o.str();
}

std::string render(const Comparison& c, ReportFormat f) {
  switch (f) {
    case ReportFormat::text:
      return render_text(c);
    case ReportFormat::json:
      return render_json(c).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    case ReportFormat::markdown:
      return render_markdown(c);
    case ReportFormat::junit:
      break;
  }
  return render_junit(c);
}

}  // namespace isolab
