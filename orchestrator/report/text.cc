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

bool is_count(const MetricRow& r) { return r.kind == MetricKind::count && r.test.count; }
bool is_instructions(const MetricRow& r) {
  return r.kind == MetricKind::instructions && r.test.count;
}

const char* role_name(const MetricRow& r) { return r.primary ? "primary" : "secondary"; }

// The p a row's verdict rests on: Holm's (primary) or the family-wise p (secondary) when
// computed, else the row's own one-sided (primary) or two-sided p.
double decisive_p(const MetricRow& r) {
  if (r.test.family_p) return *r.test.family_p;
  return r.primary && r.test.one_sided ? r.test.one_sided->p : r.test.p_value();
}

// Its name in summary lines.
std::string decisive_p_name(const MetricRow& r) {
  if (r.primary) return r.test.family_p ? "Holm p" : "one-sided p";
  return r.test.family_p ? "family-wise p" : "p";
}

bool has_both(const MetricRow& r) { return r.test.a.n > 0 && r.test.b.n > 0; }

std::string p_text(const MetricRow& r) {
  if (!has_both(r)) return "n/a";
  return num(r.test.p_value(), "%.3g");
}

std::string adjusted_p_text(const MetricRow& r) {
  if (!has_both(r) || !r.test.family_p) return "n/a";
  return num(*r.test.family_p, "%.3g");
}

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

std::string where_text(const MetricRow& r) {
  const std::string cpus = cpu_list_text(r.cpus);
  return cpus.empty() ? "" : (r.cpus.size() == 1 ? " on CPU " : " on CPUs ") + cpus;
}

std::string verdict_clause(const MetricRow& r) {
  std::string s = std::string(", ") + verdict_name(r.verdict.verdict);
  if (has_both(r)) s += ", " + decisive_p_name(r) + " = " + p_short(decisive_p(r));
  return s;
}

SummaryLine count_summary(const MetricRow& r) {
  const CountTest& c = *r.test.count;
  const bool is_new = c.mean_a == 0 && c.mean_b > 0;
  SummaryLine l;
  l.text = std::string(role_name(r)) + ": " + count_label(r.metric) + where_text(r) + ": " +
           format_count_amount(c.mean_a, r.unit) + " -> " + format_count_amount(c.mean_b, r.unit) +
           (is_new ? " (new)" : "") + verdict_clause(r);
  l.detail = {{"metric", r.name},
              {"kind", "count"},
              {"role", role_name(r)},
              {"verdict", verdict_name(r.verdict.verdict)},
              {"text", l.text},
              {"label", count_label(r.metric)},
              {"cpus", cpu_list_text(r.cpus)},
              {"unit", r.unit},
              {"a", jnum(c.mean_a)},
              {"b", jnum(c.mean_b)},
              {"p", jnum(decisive_p(r))},
              {"p_name", decisive_p_name(r)}};
  return l;
}

// A timing (medians) or instruction (means) row.
SummaryLine value_summary(const MetricRow& r) {
  const bool means = r.kind == MetricKind::instructions;
  const double a = means ? r.test.a.mean : r.test.a.median;
  const double b = means ? r.test.b.mean : r.test.b.median;
  SummaryLine l;
  l.text = std::string(role_name(r)) + ": " + r.name + ": " + num(a, "%.6g") + " -> " +
           num(b, "%.6g") + (r.unit.empty() ? "" : " " + r.unit) + " (" +
           num(r.change_pct, "%+.2f") + "%)" + verdict_clause(r);
  l.detail = {{"metric", r.name},
              {"kind", metric_kind_name(r.kind)},
              {"role", role_name(r)},
              {"verdict", verdict_name(r.verdict.verdict)},
              {"text", l.text},
              {"unit", r.unit},
              {"a", jnum(a)},
              {"b", jnum(b)},
              {"change_pct", jnum(r.change_pct)},
              {"p", jnum(decisive_p(r))},
              {"p_name", decisive_p_name(r)}};
  return l;
}

SummaryLine row_summary(const MetricRow& r) {
  return is_count(r) ? count_summary(r) : value_summary(r);
}

std::size_t secondary_rows(const Comparison& c) {
  return static_cast<std::size_t>(std::count_if(c.metrics.begin(), c.metrics.end(),
                                                [](const MetricRow& r) { return !r.primary; }));
}

// The first line: what the exit status rests on, and the exit status.
SummaryLine basis_summary(const Comparison& c) {
  std::string rows;
  std::vector<std::string> names;
  for (const auto& r : c.metrics)
    if (r.primary) {
      rows += (rows.empty() ? "" : ", ") + r.name + " (" +
              (r.declared->higher_is_bad ? "higher" : "lower") + " is bad)";
      names.push_back(r.name);
    }
  const std::string failures =
      "failures counted against B (kernel failures A does not have, systematic isolation-gate "
      "failures, new build warnings in files B's series touches)";
  SummaryLine l;
  l.text = names.empty()
               ? "exit status " + std::to_string(compare_exit_status(c)) +
                     ": no primary metric declared (spec compare.primary or --primary), so it "
                     "rests on " +
                     failures + " only; " + std::to_string(secondary_rows(c)) +
                     " secondary metric rows are reported and never set it"
               : "exit status " + std::to_string(compare_exit_status(c)) + ": rests on " +
                     std::to_string(names.size()) + " primary metric" +
                     (names.size() == 1 ? "" : "s") + " (one-sided, Holm at alpha " +
                     num(c.settings.alpha, "%.3g") + "): " + rows + ", and on " + failures + "; " +
                     std::to_string(secondary_rows(c)) +
                     " secondary metric rows are reported and never set it";
  l.detail = {{"kind", "basis"},
              {"text", l.text},
              {"primary", names},
              {"primary_origin", c.settings.primary_origin},
              {"secondary", secondary_rows(c)},
              {"exit_status", compare_exit_status(c)},
              {"verdict", compare_exit_status(c) ? "regressed" : "no regression"}};
  return l;
}

// Kernel-failure classes, gate checks B failed, new build warnings and metrics missing in B.
void failure_summaries(const Comparison& c, std::vector<SummaryLine>& lines) {
  for (const auto& f : c.failures) {
    const std::string verdict = f.against_b ? "regressed" : "not counted against B";
    lines.push_back({"kernel failure " + f.failure_class + ": " + f.reason + ": " + verdict,
                     {{"kind", "failure"},
                      {"failure_class", f.failure_class},
                      {"verdict", verdict},
                      {"a", f.a_cells},
                      {"a_total", f.a_total},
                      {"b", f.b_cells},
                      {"b_total", f.b_total},
                      {"as_rates", f.as_rates},
                      {"p", f.p}}});
    lines.back().detail["text"] = lines.back().text;
  }
  for (const auto& g : c.gate) {
    if (g.reason.empty()) continue;
    const std::string verdict = g.against_b ? "regressed" : "not counted against B";
    lines.push_back({"isolation gate " + g.check + ": " + g.reason + ": " + verdict,
                     {{"kind", "gate"}, {"check", g.check}, {"verdict", verdict}, {"p", g.p}}});
    lines.back().detail["text"] = lines.back().text;
  }
  if (c.new_warnings_in_touched_files() > 0)
    lines.push_back({std::to_string(c.new_warnings_in_touched_files()) +
                         " new build warning(s) of " + c.variant_b +
                         " in files its series touches: regressed (see build warnings)",
                     {{"kind", "build-warnings"},
                      {"new_build_warnings_in_touched_files", c.new_warnings_in_touched_files()},
                      {"verdict", "regressed"}}});
  std::string missing;
  nlohmann::json names = nlohmann::json::array();
  for (const MetricRow* r : c.missing_more_in_b()) {
    missing += (missing.empty() ? "" : ", ") + r->name + " (B " + std::to_string(r->missing_b) +
               ", A " + std::to_string(r->missing_a) + ")";
    names.push_back(r->name);
  }
  if (!missing.empty())
    lines.push_back({"missing in more B boots than A boots (not an exit by itself): " + missing,
                     {{"kind", "missing"}, {"metrics", names}, {"verdict", "flagged"}}});
}

// The closing line: the secondary rows that did not move, and how their p was adjusted.
SummaryLine secondary_rest_summary(const Comparison& c) {
  std::size_t rows = 0, no_change = 0, inconclusive = 0, counts = 0;
  for (const auto& r : c.metrics) {
    if (r.primary) continue;
    ++rows;
    counts += r.kind == MetricKind::count;
    no_change += r.verdict.verdict == Verdict::no_change;
    inconclusive += r.verdict.verdict == Verdict::inconclusive;
  }
  SummaryLine l;
  if (rows == 0) {
    l.text = "secondary: no metric rows in these runs";
  } else {
    l.text = "secondary: no significant change in " + std::to_string(no_change) + " of " +
             std::to_string(rows) + " metric rows (" + std::to_string(counts) +
             " of them counts on the isolated CPUs), " + std::to_string(inconclusive) +
             " inconclusive";
    if (c.family.relabellings > 0)
      l.text += "; family-wise p by Westfall-Young min-P over " +
                std::to_string(c.family.relabellings) +
                (c.family.exact ? " relabellings of the boots (all of them)"
                                : " relabellings of the boots (a seeded sample)");
  }
  l.detail = {{"metric", ""},
              {"kind", "secondary"},
              {"role", "secondary"},
              {"verdict", verdict_name(Verdict::no_change)},
              {"text", l.text},
              {"rows", rows},
              {"no_change", no_change},
              {"inconclusive", inconclusive},
              {"relabellings", c.family.relabellings},
              {"exact", c.family.exact}};
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
  std::string family = c.family.relabellings > 0
                           ? std::to_string(c.family.relabellings) + " relabellings of the boots"
                           : "relabellings of the boots";
  return "cells: A " + std::to_string(c.cells_a) + ", B " + std::to_string(c.cells_b) + "; alpha " +
         num(s.alpha, "%.3g") + ", min_samples " + std::to_string(s.min_samples) +
         "; exact tests (timings: midrank permutation; counts and instructions: permutation of "
         "per-boot means); primary metrics one-sided in the bad direction with Holm's step-down, "
         "secondary two-sided with Westfall-Young min-P over " +
         family + "; " + num(100 * s.confidence_level, "%.3g") +
         "% intervals by inverting the tests, 'no significant change' only inside +-threshold "
         "(counts: +-max(floor, threshold x A)); threshold " +
         num(s.default_threshold_pct, "%.3g") +
         "% (or per-metric/noise floor), timings under "
         "TCG at least " +
         num(s.tcg_timing_threshold_pct, "%.3g") + "%, instructions max(own, " +
         num(s.instructions_threshold_pct, "%.3g") + "%, " + num(s.instructions_cv_factor, "%.3g") +
         " x CV of A); count floor " + format_count_amount(s.count_floor_for("1/s"), "1/s") +
         " per CPU or " + format_count_amount(s.count_floor_for("count"), "count") +
         " event(s); seed " + std::to_string(s.seed) +
         (c.stratified ? "; cells from " + std::to_string(c.hosts.size()) +
                             " hosts: the p and verdict columns are the stratified tests' "
                             "(van Elteren for timings, permutation within hosts otherwise)"
                       : "");
}

std::string issue_line(const CellIssue& i) {
  std::string s = i.side + " " + i.cell_id + ": " + i.status;
  if (!i.failure_class.empty()) s += " (" + i.failure_class + ")";
  if (!i.reason.empty()) s += ": " + i.reason;
  if (i.kernel_failure && i.side == "B")
    s += i.against_b ? " [kernel failure: counts against B]"
                     : " [kernel failure: not counted against B, see kernel failures]";
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
  auto tally = [&](bool primary) {
    return std::to_string(c.count(Verdict::regressed, primary)) + " regressed, " +
           std::to_string(c.count(Verdict::improved, primary)) + " improved, " +
           std::to_string(c.count(Verdict::no_change, primary)) + " no significant change, " +
           std::to_string(c.count(Verdict::inconclusive, primary)) + " inconclusive";
  };
  return "primary: " + tally(true) + "; secondary: " + tally(false) +
         "; counted against B: " + std::to_string(c.kernel_failure_regressions()) +
         " kernel failure class(es) (" + std::to_string(c.kernel_failures_b()) +
         " kernel failure(s) in B), " + std::to_string(c.gate_regressions()) + " gate check(s), " +
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
  std::vector<SummaryLine> lines = {basis_summary(c)};
  for (const auto& r : c.metrics)
    if (r.primary) lines.push_back(row_summary(r));
  failure_summaries(c, lines);
  for (const auto& r : c.metrics)
    if (!r.primary && is_count(r) && moved(r)) lines.push_back(row_summary(r));
  for (const auto& r : c.metrics)
    if (!r.primary && !is_count(r) && moved(r)) lines.push_back(row_summary(r));
  lines.push_back(secondary_rest_summary(c));
  return lines;
}

namespace {

std::string end_text(double v, double scale, const char* f) {
  if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
  return num(v * scale, f);
}

// " [low, high]" of the row's interval (scale: 100 for a fraction shown in percent).
std::string interval_text(const MetricRow& r, double scale, const char* f) {
  if (!r.test.interval) return " [CI n/a]";
  return " [" + end_text(r.test.interval->low, scale, f) + ", " +
         end_text(r.test.interval->high, scale, f) + "]";
}

std::string format_count_change(const MetricRow& r) {
  const CountTest& c = *r.test.count;
  std::string s = (c.diff > 0 ? "+" : "") + format_count_amount(c.diff, r.unit);
  s += interval_text(r, 1, "%.3g");
  if (std::isinf(c.relative_change)) return s + " (new)";
  return s + " (" + num(100 * c.relative_change, "%+.2f") + "%)";
}

}  // namespace

std::string format_change(const MetricRow& r) {
  if (is_count(r)) return format_count_change(r);
  if (!std::isfinite(r.change_pct)) return "n/a";
  return num(r.change_pct, "%+.2f") + "%" + interval_text(r, 100, "%.1f");
}

// "3/3 PASS", "1/3 FAIL", "-" (no cell ran the check).
static std::string gate_cell(std::size_t pass, std::size_t total) {
  if (total == 0) return "-";
  return std::to_string(pass) + "/" + std::to_string(total) + (pass == total ? " PASS" : " FAIL");
}

namespace {

// A column of a metric table: its header, alignment and cell.
struct Column {
  std::string header;
  bool right = false;
  std::string (*cell)(const MetricRow&) = nullptr;
};

using RowFilter = bool (*)(const MetricRow&);

bool is_timing_row(const MetricRow& r) { return !is_count(r) && !is_instructions(r); }

std::string verdict_cell(const MetricRow& r) { return verdict_name(r.verdict.verdict); }

// Width of a cell in code points ("µs" is 2).
std::size_t width_of(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

// The columns of one kind's table; `interval` names the interval ("95% CI", or "CI").
std::vector<Column> table_columns(MetricKind kind, const std::string& interval) {
  const bool means = kind != MetricKind::timing;
  std::vector<Column> cols = {{"metric", false, [](const MetricRow& r) { return r.name; }},
                              {"unit", false, [](const MetricRow& r) { return r.unit; }}};
  if (kind == MetricKind::count)
    cols.push_back({"CPUs", false, [](const MetricRow& r) { return cpu_list_text(r.cpus); }});
  if (means) {
    cols.push_back({"A mean", true, [](const MetricRow& r) { return num(r.test.a.mean, "%.4g"); }});
    cols.push_back({"B mean", true, [](const MetricRow& r) { return num(r.test.b.mean, "%.4g"); }});
  } else {
    cols.push_back({"A median", true, [](const MetricRow& r) { return num(r.test.a.median); }});
    cols.push_back({"B median", true, [](const MetricRow& r) { return num(r.test.b.median); }});
  }
  cols.push_back(
      {kind == MetricKind::count ? "B-A [" + interval + "] (change)" : "change [" + interval + "]",
       false, format_change});
  cols.push_back({"p", true, p_text});
  cols.push_back({"adj p", true, adjusted_p_text});
  cols.push_back({"nA", true, [](const MetricRow& r) { return std::to_string(r.test.a.n); }});
  cols.push_back({"nB", true, [](const MetricRow& r) { return std::to_string(r.test.b.n); }});
  cols.push_back({"role", false, [](const MetricRow& r) { return std::string(role_name(r)); }});
  cols.push_back({"verdict", false, verdict_cell});
  return cols;
}

std::vector<const MetricRow*> rows_where(const Comparison& c, RowFilter keep) {
  std::vector<const MetricRow*> rows;
  for (const auto& r : c.metrics)
    if (keep(r)) rows.push_back(&r);
  return rows;
}

void table_text(const std::vector<const MetricRow*>& rows, const std::vector<Column>& cols,
                std::ostringstream& o) {
  std::vector<std::size_t> width;
  for (const auto& col : cols) {
    std::size_t w = width_of(col.header);
    for (const MetricRow* r : rows) w = std::max(w, width_of(col.cell(*r)));
    width.push_back(w);
  }
  for (std::size_t k = 0; k < cols.size(); ++k)
    o << (k ? "  " : "") << pad(cols[k].header, k + 1 == cols.size() ? 0 : width[k], cols[k].right);
  o << "\n";
  for (const MetricRow* r : rows) {
    for (std::size_t k = 0; k < cols.size(); ++k)
      o << (k ? "  " : "")
        << pad(cols[k].cell(*r), k + 1 == cols.size() ? 0 : width[k], cols[k].right);
    o << "\n";
  }
}

// The three tables of render_text: timings, counts on the isolated CPUs, instruction counts.
void tables_text(const Comparison& c, std::ostringstream& o) {
  const std::string ci = num(100 * c.settings.confidence_level, "%.3g") + "% CI";
  if (auto rows = rows_where(c, is_timing_row); !rows.empty())
    table_text(rows, table_columns(MetricKind::timing, ci), o);
  if (auto rows = rows_where(c, is_count); !rows.empty()) {
    o << "\ncount metrics on the isolated CPUs (per-boot means; B-A with its " << ci
      << " from the inverted permutation test of the means; per-CPU rows '[cpuN]'):\n";
    table_text(rows, table_columns(MetricKind::count, ci), o);
  }
  if (auto rows = rows_where(c, is_instructions); !rows.empty()) {
    o << "\ninstruction counts (per-boot means; permutation test of the means):\n";
    table_text(rows, table_columns(MetricKind::instructions, ci), o);
  }
}

}  // namespace

namespace {

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

namespace {

// Why each row that is not a plain "no significant change" got its verdict.
void reasons_text(const Comparison& c, std::ostringstream& o) {
  bool any = false;
  for (const auto& r : c.metrics) {
    const bool significant = has_both(r) && decisive_p(r) < c.settings.alpha;
    if (r.verdict.verdict == Verdict::no_change && !significant && !r.primary) continue;
    if (!any) o << "\nwhy:\n";
    any = true;
    o << "  " << r.name << " (" << role_name(r) << "): " << verdict_name(r.verdict.verdict) << ": "
      << r.verdict.reason << "\n";
  }
}

void tails_text(const Comparison& c, std::ostringstream& o) {
  if (c.tails.empty()) return;
  o << "\ntails of merged histograms (nearest rank; informational, not tested):\n";
  for (const auto& t : c.tails) {
    o << "  " << t.histogram << " (" << t.unit << "): p99 A " << opt_bucket(t.a.p99, t.a.overflows)
      << " B " << opt_bucket(t.b.p99, t.b.overflows) << "; p99.9 A "
      << opt_bucket(t.a.p99_9, t.a.overflows) << " B " << opt_bucket(t.b.p99_9, t.b.overflows)
      << "; max A " << opt_bucket(t.a.max, t.a.overflows) << " B "
      << opt_bucket(t.b.max, t.b.overflows) << "; samples A " << t.a.samples << " B " << t.b.samples
      << "\n";
  }
}

void profile_text(const Comparison& c, std::ostringstream& o) {
  if (c.profile_changes.empty()) return;
  o << "\nkernel functions whose instructions on the isolated CPUs changed most (mean per boot, "
       "A -> B; informational, not tested):\n";
  for (const auto& l : profile_change_lines(c.profile_changes)) o << "  " << l << "\n";
}

void failures_text(const Comparison& c, std::ostringstream& o) {
  if (c.failures.empty()) return;
  o << "\nkernel failures per class (cells with it / all cells of the variant):\n";
  for (const auto& f : c.failures)
    o << "  " << f.failure_class << ": " << f.reason
      << (f.against_b ? "  [counts against B]" : "  [not counted against B]") << "\n";
}

void gate_text(const Comparison& c, std::ostringstream& o) {
  if (c.gate.empty()) return;
  o << "\nisolation gate (cells passing / cells checked):\n";
  o << "  " << std::left << std::setw(28) << "check" << std::setw(10) << "A"
    << "B\n";
  for (const auto& g : c.gate) {
    o << "  " << std::left << std::setw(28) << g.check << std::setw(10)
      << gate_cell(g.a_pass, g.a_total) << gate_cell(g.b_pass, g.b_total);
    if (!g.reason.empty())
      o << "  (" << g.reason << (g.against_b ? "; counts against B)" : "; not counted against B)");
    o << "\n";
  }
}

void cells_text(const Comparison& c, std::ostringstream& o) {
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
  tables_text(c, o);
  if (c.metrics.empty()) o << "(no metrics)\n";
  hosts_text(c, o);
  reasons_text(c, o);
  tails_text(c, o);
  profile_text(c, o);
  latency_traces_text(c, o);
  failures_text(c, o);
  gate_text(c, o);
  cells_text(c, o);
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
          {"floor", r.kind == MetricKind::count ? jnum(s.count_floor_for(r.unit)) : jnum(0)}};
}

// The interval in percent (timing, instructions) or the metric's unit (counts); an unbounded
// end is null with its "bounded" flag false.
nlohmann::json interval_json(const MetricRow& r) {
  if (!r.test.interval) return nullptr;
  const ConfidenceInterval& i = *r.test.interval;
  const bool relative = r.kind != MetricKind::count;
  const double scale = relative ? 100.0 : 1.0;
  return {{"low", jnum(scale * i.low)},
          {"high", jnum(scale * i.high)},
          {"low_bounded", std::isfinite(i.low)},
          {"high_bounded", std::isfinite(i.high)},
          {"level", i.level},
          {"unit", relative ? std::string("percent") : r.unit},
          {"reassignments", i.resamples_used}};
}

const char* test_json_name(const MetricRow& r) {
  if (r.kind == MetricKind::timing)
    return r.test.stratified ? "stratified-van-elteren" : "midrank-permutation";
  return r.test.stratified ? "stratified-permutation-mean" : "permutation-mean";
}

nlohmann::json verdict_json(const MetricRow& r) {
  const VerdictResult& v = r.verdict;
  return {{"threshold_pct", jnum(v.threshold_pct)},
          {"margin", jnum(v.margin)},
          {"margin_relative", v.margin_relative},
          {"cannot_exclude", jnum(v.cannot_exclude)},
          {"cannot_exclude_unbounded", std::isinf(v.cannot_exclude)},
          {"verdict", verdict_name(v.verdict)},
          {"reason", v.reason}};
}

nlohmann::json metric_json(const MetricRow& r, const CompareSettings& s) {
  nlohmann::json m = {
      {"name", r.name},
      {"metric", r.metric},
      {"unit", r.unit},
      {"better", r.better},
      {"kind", metric_kind_name(r.kind)},
      {"cpus", cpu_list_text(r.cpus)},
      {"derived", r.derived},
      {"tcg", r.tcg},
      {"role", role_name(r)},
      {"a", stats_json(r.test.a, r.a_values)},
      {"b", stats_json(r.test.b, r.b_values)},
      {"missing_a", r.missing_a},
      {"missing_b", r.missing_b},
      {"change_pct", jnum(r.change_pct)},
      {"ci_low_pct", jopt(r.ci_low_pct)},
      {"ci_high_pct", jopt(r.ci_high_pct)},
      {"interval", interval_json(r)},
      {"test", test_json_name(r)},
      {"p_value", has_both(r) ? jnum(r.test.p_value()) : nlohmann::json()},
      {"p_exact", r.test.p_exact()},
      {"min_p", has_both(r) ? jnum(r.test.min_p()) : nlohmann::json()},
      {"one_sided_p", r.test.one_sided ? jnum(r.test.one_sided->p) : nlohmann::json()},
      {"family_p", jopt(r.test.family_p)},
      {"family",
       r.test.family_p ? nlohmann::json(r.primary ? "holm" : "westfall-young") : nlohmann::json()},
      {"permutation_p", jopt(r.test.permutation_p)},
      {"mann_whitney_p", r.kind == MetricKind::timing && has_both(r)
                             ? jnum(r.test.mann_whitney.p_two_sided)
                             : nlohmann::json()}};
  m.update(verdict_json(r));
  if (r.primary) {
    m["bad"] = r.declared->higher_is_bad ? "higher" : "lower";
    m["declared"] = r.declared->source;
  }
  if (r.test.count) m["count"] = count_json(r, s);
  if (r.test.stratified) {
    m["stratified"] = {{"p", jnum(r.test.stratified->p)},
                       {"min_p", jnum(r.test.stratified->min_p)},
                       {"exact", r.test.stratified->exact},
                       {"reassignments", r.test.stratified->reassignments},
                       {"strata", r.test.stratified->strata_used}};
    m["per_host"] = per_host_json(r);
  }
  return m;
}

nlohmann::json tails_json(const Comparison& c) {
  auto tail = [](const HistogramTail& h) {
    return nlohmann::json{{"samples", h.samples},
                          {"overflows", h.overflows},
                          {"p99", jbucket(h.p99)},
                          {"p99_9", jbucket(h.p99_9)},
                          {"max", jbucket(h.max)}};
  };
  nlohmann::json out = nlohmann::json::array();
  for (const auto& t : c.tails)
    out.push_back(
        {{"histogram", t.histogram}, {"unit", t.unit}, {"a", tail(t.a)}, {"b", tail(t.b)}});
  return out;
}

nlohmann::json profile_changes_json(const Comparison& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : c.profile_changes)
    out.push_back({{"step", p.step},
                   {"cpu", p.cpu},
                   {"function", p.function},
                   {"a", p.a},
                   {"b", p.b},
                   {"cells_a", p.cells_a},
                   {"cells_b", p.cells_b}});
  return out;
}

nlohmann::json latency_traces_json(const Comparison& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : c.latency_traces)
    out.push_back({{"variant", r.side == 0 ? c.variant_a : c.variant_b},
                   {"side", r.side == 0 ? "A" : "B"},
                   {"cell_id", r.cell_id},
                   {"workload", r.workload},
                   {"tracer", r.tracer},
                   {"max_latency_us", jnum(r.max_latency_us)},
                   {"task", r.task},
                   {"cpu", r.cpu ? nlohmann::json(*r.cpu) : nlohmann::json()},
                   {"frames", r.frames},
                   {"file", r.file}});
  return out;
}

nlohmann::json gate_json(const Comparison& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : c.gate)
    out.push_back({{"check", g.check},
                   {"a_pass", g.a_pass},
                   {"a_total", g.a_total},
                   {"b_pass", g.b_pass},
                   {"b_total", g.b_total},
                   {"p", g.p},
                   {"against_b", g.against_b},
                   {"reason", g.reason}});
  return out;
}

nlohmann::json failures_json(const Comparison& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : c.failures)
    out.push_back({{"failure_class", f.failure_class},
                   {"a_cells", f.a_cells},
                   {"a_total", f.a_total},
                   {"b_cells", f.b_cells},
                   {"b_total", f.b_total},
                   {"as_rates", f.as_rates},
                   {"p", f.p},
                   {"against_b", f.against_b},
                   {"reason", f.reason}});
  return out;
}

nlohmann::json issues_json(const Comparison& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& i : c.issues)
    out.push_back({{"side", i.side},
                   {"variant", i.variant},
                   {"cell_id", i.cell_id},
                   {"status", i.status},
                   {"failure_class",
                    i.failure_class.empty() ? nlohmann::json() : nlohmann::json(i.failure_class)},
                   {"reason", i.reason},
                   {"gate_failures", i.gate_failures},
                   {"kernel_failure", i.kernel_failure},
                   {"against_b", i.against_b}});
  return out;
}

nlohmann::json tally_json(const Comparison& c, bool primary) {
  return {{"improved", c.count(Verdict::improved, primary)},
          {"regressed", c.count(Verdict::regressed, primary)},
          {"no_change", c.count(Verdict::no_change, primary)},
          {"inconclusive", c.count(Verdict::inconclusive, primary)}};
}

nlohmann::json summary_json(const Comparison& c) {
  nlohmann::json missing = nlohmann::json::array();
  for (const MetricRow* r : c.missing_more_in_b())
    missing.push_back(
        {{"metric", r->name}, {"missing_a", r->missing_a}, {"missing_b", r->missing_b}});
  nlohmann::json s = {{"improved", c.count(Verdict::improved)},
                      {"regressed", c.count(Verdict::regressed)},
                      {"no_change", c.count(Verdict::no_change)},
                      {"inconclusive", c.count(Verdict::inconclusive)},
                      {"primary", tally_json(c, true)},
                      {"secondary", tally_json(c, false)},
                      {"primary_regressions", c.primary_regressions()},
                      {"kernel_failures_b", c.kernel_failures_b()},
                      {"kernel_failure_regressions", c.kernel_failure_regressions()},
                      {"gate_regressions", c.gate_regressions()},
                      {"new_warnings_in_touched_files", c.new_warnings_in_touched_files()},
                      {"regressions", c.regressions()},
                      {"exit_status", compare_exit_status(c)},
                      {"family",
                       {{"primary", c.family.primary},
                        {"secondary", c.family.secondary},
                        {"relabellings", c.family.relabellings},
                        {"exact", c.family.exact}}},
                      {"missing_more_in_b", missing},
                      {"lines", nlohmann::json::array()}};
  const auto lines = summarize(c);
  s["basis"] = lines.front().text;
  for (const auto& l : lines) s["lines"].push_back(l.detail);
  return s;
}

}  // namespace

nlohmann::json render_json(const Comparison& c) {
  nlohmann::json j = {{"schema", "isolab-comparison"},
                      {"version", 1},
                      {"spec_name", c.spec_name},
                      {"run_a", c.run_a},
                      {"run_b", c.run_b},
                      {"variant_a", c.variant_a},
                      {"variant_b", c.variant_b},
                      {"kernel_a", c.kernel_a},
                      {"kernel_b", c.kernel_b},
                      {"cells_a", c.cells_a},
                      {"cells_b", c.cells_b},
                      {"forced", c.forced},
                      {"differences", c.differences},
                      {"settings", settings_to_json(c.settings)},
                      {"stratified", c.stratified},
                      {"hosts", hosts_json(c)},
                      {"pooled_unlike_hosts", c.pooled_unlike_hosts},
                      {"host_differences", c.host_differences},
                      {"host_sensitive", c.host_sensitive}};
  j["metrics"] = nlohmann::json::array();
  for (const auto& r : c.metrics) j["metrics"].push_back(metric_json(r, c.settings));
  j["tails"] = tails_json(c);
  j["profile_changes"] = profile_changes_json(c);
  j["latency_traces"] = latency_traces_json(c);
  j["gate"] = gate_json(c);
  j["failures"] = failures_json(c);
  j["issues"] = issues_json(c);
  j["untrusted"] = nlohmann::json::array();
  for (const auto& u : c.untrusted)
    j["untrusted"].push_back(
        {{"side", u.side}, {"cell_id", u.cell_id}, {"metric", u.metric}, {"reason", u.reason}});
  j["new_build_warnings"] = nullptr;
  if (c.new_warnings) {
    j["new_build_warnings"] = nlohmann::json::array();
    for (const auto& n : *c.new_warnings) {
      nlohmann::json w = build_warning_to_json(n.warning);
      w["in_touched_file"] = n.in_touched_file;
      j["new_build_warnings"].push_back(w);
    }
  }
  j["summary"] = summary_json(c);
  return j;
}

namespace {

void table_markdown(const std::vector<const MetricRow*>& rows, const std::vector<Column>& cols,
                    std::ostringstream& o) {
  o << "\n|";
  for (const auto& col : cols) o << " " << md_escape(col.header) << " |";
  o << "\n|";
  for (const auto& col : cols) o << (col.right ? "---:|" : "---|");
  o << "\n";
  for (const MetricRow* r : rows) {
    o << "|";
    for (const auto& col : cols) {
      const std::string cell = md_escape(col.cell(*r));
      const bool bold = col.cell == verdict_cell && r->verdict.verdict == Verdict::regressed;
      o << " " << (bold ? "**" + cell + "**" : cell) << " |";
    }
    o << "\n";
  }
}

void tables_markdown(const Comparison& c, std::ostringstream& o) {
  if (auto rows = rows_where(c, is_timing_row); !rows.empty())
    table_markdown(rows, table_columns(MetricKind::timing, "CI"), o);
  if (auto rows = rows_where(c, is_count); !rows.empty()) {
    o << "\nCount metrics on the isolated CPUs (per-boot means, permutation test; per-CPU rows "
         "'[cpuN]'):\n";
    table_markdown(rows, table_columns(MetricKind::count, "CI"), o);
  }
  if (auto rows = rows_where(c, is_instructions); !rows.empty()) {
    o << "\nInstruction counts (per-boot means, permutation test):\n";
    table_markdown(rows, table_columns(MetricKind::instructions, "CI"), o);
  }
}

void tails_markdown(const Comparison& c, std::ostringstream& o) {
  if (c.tails.empty()) return;
  o << "\nTails of merged histograms (nearest rank, informational):\n\n";
  o << "| histogram | unit | p99 A | p99 B | p99.9 A | p99.9 B | max A | max B |\n";
  o << "|---|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& t : c.tails) {
    o << "| " << md_escape(t.histogram) << " | " << md_escape(t.unit) << " | "
      << opt_bucket(t.a.p99, t.a.overflows) << " | " << opt_bucket(t.b.p99, t.b.overflows) << " | "
      << opt_bucket(t.a.p99_9, t.a.overflows) << " | " << opt_bucket(t.b.p99_9, t.b.overflows)
      << " | " << opt_bucket(t.a.max, t.a.overflows) << " | " << opt_bucket(t.b.max, t.b.overflows)
      << " |\n";
  }
}

void profile_markdown(const Comparison& c, std::ostringstream& o) {
  if (c.profile_changes.empty()) return;
  o << "\nKernel functions whose instructions on the isolated CPUs changed most (mean per boot, "
       "informational):\n\n";
  for (const auto& l : profile_change_lines(c.profile_changes)) o << "- " << md_escape(l) << "\n";
}

void outcomes_markdown(const Comparison& c, std::ostringstream& o) {
  if (!c.failures.empty()) {
    o << "\nKernel failures per class:\n\n";
    for (const auto& f : c.failures)
      o << "- " << md_escape(f.failure_class + ": " + f.reason)
        << (f.against_b ? " **[counts against B]**" : " [not counted against B]") << "\n";
  }
  if (!c.gate.empty()) {
    o << "\nIsolation gate (cells passing / cells checked):\n\n| check | A | B | B failures |\n"
         "|---|---|---|---|\n";
    for (const auto& g : c.gate)
      o << "| " << md_escape(g.check) << " | " << gate_cell(g.a_pass, g.a_total) << " | "
        << gate_cell(g.b_pass, g.b_total) << " | "
        << (g.reason.empty() ? std::string("-")
                             : md_escape(g.reason) + (g.against_b ? " **[counts against B]**"
                                                                  : " [not counted against B]"))
        << " |\n";
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
}

}  // namespace

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
  tables_markdown(c, o);
  tails_markdown(c, o);
  profile_markdown(c, o);
  if (!c.latency_traces.empty()) {
    o << "\nMax-latency traces (" << md_escape(c.latency_traces.front().tracer)
      << ", switch-side stack, innermost first; informational):\n\n";
    for (const auto& r : c.latency_traces) o << "- " << md_escape(latency_trace_line(c, r)) << "\n";
  }
  outcomes_markdown(c, o);
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

namespace {

// One testcase per metric row: classname ".primary" or ".secondary"; a primary "regressed" is a
// <failure>, an "inconclusive" row <skipped>; a secondary "regressed" passes, saying so.
void junit_metric(const MetricRow& r, const std::string& classname, std::ostringstream& o) {
  o << "    <testcase classname=\"" << xml_escape(classname + "." + role_name(r)) << "\" name=\""
    << xml_escape(r.name) << "\" time=\"0\"";
  const std::string msg = std::string(role_name(r)) + ": " + verdict_name(r.verdict.verdict) +
                          ": " + format_change(r) + ", " + r.verdict.reason;
  const bool means = r.kind != MetricKind::timing;
  const char* stat = means ? "mean" : "median";
  const double va = means ? r.test.a.mean : r.test.a.median;
  const double vb = means ? r.test.b.mean : r.test.b.median;
  const std::string detail = std::string("A ") + stat + " " + num(va) + " " + r.unit +
                             " (n=" + std::to_string(r.test.a.n) + "), B " + stat + " " + num(vb) +
                             " " + r.unit + " (n=" + std::to_string(r.test.b.n) +
                             "), p=" + p_text(r) + ", adjusted p=" + adjusted_p_text(r) +
                             ", better " + r.better;
  if (r.primary && r.verdict.verdict == Verdict::regressed) {
    o << ">\n      <failure type=\"regression\" message=\"" << xml_escape(msg) << "\">"
      << xml_escape(detail) << "</failure>\n    </testcase>\n";
  } else if (r.verdict.verdict == Verdict::inconclusive) {
    o << ">\n      <skipped message=\"" << xml_escape(msg) << "\"/>\n    </testcase>\n";
  } else {
    const std::string note =
        !r.primary && moved(r) ? " (secondary: does not set the exit status)" : "";
    o << ">\n      <system-out>" << xml_escape(msg + note + "; " + detail) << "</system-out>\n"
      << "    </testcase>\n";
  }
}

// A testcase that fails with `failure` lines when there are any.
void junit_check(const std::string& classname, const std::string& name, const std::string& type,
                 const std::string& message, const std::string& failure, std::ostringstream& o) {
  o << "    <testcase classname=\"" << xml_escape(classname) << "\" name=\"" << xml_escape(name)
    << "\" time=\"0\"";
  if (failure.empty()) {
    o << "/>\n";
    return;
  }
  o << ">\n      <failure type=\"" << type << "\" message=\"" << xml_escape(message) << "\">"
    << xml_escape(failure) << "</failure>\n    </testcase>\n";
}

void junit_outcomes(const Comparison& c, const std::string& classname, std::ostringstream& o) {
  std::string kernel;
  for (const auto& f : c.failures)
    if (f.against_b) kernel += f.failure_class + ": " + f.reason + "\n";
  for (const auto& i : c.issues)
    if (i.side == "B" && i.against_b) kernel += issue_line(i) + "\n";
  junit_check(classname, "kernel-health." + c.variant_b, "kernel-failure",
              std::to_string(c.kernel_failure_regressions()) +
                  " kernel failure class(es) counted against B",
              kernel, o);
  if (!c.gate.empty()) {
    std::string gate;
    for (const auto& g : c.gate)
      if (g.against_b) gate += g.check + ": " + g.reason + "\n";
    junit_check(classname, "isolation-gate." + c.variant_b, "gate-failure",
                std::to_string(c.gate_regressions()) + " gate check(s) B fails systematically",
                gate, o);
  }
}

void junit_properties(const Comparison& c, std::ostringstream& o) {
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
  prop("exit_status_basis", summarize(c).front().text);
  prop("forced", c.forced ? "true" : "false");
  for (std::size_t k = 0; k < c.differences.size(); ++k) {
    prop("difference." + std::to_string(k), c.differences[k]);
  }
  o << "    </properties>\n";
}

}  // namespace

std::string render_junit(const Comparison& c) {
  const std::string classname =
      "isolab.compare." + (c.spec_name.empty() ? std::string("run") : c.spec_name);
  // + kernel-health, + isolation-gate when a cell was gated, + build-warnings when both builds
  // recorded their warnings
  const std::size_t tests =
      c.metrics.size() + 1 + (c.gate.empty() ? 0 : 1) + (c.new_warnings ? 1 : 0);
  const std::size_t failures = c.primary_regressions() + (c.kernel_failure_regressions() > 0) +
                               (c.gate_regressions() > 0) +
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
  junit_properties(c, o);
  for (const auto& r : c.metrics) junit_metric(r, classname, o);
  junit_outcomes(c, classname, o);
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
