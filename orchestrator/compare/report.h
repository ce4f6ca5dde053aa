// Renderers of a Comparison: text table, JSON, Markdown and JUnit XML.
//
// Every format shows: which runs/variants/kernels are compared, then the summary (below), n per
// variant, the settings that decided the verdicts, a FORCED banner with the list of
// comparison-key differences when the comparison was forced, one row per metric (count metrics
// in their own table: per-boot means, B-A with its bootstrap CI, relative change, permutation
// p), the histogram tails, the max-latency traces of latency_tracer steps (one line per cell:
// latency, woken task, the top frames of the switch-side stack), and the invalid/failed cells with
// their reasons and failed gate checks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare/compare.h"

namespace isolab {

enum class ReportFormat { text, json, markdown, junit };

// "text" | "json" | "markdown" | "junit"; throws isolab::Error naming the bad value otherwise.
ReportFormat parse_report_format(const std::string& s);

// Change with its confidence interval. Timing: percent, "-3.75% [-5.1, -2.2]"; "-3.75% [CI n/a]"
// when there is no interval, "n/a" when the change is undefined. Count: B-A in the metric's
// unit with its CI and the relative change of means, "-0.98/s [-1.2, -0.78] (-100.00%)";
// "(new)" when A was 0 in every boot, "[CI n/a]" without an interval.
std::string format_change(const MetricRow& row);

// "Say it first": what changed on the isolated CPUs, before any table. In order: one line per
// count metric whose verdict is improved or regressed, then one per timing metric that is, then
// one closing line for the remaining count metrics. Text of a count line:
//   "vmstat-syscall: vmstat_update on CPUs 5-7: 0.98/s -> 0/s, improved, p = 0.008"
// (metric "<wl>.noise.<cause>[_per_s]" becomes "<wl>: <cause>", any other name is kept; rates
// are per-boot means; the CPUs are the union of the metric's "cpus"; "(new)" after a rate that
// was 0 in every A boot). A timing line:
//   "vmstat-syscall.cycles_per_syscall: 7400 -> 8140 cycles (+10.00%), regressed, p = 0.008"
// (medians). The closing line: "no significant change on the isolated CPUs in N count
// metric(s)" plus ", M inconclusive" when some are, or "no count metrics of the isolated CPUs
// in these runs". `detail` is the JSON form: {"metric","kind","verdict","text", and for a count
// line "label","cpus" (list, "5-7"),"unit","a","b" (means),"p"; for a timing line "unit",
// "a","b" (medians),"change_pct","p"; for the closing line "no_change","inconclusive"}.
struct SummaryLine {
  std::string text;
  nlohmann::json detail;
};
std::vector<SummaryLine> summarize(const Comparison& c);

// Fixed-width table for a terminal:
//   metric  unit  A median  B median  change [95% CI]  p  nA  nB  verdict
std::string render_text(const Comparison& c);

// {"schema":"isolab-comparison","version":1, "run_a","run_b","variant_a","variant_b",
//  "kernel_a","kernel_b","spec_name","forced","differences":[...],"settings":{...},
//  "metrics":[{"name","unit","better","a":{n,median,mean,stddev,min,max,cv,values},"b":{...},
//              "change_pct","ci_low_pct","ci_high_pct","p_value","p_exact","permutation_p",
//              "threshold_pct","verdict","reason"}],
//  "tails":[{"histogram","unit","a":{samples,overflows,p99,p99_9,max},"b":{...}}],
//  "latency_traces":[{"variant","side":"A"|"B","cell_id","workload","tracer","max_latency_us",
//                     "task","cpu","frames","file"}] (compare.h LatencyTraceRow),
//  "issues":[{"side","variant","cell_id","status","failure_class","reason","gate_failures",
//             "kernel_failure"}],
//  "summary":{"improved","regressed","no_change","inconclusive","kernel_failures_b",
//             "regressions","exit_status","lines":[summarize() details, in order]}}
// A metric also carries "kind" ("timing"|"count"), "cpus" (list text, "" when none), "tcg",
// "test" ("mann-whitney"|"permutation-mean"); p_value/p_exact are those of its kind's test;
// a count metric has "count":{"mean_a","mean_b","diff","diff_ci_low","diff_ci_high",
// "relative_change_pct" (null when A was 0),"new","min_p","reassignments","floor"}.
// Undefined numbers (NaN) are null.
nlohmann::json render_json(const Comparison& c);

// GitHub-flavoured Markdown tables, for a mailing-list reply or a pull request; '|' and other
// table-breaking characters in values are escaped.
std::string render_markdown(const Comparison& c);

// JUnit XML following the structure of the Jenkins xUnit plugin's junit-10.xsd (one
// <testsuites> with one <testsuite name tests failures errors skipped time>): one <testcase
// classname="isolab.compare.<spec>" name="<metric>"> per metric, "regressed" as <failure>,
// "inconclusive" as <skipped>; one testcase "kernel-health" that fails when B had kernel
// failures. Settings, forced and differences are <properties>; the text report is the suite's
// <system-out>. Every attribute and text value is XML-escaped, characters not allowed in XML 1.0
// and invalid UTF-8 bytes become '?'.
std::string render_junit(const Comparison& c);

std::string render(const Comparison& c, ReportFormat f);

// Escapes & < > " ' for XML text and attributes and replaces characters not allowed in XML 1.0
// (controls other than tab/LF/CR) and invalid UTF-8 bytes with '?'.
std::string xml_escape(const std::string& s);

}  // namespace isolab
