// Renderers of a Comparison: text table, JSON, Markdown and JUnit XML.
//
// Every format shows: which runs/variants/kernels are compared, then the summary (below, whose
// first line says what the exit status rests on), n per variant, the settings that decided the
// verdicts, a FORCED banner with the list of comparison-key differences when the comparison was
// forced, one row per metric row with its role (primary or secondary), its own p and its adjusted
// p (Holm for primary rows, Westfall-Young for secondary ones) in three tables (timings; counts
// on the isolated CPUs, with their per-CPU rows: per-boot means, B-A with its interval, relative
// change; instruction counts), the histogram tails, the max-latency traces of latency_tracer
// steps (one line per cell: latency, woken task, the top frames of the switch-side stack), the
// kernel failures per class (counted against B or not, and why), the isolation gate per check
// (with B's systematic failures), and the invalid/failed cells with their reasons and failed gate
// checks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare/compare.h"

namespace isolab {

enum class ReportFormat { text, json, markdown, junit };

// "text" | "json" | "markdown" | "junit"; throws isolab::Error naming the bad value otherwise.
ReportFormat parse_report_format(const std::string& s);

// Change with its interval (MetricTest::interval). Timing and instructions: percent,
// "-3.75% [-5.1, -2.2]"; "-3.75% [-inf, +inf]" when these boots bound neither end, "[CI n/a]"
// when there is no interval, "n/a" when the change is undefined. Count: B-A in the metric's
// unit with its interval and the relative change of means, "-0.98/s [-1.2, -0.78] (-100.00%)";
// "(new)" when A was 0 in every boot.
std::string format_change(const MetricRow& row);

// "Say it first": what the exit status rests on and what changed, before any table. In order:
//  1. the basis: "exit status N: rests on K primary metrics (one-sided, Holm at alpha A): <row>
//     (higher is bad), ..., and on failures counted against B (...); M secondary metric rows are
//     reported and never set it", or, with none declared, "exit status N: no primary metric
//     declared (spec compare.primary or --primary), so it rests on failures counted against B
//     (...) only; ...";
//  2. one line per primary row, whatever its verdict;
//  3. one line per kernel-failure class either side had ("kernel failure rcu_stall: B 1 of 5
//     boots, A 0 of 5 boots; TCG or overcommitted cells, compared as rates: one-sided Fisher
//     p = 0.5 >= alpha: not counted against B"), per gate check B failed ("isolation gate
//     <check>: B failed it in ...: regressed"), the new build warnings in touched files, and the
//     metrics missing in more B boots than A boots (flagged, not an exit by itself);
//  4. one line per secondary count row that improved or regressed, then per other secondary row;
//  5. the closing line for the secondary rows: "secondary: no significant change in N of M
//     metric rows (C of them counts on the isolated CPUs), I inconclusive; family-wise p by
//     Westfall-Young min-P over R relabellings of the boots (all of them)".
// A count row's line:
//   "primary: vmstat-idle: vmstat_update on CPU 6: 0/s -> 3.1/s (new), regressed, Holm p = 0.004"
// (role; metric "<wl>.noise.<cause>[_per_s]" becomes "<wl>: <cause>", any other name is kept;
// rates are per-boot means; the CPUs are the row's; "(new)" after a rate that was 0 in every A
// boot; the p its verdict rests on: "Holm p" or "one-sided p" for primary rows, "family-wise p"
// or "p" for secondary ones). A timing (medians) or instruction (means) row's line:
//   "secondary: vmstat-syscall.cycles_per_syscall: 7400 -> 8140 cycles (+10.00%), regressed,
//    family-wise p = 0.008".
// `detail` is the JSON form: {"kind" ("basis", "count", "timing", "instructions", "failure",
// "gate", "build-warnings", "missing", "secondary"), "verdict", "text", and for a row line
// "metric", "role", "unit", "a", "b", "p", "p_name" (a count line also "label", "cpus"; a
// timing or instruction line "change_pct"); for the basis "primary" (row names),
// "primary_origin", "secondary", "exit_status"; for the closing line "rows", "no_change",
// "inconclusive", "relabellings", "exact"}.
struct SummaryLine {
  std::string text;
  nlohmann::json detail;
};
std::vector<SummaryLine> summarize(const Comparison& c);

// Fixed-width tables for a terminal:
//   metric  unit  A median  B median  change [95% CI]  p  adj p  nA  nB  role  verdict
// (counts: CPUs, A mean, B mean, B-A [95% CI] (change); instructions: A mean, B mean), then why
// each row that is not a plain "no significant change" got its verdict, and the sections above.
std::string render_text(const Comparison& c);

// {"schema":"isolab-comparison","version":1, "run_a","run_b","variant_a","variant_b",
//  "kernel_a","kernel_b","spec_name","forced","differences","settings":{...},"host_sensitive",
//  "metrics":[{"name","metric","unit","better","kind","cpus","derived","tcg","role",
//              "a":{n,median,mean,stddev,min,max,cv,values},"b":{...},"missing_a","missing_b",
//              "change_pct","ci_low_pct","ci_high_pct","interval":{"low","high","low_bounded",
//              "high_bounded","level","unit" ("percent" or the metric's),"reassignments"},
//              "test" ("midrank-permutation"|"permutation-mean"|"stratified-..."),"p_value",
//              "p_exact","min_p","one_sided_p","family_p","family" ("holm"|"westfall-young"),
//              "permutation_p","mann_whitney_p","threshold_pct","margin","margin_relative",
//              "cannot_exclude","cannot_exclude_unbounded","verdict","reason",
//              primary rows: "bad","declared"; counts and instructions: "count":{"mean_a",
//              "mean_b","diff","diff_ci_low","diff_ci_high","relative_change_pct" (null when A
//              was 0),"new","min_p","reassignments","floor"}}],
//  "tails":[{"histogram","unit","a":{samples,overflows,p99,p99_9,max},"b":{...}}],
//  "profile_changes":[{"step","cpu","function","a","b","cells_a","cells_b"}] (kernel
//                      instructions per boot, compare/profile_diff.h),
//  "latency_traces":[{"variant","side":"A"|"B","cell_id","workload","tracer","max_latency_us",
//                     "task","cpu","frames","file"}] (compare.h LatencyTraceRow),
//  "gate":[{"check","a_pass","a_total","b_pass","b_total","p","against_b","reason"}],
//  "failures":[{"failure_class","a_cells","a_total","b_cells","b_total","as_rates","p",
//               "against_b","reason"}],
//  "issues":[{"side","variant","cell_id","status","failure_class","reason","gate_failures",
//             "kernel_failure","against_b"}],
//  "summary":{"improved","regressed","no_change","inconclusive" (every row),"primary":{...},
//             "secondary":{...} (the same four per role),"primary_regressions",
//             "kernel_failures_b","kernel_failure_regressions","gate_regressions",
//             "new_warnings_in_touched_files","regressions","exit_status","basis" (text),
//             "family":{"primary","secondary","relabellings","exact"},"missing_more_in_b":
//             [{"metric","missing_a","missing_b"}],"lines":[summarize() details, in order]}}
// Undefined numbers (NaN, infinite) are null.
nlohmann::json render_json(const Comparison& c);

// GitHub-flavoured Markdown tables, for a mailing-list reply or a pull request; '|' and other
// table-breaking characters in values are escaped.
std::string render_markdown(const Comparison& c);

// JUnit XML following the structure of the Jenkins xUnit plugin's junit-10.xsd (one
// <testsuites> with one <testsuite name tests failures errors skipped time>): one <testcase
// classname="isolab.compare.<spec>.primary|secondary" name="<row>"> per metric row; only a
// primary "regressed" is a <failure> (a secondary one passes, its <system-out> saying it does not
// set the exit status), "inconclusive" is <skipped>; testcase "kernel-health.<B>" fails when a
// kernel-failure class counts against B, "isolation-gate.<B>" (when a cell was gated) when a gate
// check does, "build-warnings.<B>" when a new warning is in a file B's series touches. Settings,
// the exit status basis, forced and differences are <properties>; the text report is the
// suite's <system-out>. Every attribute and text value is XML-escaped, characters not allowed in
// XML 1.0 and invalid UTF-8 bytes become '?'.
std::string render_junit(const Comparison& c);

std::string render(const Comparison& c, ReportFormat f);

// Escapes & < > " ' for XML text and attributes and replaces characters not allowed in XML 1.0
// (controls other than tab/LF/CR) and invalid UTF-8 bytes with '?'.
std::string xml_escape(const std::string& s);

}  // namespace isolab
