// `isolab report` / `isolab compare --format html`: one self-contained HTML page (styles, the
// check script and the SVG plots inline; nothing is fetched when it is opened).
//
// Sections, in order: what was compared; the answer, as the first screen of `isolab compare`
// says it (report/summary.h: the verdict and exit status, the lines that decided it, the gate,
// what could not be decided), then the primary metrics with every boot plotted, the secondary
// rows that changed (folded), the new build warnings and the method; latency histograms; the
// other rows with every boot, the change and its verdict, grouped by workload and folded;
// interruptions per isolated CPU by cause and cell; the interruption timeline of one cell of A
// and one of B (data.h choose_timeline_workload); the isolation gate per cell; kernels,
// patches, command line, host fingerprint and accelerator; the cells and their status; the text
// report of `isolab compare`.
//
// Every string from a guest, a spec or a result file is escaped with xml_escape (report.h):
// a kernel can print "<script>". The page's only script (in <head>) records script errors and,
// after load, writes on <body>: data-first-screen (the data-answer names of the elements wholly
// inside the window as the page opens: "verdict", "primary:<metric>"), data-errors (the errors
// seen), data-plots (number of plots) and per <svg data-plot>: data-marks (data-mark elements)
// and data-rendered (those the browser laid out with a non-empty box, measured with every folded
// group opened, then folded again); tests read these from the DOM.
#pragma once

#include <string>

#include "report/data.h"

namespace isolab {

std::string render_html_report(const ReportData& data);

}  // namespace isolab
