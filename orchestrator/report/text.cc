#include "report/text.h"

#include <algorithm>
#include <sstream>

#include "report/format.h"
#include "report/profile_changes.h"
#include "report/summary.h"

namespace isolab {

using namespace report_detail;

namespace {

// The width of a terminal the answer is written for.
constexpr std::size_t kColumns = 80;

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

// Whether a row is shown without --all: a primary, or a secondary that changed.
bool shown(const MetricRow& r, const TextOptions& opt) {
  return opt.all_rows || r.primary || moved(r) || r.verdict.verdict == Verdict::changed_below;
}

std::vector<const MetricRow*> shown_rows(const Comparison& c, RowFilter kind,
                                         const TextOptions& opt) {
  std::vector<const MetricRow*> rows = rows_where(c, kind);
  std::erase_if(rows, [&](const MetricRow* r) { return !shown(*r, opt); });
  return rows;
}

// "(N secondary rows not shown: ... ; --all shows every row)", when rows are hidden.
void hidden_text(const Comparison& c, const TextOptions& opt, std::ostringstream& o) {
  std::size_t hidden = 0, no_change = 0;
  for (const auto& r : c.metrics) {
    if (shown(r, opt)) continue;
    ++hidden;
    no_change += r.verdict.verdict == Verdict::no_change;
  }
  if (hidden == 0) return;
  o << "\n"
    << wrap("(" + std::to_string(hidden) + " secondary rows not shown: " +
                std::to_string(no_change) + " no significant change, " +
                std::to_string(hidden - no_change) + " inconclusive; --all shows every row)",
            kColumns, "", " ");
}

// The three tables of render_text: timings, counts on the isolated CPUs, instruction counts.
void tables_text(const Comparison& c, const TextOptions& opt, std::ostringstream& o) {
  const std::string ci = num(100 * c.settings.confidence_level, "%.3g") + "% CI";
  if (auto rows = shown_rows(c, is_timing_row, opt); !rows.empty()) {
    o << "\n";
    table_text(rows, table_columns(MetricKind::timing, ci), o);
  }
  if (auto rows = shown_rows(c, is_count, opt); !rows.empty()) {
    o << "\ncount metrics on the isolated CPUs (per-boot means; B-A with its " << ci
      << " from the inverted permutation test of the means; per-CPU rows '[cpuN]'):\n";
    table_text(rows, table_columns(MetricKind::count, ci), o);
  }
  if (auto rows = shown_rows(c, is_instructions, opt); !rows.empty()) {
    o << "\ninstruction counts (per-boot means; permutation test of the means):\n";
    table_text(rows, table_columns(MetricKind::instructions, ci), o);
  }
  hidden_text(c, opt, o);
  const ExitBudget& b = c.budget;
  if (b.entries.empty() || !std::any_of(c.metrics.begin(), c.metrics.end(),
                                        [](const MetricRow& r) { return r.primary; }))
    return;
  const double level = b.level / static_cast<double>(b.first_k);
  o << "(primary rows: each end of the CI is a one-sided bound at 1 - " << num(b.level, "%.3g")
    << "/" << b.first_k << " = " << num(100 * (1 - level), "%.4g")
    << "%, the step-down's first level; a row the range rule decides shows its range)\n";
}

}  // namespace

namespace {

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

}  // namespace

namespace {

// Why each row shown that is not a plain "no significant change" got its verdict.
void reasons_text(const Comparison& c, const TextOptions& opt, std::ostringstream& o) {
  bool any = false;
  for (const auto& r : c.metrics) {
    if (!shown(r, opt)) continue;
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
      << "; p99.999 A " << opt_bucket(t.a.p99_999, t.a.overflows) << " B "
      << opt_bucket(t.b.p99_999, t.b.overflows) << "; max A " << opt_bucket(t.a.max, t.a.overflows)
      << " B " << opt_bucket(t.b.max, t.b.overflows) << "; samples A " << t.a.samples << " B "
      << t.b.samples << "\n";
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
  // The check column fits the longest check and a gap of two (a customer's sysctl rows are
  // long: "sysctl kernel.hung_task_timeout_secs").
  std::size_t width = 28;
  for (const auto& g : c.gate) width = std::max(width, g.check.size() + 2);
  const int w = static_cast<int>(width);
  o << "\nisolation gate (cells passing / cells checked):\n";
  o << "  " << std::left << std::setw(w) << "check" << std::setw(10) << "A"
    << "B\n";
  for (const auto& g : c.gate) {
    o << "  " << std::left << std::setw(w) << g.check << std::setw(10)
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

// The first screen: the verdict and what decided it, the secondary rows that changed, the method.
void answer_text(const Comparison& c, std::ostringstream& o) {
  const std::vector<SummaryLine> lines = summarize(c);
  const nlohmann::json& basis = lines.front().detail;
  o << "verdict: " << basis.value("verdict", "") << " (exit status "
    << basis.value("exit_status", 0) << ")\n";
  if (basis.value("primary", nlohmann::json::array()).empty())
    o << wrap("no primary metric declared (spec compare.primary or --primary)", kColumns, "  ",
              "    ");
  for (const auto& l : lines)
    if (is_answer_line(l) && !is_answer_footnote(l)) o << wrap(l.text, kColumns, "  ", "    ");
  if (const std::string g = gate_answer(c); !g.empty()) o << wrap(g, kColumns, "  ", "    ");
  for (const auto& u : undecided_answers(c)) o << wrap(u, kColumns, "  ", "    ");
  if (const std::string b = budget_answer(c); !b.empty()) o << wrap(b, kColumns, "  ", "    ");
  if (const std::string f = fidelity_answer(c); !f.empty()) o << wrap(f, kColumns, "  ", "    ");
  for (const auto& l : lines)
    if (is_answer_line(l) && is_answer_footnote(l)) o << wrap(l.text, kColumns, "  ", "    ");
  o << "\n";
  for (const auto& l : lines)
    if (is_secondary_line(l)) o << wrap(l.text, kColumns, "", "    ");
  o << wrap("method: " + basis.value("text", ""), kColumns, "", "  ");
}

void caveats_text(const Comparison& c, std::ostringstream& o) {
  for (const auto& n : c.run_notes)
    o << wrap(run_note_label(n.kind) + ": " + n.text, kColumns, "", "    ");
  if (c.forced) {
    o << "FORCED: these runs are not comparable; the comparison was forced. Differences:\n";
    for (const auto& d : c.differences) o << wrap("- " + d, kColumns, "  ", "    ");
  }
  if (!c.version_differences.empty()) {
    o << "tool versions differ between A and B:\n";
    for (const auto& d : c.version_differences) o << wrap("- " + d, kColumns, "  ", "    ");
  }
}

}  // namespace

std::string render_text(const Comparison& c, const TextOptions& options) {
  std::ostringstream o;
  o << wrap(title_line(c), kColumns, "", "    ");
  std::istringstream sides(header_line(c));
  for (std::string l; std::getline(sides, l);) o << wrap(l, kColumns, "", "    ");
  caveats_text(c, o);
  answer_text(c, o);
  tables_text(c, options, o);
  if (c.metrics.empty()) o << "(no metrics)\n";
  hosts_text(c, o);
  reasons_text(c, options, o);
  tails_text(c, o);
  profile_text(c, o);
  latency_traces_text(c, o);
  failures_text(c, o);
  gate_text(c, o);
  cells_text(c, o);
  o << "\n" << wrap("settings: " + settings_line(c), kColumns, "", "  ");
  o << "\n" << summary_line(c) << "\n";  // one line, for scripts that grep the tally
  return o.str();
}

}  // namespace isolab
