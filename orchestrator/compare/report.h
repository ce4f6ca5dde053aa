// Renderers of a Comparison: text table, JSON, Markdown and JUnit XML.
//
// Every format shows: which runs/variants/kernels are compared, n per variant, the settings
// that decided the verdicts, a FORCED banner with the list of comparison-key differences when
// the comparison was forced, one row per metric, the histogram tails, and the invalid/failed
// cells with their reasons and failed gate checks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compare/compare.h"

namespace isolab {

enum class ReportFormat { text, json, markdown, junit };

// "text" | "json" | "markdown" | "junit"; throws isolab::Error naming the bad value otherwise.
ReportFormat parse_report_format(const std::string& s);

// Change with its confidence interval, percent: "-3.75% [-5.1, -2.2]"; "-3.75% [CI n/a]" when
// there is no interval, "n/a" when the change is undefined.
std::string format_change(const MetricRow& row);

// Fixed-width table for a terminal:
//   metric  unit  A median  B median  change [95% CI]  p  nA  nB  verdict
std::string render_text(const Comparison& c);

// {"schema":"isolab-comparison","version":1, "run_a","run_b","variant_a","variant_b",
//  "kernel_a","kernel_b","spec_name","forced","differences":[...],"settings":{...},
//  "metrics":[{"name","unit","better","a":{n,median,mean,stddev,min,max,cv,values},"b":{...},
//              "change_pct","ci_low_pct","ci_high_pct","p_value","p_exact","permutation_p",
//              "threshold_pct","verdict","reason"}],
//  "tails":[{"histogram","unit","a":{samples,overflows,p99,p99_9,max},"b":{...}}],
//  "issues":[{"side","variant","cell_id","status","failure_class","reason","gate_failures",
//             "kernel_failure"}],
//  "summary":{"improved","regressed","no_change","inconclusive","kernel_failures_b",
//             "regressions","exit_status"}}
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
