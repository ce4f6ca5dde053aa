// How one value, cell or metric table is written, shared by the renderers of a Comparison
// (report/text.h, json.h, markdown.h, junit.h, summary.h); not a public API of the area.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare.h"

namespace isolab::report_detail {

// printf(f, v), "n/a" when v is not finite.
std::string num(double v, const char* f = "%.8g");
// A histogram bucket: its value, else "overflow" (the samples overflowed) or "n/a".
std::string opt_bucket(const std::optional<std::int64_t>& v, std::uint64_t overflows);
// JSON numbers: null when not finite or absent.
nlohmann::json jnum(double v);
nlohmann::json jopt(const std::optional<double>& v);
nlohmann::json jbucket(const std::optional<std::int64_t>& v);
// {"n","median","mean","stddev","min","max","cv","values"}.
nlohmann::json stats_json(const SampleStats& s, const std::vector<double>& values);

bool is_count(const MetricRow& r);  // a count row with its count test
// Whether a row's verdict rests on ranks and its change on medians: a timing, or a primary
// declared with "test": "ranks" (spec/primary.h).
bool by_ranks(const MetricRow& r);
bool is_instructions(const MetricRow& r);   // an instruction row with its count test, not by_ranks
bool is_timing_row(const MetricRow& r);     // neither: reported with medians
const char* role_name(const MetricRow& r);  // "primary" | "secondary"
// The p a row's verdict rests on: Holm's (primary) or the family-wise p (secondary) when
// computed, else the row's own one-sided (primary) or two-sided p.
double decisive_p(const MetricRow& r);
// Its name in summary lines: "Holm p", "one-sided p", "family-wise p" or "p".
std::string decisive_p_name(const MetricRow& r);
bool has_both(const MetricRow& r);                // both sides have samples
std::string p_text(const MetricRow& r);           // "%.3g", "n/a" without both sides
std::string adjusted_p_text(const MetricRow& r);  // the family p, "n/a" when none
// p for a summary line: 3 decimals ("0.008"), two significant digits below 0.001.
std::string p_short(double p);
// "5-7" (the kernel's list format), "" for no CPUs.
std::string cpu_list_text(const std::vector<unsigned>& cpus);
bool moved(const MetricRow& r);  // improved or regressed
// s padded with spaces to w code points ("µs" is 2), on the left when right-aligned.
std::string pad(const std::string& s, std::size_t w, bool right = false);
// "3/3 PASS", "1/3 FAIL", "-" (no cell ran the check).
std::string gate_cell(std::size_t pass, std::size_t total);
std::string verdict_cell(const MetricRow& r);  // the verdict's name
// Width of a cell in code points ("µs" is 2).
std::size_t width_of(const std::string& s);
// text's words (split on spaces) filled into lines of at most `width` code points, the first
// line starting with `first`, the others with `rest`, each ending in "\n"; a word longer than a
// line stands alone on its own. "" for a text without words.
std::string wrap(const std::string& text, std::size_t width, const std::string& first,
                 const std::string& rest);

// A column of a metric table: its header, alignment and cell.
struct Column {
  std::string header;
  bool right = false;
  std::string (*cell)(const MetricRow&) = nullptr;
};
using RowFilter = bool (*)(const MetricRow&);

// The columns of one kind's table; `interval` names the interval ("95% CI", or "CI"):
// metric, unit, (counts: CPUs), A and B medians (timings) or means, the change with its
// interval (format_change below), p, adj p, nA, nB, role, verdict.
std::vector<Column> table_columns(MetricKind kind, const std::string& interval);
// The rows of c that `keep` accepts, in order.
std::vector<const MetricRow*> rows_where(const Comparison& c, RowFilter keep);

// Change with its interval (MetricTest::interval). Timing and instructions: percent,
// "-3.75% [-5.1, -2.2]"; "-3.75% [-inf, +inf]" when these boots bound neither end, "[CI n/a]"
// when there is no interval, "n/a" when the change is undefined. Count: B-A in the metric's
// unit with its interval and the relative change of means, "-0.98/s [-1.2, -0.78] (-100.00%)";
// "(new)" when A was 0 in every boot.
std::string format_change(const MetricRow& row);

}  // namespace isolab::report_detail
