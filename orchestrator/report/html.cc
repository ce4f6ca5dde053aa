#include "report/html.h"

#include <algorithm>
#include <sstream>

#include "base/xml_text.h"
#include "report/format.h"
#include "report/plots.h"
#include "report/summary.h"
#include "report/svg.h"
#include "report/text.h"
#include "results/cell_facts.h"
#include "results/lenient.h"
#include "results/run_facts.h"
#include "results/variant_facts.h"

namespace isolab {

namespace {

std::string esc(const std::string& s) { return xml_escape(s); }

// Text as a cell of the page shows it: trailing newlines dropped.
std::string shown(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// A JSON scalar as the page shows it (results::scalar_text, trailing newlines dropped).
std::string scalar(const nlohmann::json& j) { return shown(results::scalar_text(j)); }

std::string td(const std::string& s, const std::string& cls = "") {
  return (cls.empty() ? "<td>" : "<td class=\"" + esc(cls) + "\">") + esc(s) + "</td>";
}

std::string th(const std::string& s) { return "<th>" + esc(s) + "</th>"; }

constexpr const char* kStyle = R"CSS(
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1200px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0;max-width:100%}td,th{border:1px solid #ddd;
padding:2px 6px;vertical-align:middle;text-align:left}th{background:#f4f4f4}
td.wrap{overflow-wrap:anywhere}pre.wrap{white-space:pre-wrap;overflow-wrap:anywhere}
td.name{white-space:nowrap}.gate th{font-size:11px}
code,pre,.mono{font-family:ui-monospace,monospace;font-size:12px}
pre{background:#f8f8f8;padding:.6em;overflow-x:auto}
.forced{background:#fde2e2;border:2px solid #c0392b;padding:.5em}
.summary li{margin:.2em 0}.verdict{font-size:1.15em}.method{color:#555;font-size:12px}
details.group>summary{cursor:pointer;margin:.3em 0}
.v-regressed{color:#c0392b;font-weight:bold}.v-improved{color:#1e8449;font-weight:bold}
.v-no-change{color:#555}.v-changed-below{color:#7d3c98}.v-inconclusive{color:#9a6700}
svg{display:block;overflow:visible}
svg text{font-size:11px;fill:#333}svg .tick{font-size:10px}svg .axis-label{font-size:11px}
svg .axis{stroke:#888;stroke-width:1}svg .grid{stroke:#eee}svg .sep{stroke:#999}
svg .side.a,svg .mark-label.a{fill:#1f5fa8;font-weight:bold}
svg .side.b,svg .mark-label.b{fill:#c45a00;font-weight:bold}
svg .hist{fill:none;stroke-width:1.5}svg .hist.a{stroke:#1f5fa8}svg .hist.b{stroke:#c45a00}
svg .over.a{fill:#1f5fa8}svg .over.b{fill:#c45a00}
svg .tail{stroke-width:1.5;stroke-dasharray:4 3}svg .tail.a{stroke:#1f5fa8}svg .tail.b{stroke:#c45a00}
svg .pt{fill-opacity:.75;stroke:#fff;stroke-width:.8}svg .pt.a{fill:#1f5fa8}svg .pt.b{fill:#c45a00}
svg .med{stroke-width:2.5}svg .med.a{stroke:#1f5fa8}svg .med.b{stroke:#c45a00}
svg .ci{fill-opacity:.25}svg .ci.v-regressed{fill:#c0392b}svg .ci.v-improved{fill:#1e8449}
svg .ci.v-no-change{fill:#888}svg .ci.v-changed-below{fill:#7d3c98}svg .ci.v-inconclusive{fill:#d4a017}
svg .heat{stroke:#fff}svg .heat-missing{fill:#eee}svg .cell-val{font-size:9px}
svg .cell-val.hot{fill:#fff}svg .col{font-size:9px}
svg .tl{stroke-width:1.2}.c-vmstat_update{stroke:#c0392b;background:#c0392b}
.c-workqueue_other{stroke:#8e44ad;background:#8e44ad}.c-local_timer{stroke:#2471a3;background:#2471a3}
.c-ipi_reschedule{stroke:#16a085;background:#16a085}.c-ipi_call_function{stroke:#d68910;background:#d68910}
.c-irq{stroke:#555;background:#555}.swatch{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px}
td.pass{color:#1e8449}td.fail{color:#c0392b;font-weight:bold}td.warn{color:#9a6700}
)CSS";

// Records script errors; after load writes the counts described in html.h.
constexpr const char* kScript = R"JS(
window.isolabErrors = [];
window.addEventListener('error', function (e) {
  window.isolabErrors.push(String((e && e.message) || 'resource error'));
}, true);
window.addEventListener('load', function () {
  var seen = [];
  document.querySelectorAll('[data-answer]').forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight)
      seen.push(e.getAttribute('data-answer'));
  });
  document.body.setAttribute('data-first-screen', seen.join(','));
  var folded = [];
  document.querySelectorAll('details:not([open])').forEach(function (d) {
    folded.push(d);
    d.open = true;
  });
  var plots = document.querySelectorAll('svg[data-plot]');
  plots.forEach(function (p) {
    var marks = p.querySelectorAll('[data-mark]'), rendered = 0;
    marks.forEach(function (m) {
      var b = m.getBBox();
      if (b.width > 0 || b.height > 0) rendered++;
    });
    p.setAttribute('data-marks', marks.length);
    p.setAttribute('data-rendered', rendered);
  });
  folded.forEach(function (d) { d.open = false; });
  document.body.setAttribute('data-plots', plots.length);
  document.body.setAttribute('data-errors', window.isolabErrors.length);
  document.body.setAttribute('data-error-text', window.isolabErrors.join(' | '));
  document.body.setAttribute('data-checked', 'yes');
});
)JS";

std::string head(const Comparison& c) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
       "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
    << "<title>isolab report: " << esc(c.spec_name) << " " << esc(c.variant_a) << " vs "
    << esc(c.variant_b) << "</title>\n<style>" << kStyle << "</style>\n<script>" << kScript
    << "</script>\n</head>\n";
  return o.str();
}

std::string section_header(const ReportData& d) {
  const Comparison& c = d.loaded.comparison;
  std::ostringstream o;
  o << "<h1>isolab report: " << esc(c.spec_name) << "</h1>\n<table>\n<tr>" << th("") << th("run")
    << th("variant") << th("kernel") << th("boots used") << "</tr>\n"
    << "<tr>" << td("A", "side-a") << td(c.run_a, "mono") << td(c.variant_a)
    << td(c.kernel_a, "mono") << td(std::to_string(c.cells_a)) << "</tr>\n<tr>" << td("B", "side-b")
    << td(c.run_b, "mono") << td(c.variant_b) << td(c.kernel_b, "mono")
    << td(std::to_string(c.cells_b)) << "</tr>\n</table>\n";
  if (c.forced) {
    o << "<div class=\"forced\"><b>FORCED</b>: these runs differ in what the comparison "
         "assumes equal:<ul>";
    for (const auto& diff : c.differences) o << "<li>" << esc(diff) << "</li>";
    o << "</ul></div>\n";
  }
  for (const auto& n : c.run_notes)
    o << "<div class=\"forced\" data-answer=\"" << esc(n.kind) << "\"><b>" << run_note_label(n.kind)
      << "</b>: " << esc(n.text) << "</div>\n";
  return o.str();
}

std::string summary_class(const SummaryLine& l) {
  const std::string v = l.detail.value("verdict", "");
  return v == "regressed"                  ? "v-regressed"
         : v == "improved"                 ? "v-improved"
         : v == "changed, below threshold" ? "v-changed-below"
                                           : "";
}

std::string summary_item(const SummaryLine& l) {
  const std::string cls = summary_class(l);
  return "<li" + (cls.empty() ? "" : " class=\"" + cls + "\"") + ">" + esc(l.text) + "</li>\n";
}

const MetricSamples* samples_of(const VariantData& v, const std::string& name) {
  auto it = v.metrics.find(name);
  return it == v.metrics.end() ? nullptr : &it->second;
}

std::string metrics_head() {
  return "<table>\n<tr>" + th("metric") + th("unit") + th("A and B per boot") +
         th("change [95% CI]") + th("p") + th("verdict") + "</tr>\n";
}

// One row: its name, the per-boot plot (compare/comparison.h MetricRow), the change and verdict.
std::string metric_row(const ReportData& d, const MetricRow& r, const std::string& answer = "") {
  std::ostringstream o;
  o << "<tr" << (answer.empty() ? "" : " data-answer=\"" + esc(answer) + "\"") << ">"
    << td(r.name, "mono name") << td(r.unit) << "<td>"
    << metric_svg(r, samples_of(d.side_a, r.name), samples_of(d.side_b, r.name)) << "</td>"
    << td(report_detail::format_change(r), "mono") << td(svg::axis_num(r.test.p_value()), "mono")
    << "<td class=\"" << verdict_class(r.verdict.verdict) << "\" title=\"" << esc(r.verdict.reason)
    << "\">" << esc(verdict_name(r.verdict.verdict)) << "</td></tr>\n";
  return o.str();
}

// The answer first (as the text's first screen): the verdict, the lines that decided it, the
// gate, what could not be decided, the primaries with every boot, then the secondary rows that
// changed (folded), the new build warnings and the method.
std::string section_answer(const ReportData& d) {
  const Comparison& c = d.loaded.comparison;
  const std::vector<SummaryLine> lines = summarize(c);
  const nlohmann::json& basis = lines.front().detail;
  std::ostringstream o;
  const int status = basis.value("exit_status", 0);
  o << "<h2 id=\"summary\">The answer</h2>\n<p class=\"verdict"
    << (status == 1   ? " v-regressed"
        : status == 3 ? " v-inconclusive"
                      : "")
    << "\" data-answer=\"verdict\"><b>verdict: " << esc(basis.value("verdict", ""))
    << "</b> (<code>isolab compare</code> exit status " << status
    << ")</p>\n<ul class=\"summary\">\n";
  if (basis.value("primary", nlohmann::json::array()).empty())
    o << "<li>no primary metric declared (spec compare.primary or --primary)</li>\n";
  for (const SummaryLine& l : lines)
    if (is_answer_line(l) && !is_answer_footnote(l)) o << summary_item(l);
  if (const std::string g = gate_answer(c); !g.empty()) o << "<li>" << esc(g) << "</li>\n";
  for (const auto& u : undecided_answers(c)) o << "<li>" << esc(u) << "</li>\n";
  if (const std::string b = budget_answer(c); !b.empty()) o << "<li>" << esc(b) << "</li>\n";
  if (const std::string f = fidelity_answer(c); !f.empty()) o << "<li>" << esc(f) << "</li>\n";
  for (const SummaryLine& l : lines)
    if (is_answer_line(l) && is_answer_footnote(l)) o << summary_item(l);
  o << "</ul>\n";
  std::string primaries;
  for (const MetricRow& r : c.metrics)
    if (r.primary) primaries += metric_row(d, r, "primary:" + r.name);
  if (!primaries.empty())
    o << "<p>The primary metrics, every boot: one point per boot (hover for the cell), a bar at "
         "each side's median (mean for counts), the shaded box the 95% confidence interval of the "
         "change, coloured by verdict.</p>\n"
      << metrics_head() << primaries << "</table>\n";
  o << "<details class=\"group\"><summary>Secondary rows that changed, and the rest</summary>"
       "\n<ul class=\"summary\">\n";
  for (const SummaryLine& l : lines)
    if (is_secondary_line(l)) o << summary_item(l);
  o << "</ul>\n<p>" << verdict_tally(c) << "; " << c.kernel_failures_b()
    << " kernel failure(s) of B; " << c.new_warnings_in_touched_files()
    << " new build warning(s) of B in files it touches.</p>\n</details>\n";
  if (c.new_warnings && !c.new_warnings->empty()) {
    o << "<p>Build warnings B adds over A (matched by file, class and message):</p>\n<ul>\n";
    for (const auto& n : *c.new_warnings)
      o << "<li" << (n.in_touched_file ? " class=\"v-regressed\"" : "") << "><code>"
        << esc(n.warning.describe()) << "</code>"
        << (n.in_touched_file ? " (in a file the series touches: counts against B)" : "")
        << "</li>\n";
    o << "</ul>\n";
  }
  o << "<p class=\"method\">method: " << esc(basis.value("text", "")) << "</p>\n";
  return o.str();
}

std::string tail_text(const std::optional<std::int64_t>& v, std::uint64_t overflows) {
  if (v) return std::to_string(*v);
  return overflows > 0 ? "beyond range" : "-";
}

std::string section_histograms(const ReportData& d) {
  const Comparison& c = d.loaded.comparison;
  std::ostringstream o;
  o << "<h2 id=\"histograms\">Latency histograms</h2>\n";
  if (c.tails.empty()) return o.str() + "<p>No histograms in these runs.</p>\n";
  o << "<p>Merged over each side's boots; count axis logarithmic; dashed lines mark p99, p99.9 "
       "and max (nearest rank). A in blue, B in orange.</p>\n";
  for (const TailRow& t : c.tails) {
    auto find = [&](const VariantData& v) -> const Histogram* {
      auto it = v.histograms.find(t.histogram);
      return it == v.histograms.end() ? nullptr : &it->second;
    };
    o << "<h3>" << esc(t.histogram) << "</h3>\n"
      << histogram_svg(t, find(d.side_a), find(d.side_b), d.cells) << "<table><tr>" << th("")
      << th("samples") << th("overflows") << th("p99 (" + t.unit + ")")
      << th("p99.9 (" + t.unit + ")") << th("p99.999 (" + t.unit + ")")
      << th("max (" + t.unit + ")") << "</tr>\n";
    for (const auto& [side, h] : {std::pair{"A", &t.a}, std::pair{"B", &t.b}}) {
      o << "<tr>" << td(side) << td(std::to_string(h->samples)) << td(std::to_string(h->overflows))
        << td(tail_text(h->p99, h->overflows)) << td(tail_text(h->p99_9, h->overflows))
        << td(tail_text(h->p99_999, h->overflows)) << td(tail_text(h->max, h->overflows))
        << "</tr>\n";
    }
    o << "</table>\n";
  }
  return o.str();
}

// The differential kernel profile (compare/profile_diff.h), when the cells carried one.
std::string section_profile(const Comparison& c) {
  if (c.profile_changes.empty()) return "";
  std::ostringstream o;
  o << "<h2 id=\"profile\">Where the kernel instructions went</h2>\n<p>Kernel functions whose "
       "instructions on the isolated CPUs changed most between A and B: mean per boot over each "
       "side's boots, from the instruction-counting plugin's per-step profiles. Informational, "
       "not tested.</p>\n<table>\n<tr>"
    << th("step") << th("CPU") << th("function") << th("A") << th("B") << th("B - A") << "</tr>\n";
  for (const ProfileChange& p : c.profile_changes)
    o << "<tr>" << td(p.step) << td(std::to_string(p.cpu)) << td(p.function, "mono")
      << td(svg::axis_num(p.a), "mono") << td(svg::axis_num(p.b), "mono")
      << td(svg::axis_num(p.diff()), "mono") << "</tr>\n";
  return o.str() + "</table>\n";
}

// "3 rows: 1 regressed, 2 no significant change", the verdicts in their order of first sight.
std::string group_tally(const std::vector<const MetricRow*>& rows) {
  std::vector<std::pair<std::string, int>> n;
  for (const MetricRow* r : rows) {
    const std::string v = verdict_name(r->verdict.verdict);
    auto it = std::find_if(n.begin(), n.end(), [&](const auto& e) { return e.first == v; });
    if (it == n.end())
      n.emplace_back(v, 1);
    else
      ++it->second;
  }
  std::string s = std::to_string(rows.size()) + (rows.size() == 1 ? " row" : " rows");
  for (std::size_t i = 0; i < n.size(); ++i)
    s += (i ? ", " : ": ") + std::to_string(n[i].second) + " " + n[i].first;
  return s;
}

// The rows other than the primaries, grouped by workload (the name up to its first '.'), each
// group folded.
std::string section_metrics(const ReportData& d) {
  const Comparison& c = d.loaded.comparison;
  std::vector<std::pair<std::string, std::vector<const MetricRow*>>> groups;
  for (const MetricRow& r : c.metrics) {
    if (r.primary) continue;
    const std::string wl = r.name.substr(0, r.name.find('.'));
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == wl; });
    if (it == groups.end()) it = groups.insert(groups.end(), {wl, {}});
    it->second.push_back(&r);
  }
  std::ostringstream o;
  o << "<h2 id=\"metrics\">Every boot, per metric</h2>\n<p>The rows other than the primaries, by "
       "workload (open a workload to see its rows). One point per boot (hover for the "
       "cell), a bar at each side's median (mean for counts); the shaded box on B's row is the "
       "95% confidence interval of the change, around A's median (A's mean plus the CI of B-A "
       "for counts), coloured by verdict.</p>\n";
  for (const auto& [wl, rows] : groups) {
    o << "<details class=\"group\"><summary><b>" << esc(wl) << "</b>: " << group_tally(rows)
      << "</summary>\n"
      << metrics_head();
    for (const MetricRow* r : rows) o << metric_row(d, *r);
    o << "</table>\n</details>\n";
  }
  return o.str();
}

// Workloads with noise details in any contributing cell, in first-seen order.
std::vector<std::string> noise_workloads(const std::vector<ReportCell>& cells) {
  std::vector<std::string> out;
  for (const ReportCell& c : cells)
    for (const auto& wl : results::noise_workloads(*c.record))
      if (std::find(out.begin(), out.end(), wl) == out.end()) out.push_back(wl);
  return out;
}

std::string section_noise(const ReportData& d) {
  std::ostringstream o;
  o << "<h2 id=\"noise\">Interruptions per isolated CPU, by cause</h2>\n<p>Per second, from the "
       "trace of each step (cells[].noise); one column per boot, A then B. softirq and "
       "timer_callbacks run inside the other causes.</p>\n";
  const auto wls = noise_workloads(d.cells);
  if (wls.empty()) return o.str() + "<p>No traced steps in these runs.</p>\n";
  for (const std::string& wl : wls) o << "<h3>" << esc(wl) << "</h3>\n" << noise_svg(wl, d.cells);
  return o.str();
}

std::string timeline_legend() {
  std::string s = "<p>";
  for (const char* c : {"vmstat_update", "workqueue_other", "local_timer", "ipi_reschedule",
                        "ipi_call_function", "irq"})
    s += std::string("<span class=\"swatch c-") + c + "\"></span>" + c;
  return s + "</p>\n";
}

std::string section_timeline(const ReportData& d) {
  std::ostringstream o;
  o << "<h2 id=\"timeline\">Interruptions during " << esc(d.timeline_workload)
    << ", one boot of each side</h2>\n";
  if (d.timelines.empty()) return o.str() + "<p>No traced step to show.</p>\n";
  o << "<p>Step " << esc(d.timeline_workload)
    << ": the traced step whose interruption rate changed most between A and B (the busiest "
       "one when none changed). Each tick is the start of one interruption on an isolated "
       "CPU, from the cell's trace; hover for the time and the function or handler.</p>\n"
    << timeline_legend();
  for (const Timeline& t : d.timelines) {
    o << "<h3>" << esc(t.side) << ": " << esc(t.cell_id) << "</h3>\n";
    if (!t.missing.empty()) {
      o << "<p>No timeline: " << esc(t.missing) << "</p>\n";
      continue;
    }
    o << "<p>" << t.marks.size() << " interruptions in " << svg::axis_num(t.window_s) << " s";
    if (t.dropped > 0) o << " (" << t.dropped << " more not drawn)";
    o << ".</p>\n" << timeline_svg(t);
  }
  return o.str();
}

std::vector<std::string> gate_checks(const std::vector<const ReportCell*>& cells) {
  std::vector<std::string> out;
  for (const ReportCell* c : cells)
    for (const auto& r : results::gate_rows(*c->record)) {
      const std::string k = scalar(r.check);
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    }
  return out;
}

std::string html_gate_cell(const ReportCell& c, const std::string& check) {
  for (const auto& r : results::gate_rows(*c.record)) {
    if (scalar(r.check) != check) continue;
    const bool pass = r.pass.value_or(false), warn = r.warning.value_or(false);
    std::string title = c.side + " " + c.id + ": expected " + scalar(r.expected) + ", effective " +
                        scalar(r.effective);
    if (!scalar(r.detail).empty()) title += " (" + scalar(r.detail) + ")";
    const char* cls = !pass ? "fail" : warn ? "warn" : "pass";
    return std::string("<td class=\"") + cls + "\" title=\"" + esc(title) + "\">" +
           (!pass  ? "FAIL"
            : warn ? "warn"
                   : "pass") +
           "</td>";
  }
  return "<td>-</td>";
}

// One run's fidelity table (results::fidelity_facts), with the fidelity and its reason in one
// cell as the dry run words it; "" when the run has none.
std::string fidelity_table(const results::RunResult& r) {
  const std::vector<results::FidelityFact> rows = results::fidelity_facts(r);
  if (rows.empty()) return "";
  std::ostringstream o;
  o << "<table>\n<tr>" << th("fact") << th("customer") << th("guest") << th("fidelity")
    << "</tr>\n";
  for (const auto& f : rows)
    o << "<tr>" << td(f.fact, "name") << td(f.customer, "wrap") << td(f.guest, "wrap")
      << td(f.why.empty() ? f.fidelity : f.fidelity + " (" + f.why + ")",
            f.fidelity == "same" ? "" : "wrap")
      << "</tr>\n";
  return o.str() + "</table>\n";
}

// How faithfully the guests stood for the customer's machine: B's run's table, and A's when A
// is another run whose table differs; "" for runs without a customer machine.
std::string section_fidelity(const ReportData& d) {
  const std::string a = fidelity_table(d.loaded.result_a);
  const std::string b = fidelity_table(d.loaded.result_b);
  if (a.empty() && b.empty()) return "";
  std::string s =
      "<h2 id=\"fidelity\">The customer's machine</h2>\n<p>How faithfully the guest stands for "
      "the customer's machine, fact by fact: same, scaled (by the rule named) or not reproduced "
      "(and why).</p>\n";
  if (a == b || a.empty()) return s + b;
  if (b.empty()) return s + "<p>A's run</p>\n" + a;
  return s + "<p>A's run</p>\n" + a + "<p>B's run</p>\n" + b;
}

std::string section_gate(const ReportData& d) {
  std::vector<const ReportCell*> cells;
  for (const auto* v : {&d.all_a, &d.all_b})
    for (const ReportCell& c : *v) cells.push_back(&c);
  std::ostringstream o;
  o << "<h2 id=\"gate\">Isolation gate</h2>\n<p>Checked in each guest before the workloads "
       "(hover a cell for expected and effective values).</p>\n<table class=\"gate\">\n<tr>"
    << th("check");
  for (const ReportCell* c : cells) o << th(c->side + " " + c->id);
  o << th("A passed") << th("B passed") << "</tr>\n";
  const auto& summary = d.loaded.comparison.gate;
  for (const std::string& check : gate_checks(cells)) {
    o << "<tr>" << td(check);
    for (const ReportCell* c : cells) o << html_gate_cell(*c, check);
    auto it = std::find_if(summary.begin(), summary.end(),
                           [&](const GateSummaryRow& r) { return r.check == check; });
    if (it == summary.end()) {
      o << td("-") << td("-");
    } else {
      o << td(std::to_string(it->a_pass) + "/" + std::to_string(it->a_total))
        << td(std::to_string(it->b_pass) + "/" + std::to_string(it->b_total));
    }
    o << "</tr>\n";
  }
  return o.str() + "</table>\n";
}

std::string patches_html(const results::VariantRecord& v) {
  const std::vector<results::PatchShown> patches = results::patches_shown(v);
  if (patches.empty()) return "none";
  std::string s = "<ul>";
  for (const auto& p : patches) {
    const std::string subject = shown(p.subject);
    s += "<li>" + esc(subject) + (subject.empty() ? "" : " ") + "<code>" + esc(shown(p.path)) +
         "</code> sha256 <code>" + esc(shown(p.sha256).substr(0, 16)) + "</code></li>";
  }
  return s + "</ul>";
}

std::string variant_rows(const std::string& side, const results::RunResult& run,
                         const std::string& variant) {
  const results::VariantRecord none;
  const results::VariantRecord& v = run.variant(variant) ? *run.variant(variant) : none;
  std::ostringstream o;
  o << "<tr>" << td(side) << td(variant) << td(shown(v.kernel_release.value_or("")), "mono")
    << "<td>" << patches_html(v) << "</td>"
    << td(shown(v.config_sha256.value_or("")).substr(0, 16), "mono")
    << td(shown(v.cmdline.value_or("")), "mono wrap") << "</tr>\n";
  return o.str();
}

// /proc/cmdline as the first boot of a side saw it.
std::string proc_cmdline(const std::string& side, const std::vector<ReportCell>& cells) {
  if (cells.empty()) return "";
  return "<p>/proc/cmdline of " + esc(side + " " + cells.front().id) + ":</p><pre class=\"wrap\">" +
         esc(shown(results::cell_notes(*cells.front().record).guest_cmdline)) + "</pre>\n";
}

std::string host_table(const std::string& label, const results::RunResult& run) {
  std::ostringstream o;
  o << "<h3>Host of " << esc(label) << " (run " << esc(shown(run.run_id.value_or("")))
    << ")</h3>\n<table>\n";
  for (const auto& [k, v] : results::host_fields(run))
    o << "<tr>" << th(k) << td(shown(v), "mono") << "</tr>\n";
  return o.str() + "</table>\n";
}

std::string section_provenance(const ReportData& d) {
  const LoadedComparison& l = d.loaded;
  std::ostringstream o;
  o << "<h2 id=\"kernels\">Kernels, patches, command line, host</h2>\n<table>\n<tr>" << th("")
    << th("variant") << th("kernel release") << th("patches") << th(".config sha256")
    << th("isolation command line (spec)") << "</tr>\n"
    << variant_rows("A", l.result_a, l.variant_a) << variant_rows("B", l.result_b, l.variant_b)
    << "</table>\n"
    << proc_cmdline("A", d.all_a) << proc_cmdline("B", d.all_b);
  const std::set<std::string>& acc_a = d.side_a.cell_accelerators;
  const std::set<std::string>& acc_b = d.side_b.cell_accelerators;
  auto join = [](const std::set<std::string>& s) {
    std::string r;
    for (const auto& x : s) r += (r.empty() ? "" : ", ") + x;
    return r.empty() ? std::string("-") : r;
  };
  o << "<p>Accelerator used by the boots: A " << esc(join(acc_a)) << ", B " << esc(join(acc_b))
    << ". " << esc(shown(results::accelerator_reason(l.result_b))) << "</p>\n";
  o << host_table("A", l.result_a);
  if (l.dir_a != l.dir_b) o << host_table("B", l.result_b);
  return o.str();
}

std::string section_cells(const ReportData& d) {
  std::ostringstream o;
  o << "<h2 id=\"cells\">Boots</h2>\n<table>\n<tr>" << th("side") << th("cell") << th("status")
    << th("failure") << th("reason") << th("accelerator") << th("uname -r") << th("gate")
    << th("seconds") << "</tr>\n";
  for (const auto* v : {&d.all_a, &d.all_b}) {
    for (const ReportCell& c : *v) {
      const results::CellRecord& j = *c.record;
      const results::CellNotes notes = results::cell_notes(j);
      const std::string status = j.status ? std::string(results::to_string(*j.status)) : "";
      o << "<tr>" << td(c.side) << td(c.id, "mono") << td(status, status == "ok" ? "pass" : "fail")
        << td(j.failure_class_name()) << td(shown(j.reason.value_or("")))
        << td(shown(j.accelerator.value_or(""))) << td(shown(notes.guest_uname_r), "mono")
        << td(shown(notes.gate_reason)) << td(svg::axis_num(notes.wall_seconds)) << "</tr>\n";
    }
  }
  return o.str() + "</table>\n";
}

std::string section_text(const Comparison& c) {
  return "<h2 id=\"text\">isolab compare</h2>\n<details><summary>The text report</summary><pre>" +
         esc(render_text(c, {.all_rows = true})) + "</pre></details>\n";
}

}  // namespace

std::string render_html_report(const ReportData& d) {
  const Comparison& c = d.loaded.comparison;
  std::ostringstream o;
  o << head(c) << "<body>\n"
    << section_header(d) << section_answer(d) << section_histograms(d) << section_metrics(d)
    << section_profile(c) << section_noise(d) << section_timeline(d) << section_fidelity(d)
    << section_gate(d) << section_provenance(d) << section_cells(d) << section_text(c)
    << "</body>\n</html>\n";
  return o.str();
}

}  // namespace isolab
