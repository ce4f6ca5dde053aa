// oslat's text summary (parse/oslat.h has the format, parse/oslat_text.h the contract).
#include "parse/oslat_text.h"

#include <array>
#include <set>

#include "base/error.h"
#include "base/text.h"
#include "parse/oslat_detail.h"
#include "parse/text_util.h"

namespace isolab {

using parse_detail::line_error;
using parse_detail::split_ws;
using parse_detail::to_double;
using parse_detail::to_long;
using parse_detail::trim;

namespace {

constexpr std::string_view kWhat = "oslat text";

enum class Field { core, freq, min, avg, max, duration, ignored };

// The labels of every oslat version (parse/oslat.h), the unit each may carry ('|' between
// choices, "" for none), and whether the row is the xzpeter/oslat v0.1.x spelling.
struct RowKind {
  std::string_view label;
  Field field;
  std::string_view units;
};

constexpr std::array<RowKind, 16> kRows = {{
    {"Core", Field::core, ""},
    {"core_i", Field::core, ""},
    {"CPU Freq", Field::freq, "(Mhz)|(MHz)"},
    {"Counter Freq", Field::freq, "(Mhz)|(MHz)"},
    {"cpu_mhz", Field::freq, ""},
    {"Minimum", Field::min, "(us)"},
    {"Min Latency", Field::min, "(us)"},
    {"Average", Field::avg, "(us)"},
    {"Maximum", Field::max, "(us)"},
    {"Max Latency", Field::max, "(us)"},
    {"maxlat", Field::max, "(us)"},
    {"Max-Min", Field::ignored, "(us)"},
    {"MaxLat-Bias", Field::ignored, "(us)"},
    {"Variance", Field::ignored, "(us)"},
    {"Duration", Field::duration, "(sec)"},
    {"runtime", Field::duration, "(sec)"},
}};

const RowKind* row_kind(std::string_view label) {
  for (const RowKind& k : kRows)
    if (k.label == label) return &k;
  return nullptr;
}

bool unit_allowed(std::string_view units, std::string_view unit) {
  while (true) {
    const std::size_t bar = units.find('|');
    if (units.substr(0, bar) == unit) return true;
    if (bar == std::string_view::npos) return false;
    units.remove_prefix(bar + 1);
  }
}

// "  Maximum:\t 14 17 (us)" -> label "Maximum", values, unit "(us)".
struct Row {
  std::string_view label;
  std::vector<std::string_view> values;
  std::string_view unit;
};

std::optional<Row> split_row(std::string_view line) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  Row row;
  row.label = trim(line.substr(0, colon));
  std::string_view rest = line.substr(colon + 1);
  const std::size_t paren = rest.find('(');
  row.values = split_ws(rest.substr(0, paren));
  if (paren != std::string_view::npos) row.unit = trim(rest.substr(paren));
  return row;
}

// "001 (us)" / "0.250 (us)" -> the label in ns; nullopt for other labels.
std::optional<long long> bucket_label(std::string_view label, bool* decimals) {
  constexpr std::string_view kUs = " (us)";
  if (label.size() <= kUs.size() || label.substr(label.size() - kUs.size()) != kUs)
    return std::nullopt;
  label.remove_suffix(kUs.size());
  *decimals = *decimals || oslat_detail::label_has_decimals(label);
  return oslat_detail::label_ns(label);
}

// What the lines outside the table said.
struct Header {
  std::size_t banner = 0, starts = 0, completed = 0, usage = 0, error = 0;
  std::string error_line;
};

struct Scan {
  std::size_t table = 0;  // line of the Core row; 0 before one
  std::size_t done = 0;   // line of the Duration row; 0 before it
  std::size_t last = 0;   // the last line of the table read
  std::string table_text;
  std::vector<std::string_view> core_values;
  std::map<Field, std::vector<std::string_view>> fields;
  std::map<long long, std::vector<std::string_view>> buckets;  // label ns -> column values
  std::optional<long long> overflow_label;
  bool omitted = false, decimals = false, v01 = false;
  Header header;
  std::string version;
};

void read_bucket_row(const Row& row, long long label, std::size_t n, std::string_view line,
                     Scan& s) {
  if (s.overflow_label)
    throw line_error(kWhat, n, line, "a bucket after the one \"(including overflows)\"");
  if (!row.unit.empty() && row.unit != "(including overflows)")
    throw line_error(kWhat, n, line, "a bucket row ends with " + std::string(row.unit));
  if (!row.unit.empty()) s.overflow_label = label;
  if (!s.buckets.emplace(label, row.values).second)
    throw line_error(kWhat, n, line, "the same bucket twice");
}

// One line inside the table (after its Core row, before its Duration row).
void read_table_line(std::string_view line, std::size_t n, Scan& s) {
  s.last = n;
  if (line == "...") {
    s.omitted = true;
    return;
  }
  const std::optional<Row> row = split_row(line);
  if (!row) throw line_error(kWhat, n, line, "not a row of oslat's summary table");
  if (row->values.size() != s.core_values.size())
    throw line_error(kWhat, n, line,
                     std::to_string(row->values.size()) + " values for " +
                         std::to_string(s.core_values.size()) + " CPUs");
  if (auto label = bucket_label(row->label, &s.decimals)) {
    read_bucket_row(*row, *label, n, line, s);
    return;
  }
  const RowKind* kind = row_kind(row->label);
  if (!kind) throw line_error(kWhat, n, line, "unknown row of oslat's summary table");
  if (!unit_allowed(kind->units, row->unit))
    throw line_error(kWhat, n, line,
                     "unit " + std::string(row->unit.empty() ? "(none)" : row->unit) +
                         ", expected " + std::string(kind->units.empty() ? "none" : kind->units));
  if (kind->field == Field::core) throw line_error(kWhat, n, line, "a second Core row");
  if (!s.fields.emplace(kind->field, row->values).second && kind->field != Field::ignored)
    throw line_error(kWhat, n, line, "the same row twice");
  if (kind->field == Field::duration) s.done = n;
}

void read_header_line(std::string_view line, std::size_t n, Scan& s) {
  Header& h = s.header;
  if (line.starts_with("oslat V ") && !h.banner) {
    h.banner = n;
    s.version = std::string(trim(line.substr(8)));
  } else if (line.starts_with("Version: v") && !h.banner) {
    h.banner = n;
    s.version = std::string(trim(line.substr(9)));
  } else if (line == "Test starts...") {
    h.starts = n;
  } else if (line == "Test completed.") {
    h.completed = n;
  } else if (line == "Usage:") {
    h.usage = n;
  } else if (line.starts_with("ERROR:") && !h.error && !trim(line.substr(6)).empty()) {
    h.error = n;
    h.error_line = std::string(line);
  }
}

// A line outside the table: a header fact, or the Core row that starts the table.
void read_outside_line(std::string_view line, std::size_t n, Scan& s) {
  const std::optional<Row> row = split_row(line);
  const RowKind* kind = row ? row_kind(row->label) : nullptr;
  if (!kind || kind->field != Field::core) {
    read_header_line(line, n, s);
    return;
  }
  if (s.table)
    throw line_error(kWhat, n, line,
                     "a second summary table (the first starts at line " + std::to_string(s.table) +
                         "): give one oslat run per file");
  if (row->values.empty() || !row->unit.empty())
    throw line_error(kWhat, n, line, "a Core row without CPUs");
  s.table = s.last = n;
  s.table_text = std::string(line);
  s.core_values = row->values;
  s.v01 = row->label == "core_i";
}

// Why text without a complete table is no measurement.
Error no_table_error(const Scan& s) {
  const Header& h = s.header;
  if (s.table)
    return Error(std::string(kWhat) + ": the summary table at line " + std::to_string(s.table) +
                 " is cut short after line " + std::to_string(s.last) +
                 ": no Duration row (the run or its capture ended early)");
  if (h.error && h.error_line.find("libnuma") != std::string::npos)
    return Error(std::string(kWhat) + ": line " + std::to_string(h.error) +
                 ": oslat could not initialize libnuma (numa_available() fails on a kernel "
                 "without CONFIG_NUMA, e.g. a guest kernel without kernel-configs/numa.config): "
                 "no measurement");
  if (h.error) return line_error(kWhat, h.error, h.error_line, "oslat failed: no measurement");
  if (h.usage)
    return Error(std::string(kWhat) + ": line " + std::to_string(h.usage) +
                 ": oslat printed its usage text, not results: it refused its options");
  if (h.completed)
    return Error(std::string(kWhat) + ": line " + std::to_string(h.completed) +
                 ": \"Test completed.\" but no summary table follows: the output is cut short");
  if (h.starts)
    return Error(std::string(kWhat) + ": line " + std::to_string(h.starts) +
                 ": the test started but never completed (no \"Test completed.\", no summary "
                 "table): the run was cut short");
  if (h.banner)
    return Error(std::string(kWhat) + ": line " + std::to_string(h.banner) +
                 ": an oslat header but no summary table: the run was cut short");
  return Error(std::string(kWhat) + ": no oslat summary table (no \"Core:\" row)");
}

std::optional<double> number(std::string_view v, bool nan_ok, const std::string& where) {
  if (nan_ok && (v == "nan" || v == "-nan")) return std::nullopt;
  const auto d = to_double(v);
  if (!d || *d < 0)
    throw Error(std::string(kWhat) + ": " + where + ": not a number: " + std::string(v));
  return d;
}

long integer(std::string_view v, const std::string& where) {
  const auto x = to_long(v);
  if (!x || *x < 0)
    throw Error(std::string(kWhat) + ": " + where + ": not a count: " + std::string(v));
  return *x;
}

// Column i of the table as a thread.
OslatThread column(const Scan& s, std::size_t i) {
  OslatThread t;
  t.index = static_cast<int>(i);
  const long cpu = integer(s.core_values[i], "line " + std::to_string(s.table) + ", Core");
  if (cpu > 1'000'000) throw Error(std::string(kWhat) + ": CPU " + std::to_string(cpu) + "?");
  t.cpu = static_cast<int>(cpu);
  const auto at = [&](Field f) -> const std::string_view* {
    auto it = s.fields.find(f);
    return it == s.fields.end() ? nullptr : &it->second[i];
  };
  const std::string col = "column " + std::to_string(i + 1);
  if (auto v = at(Field::freq)) t.counter_mhz = integer(*v, col + " Freq");
  if (auto v = at(Field::min)) t.min_us = number(*v, true, col + " Minimum");
  if (auto v = at(Field::avg)) t.avg_us = number(*v, true, col + " Average");
  if (auto v = at(Field::max)) t.max_us = number(*v, true, col + " Maximum");
  if (auto v = at(Field::duration)) t.duration_s = number(*v, false, col + " Duration");
  for (const auto& [label, values] : s.buckets)
    if (long n = integer(values[i], col + " bucket " + std::to_string(label) + " ns"))
      t.buckets[label] = n;
  return t;
}

OslatResult result_of(const Scan& s) {
  for (Field f : {Field::freq, Field::max})
    if (!s.fields.count(f))
      throw Error(std::string(kWhat) + ": the summary table at line " + std::to_string(s.table) +
                  " has no " + (f == Field::freq ? "counter frequency" : "Maximum") + " row");
  if (s.buckets.empty())
    throw Error(std::string(kWhat) + ": the summary table at line " + std::to_string(s.table) +
                " has no bucket rows");
  OslatResult r;
  r.format = s.v01 ? "text-v0.1" : "text";
  r.version = s.version;
  std::set<long long> labels;
  for (const auto& [label, _] : s.buckets) labels.insert(label);
  r.bucket_width_ns =
      oslat_detail::width_from_labels(labels, !s.omitted, s.decimals, std::string(kWhat));
  r.last_bucket_ns = s.overflow_label ? *s.overflow_label : *labels.rbegin();
  for (std::size_t i = 0; i < s.core_values.size(); ++i) r.threads.push_back(column(s, i));
  oslat_detail::finish_threads(r, std::string(kWhat));
  oslat_detail::check_values(r, s.decimals);
  if (s.v01)
    r.notes.push_back("oslat before rt-tests (" + (s.version.empty() ? "v0.1.x" : s.version) +
                      "): no Minimum or Average row");
  return r;
}

}  // namespace

OslatResult parse_oslat_text(std::string_view text) {
  Scan s;
  const auto lines = text_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = trim(lines[i]);
    if (s.table && !s.done) {
      if (line.empty()) break;  // a table ends only after its Duration row: cut short
      read_table_line(line, i + 1, s);
    } else if (!line.empty()) {
      read_outside_line(line, i + 1, s);
    }
  }
  if (!s.done) throw no_table_error(s);
  return result_of(s);
}

}  // namespace isolab
