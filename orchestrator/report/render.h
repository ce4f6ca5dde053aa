// Every output format of a Comparison but the HTML page (report/html.h): text, JSON, Markdown
// and JUnit XML, one file each (report/text.h, json.h, markdown.h, junit.h), with the summary
// wording they share (report/summary.h).
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

#include <string>

#include "base/xml_text.h"
#include "compare/compare.h"
#include "report/json.h"
#include "report/junit.h"
#include "report/markdown.h"
#include "report/summary.h"
#include "report/text.h"

namespace isolab {

enum class ReportFormat { text, json, markdown, junit };

// "text" | "json" | "markdown" | "junit"; throws isolab::Error naming the bad value otherwise.
ReportFormat parse_report_format(const std::string& s);

// The report in format f (JSON: render_json() indented by 2, invalid UTF-8 replaced, and a
// final newline).
std::string render(const Comparison& c, ReportFormat f);

}  // namespace isolab
