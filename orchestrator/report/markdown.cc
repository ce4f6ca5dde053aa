#include "report/markdown.h"

#include <sstream>

#include "report/format.h"
#include "report/profile_changes.h"
#include "report/summary.h"

namespace isolab {

using namespace report_detail;

namespace {

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
  o << "| histogram | unit | p99 A | p99 B | p99.9 A | p99.9 B | p99.999 A | p99.999 B | max A "
       "| max B |\n";
  o << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& t : c.tails) {
    o << "| " << md_escape(t.histogram) << " | " << md_escape(t.unit) << " | "
      << opt_bucket(t.a.p99, t.a.overflows) << " | " << opt_bucket(t.b.p99, t.b.overflows) << " | "
      << opt_bucket(t.a.p99_9, t.a.overflows) << " | " << opt_bucket(t.b.p99_9, t.b.overflows)
      << " | " << opt_bucket(t.a.p99_999, t.a.overflows) << " | "
      << opt_bucket(t.b.p99_999, t.b.overflows) << " | " << opt_bucket(t.a.max, t.a.overflows)
      << " | " << opt_bucket(t.b.max, t.b.overflows) << " |\n";
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
  for (const auto& n : c.run_notes)
    o << "\n**" << run_note_label(n.kind) << ":** " << md_escape(n.text) << "\n";
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

}  // namespace isolab
