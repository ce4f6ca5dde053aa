#include "report/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/text.h"
#include "cmdline/cpulist.h"
#include "compare/verdict_rules.h"

namespace isolab::report_detail {

std::string num(double v, const char* f) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string opt_bucket(const std::optional<std::int64_t>& v, std::uint64_t overflows) {
  if (v) return std::to_string(*v);
  return overflows > 0 ? "overflow" : "n/a";
}

nlohmann::json jnum(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json jopt(const std::optional<double>& v) { return v ? jnum(*v) : nlohmann::json(); }

nlohmann::json jbucket(const std::optional<std::int64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json stats_json(const SampleStats& s, const std::vector<double>& values) {
  return {{"n", s.n},
          {"median", jnum(s.median)},
          {"mean", jnum(s.mean)},
          {"stddev", jnum(s.stddev)},
          {"min", jnum(s.min)},
          {"max", jnum(s.max)},
          {"cv", jnum(s.cv)},
          {"values", values}};
}

bool is_count(const MetricRow& r) { return r.kind == MetricKind::count && r.test.count; }
bool by_ranks(const MetricRow& r) { return r.kind == MetricKind::timing || r.test.one_sided_ranks; }
bool is_instructions(const MetricRow& r) {
  return r.kind == MetricKind::instructions && r.test.count && !r.test.one_sided_ranks;
}

const char* role_name(const MetricRow& r) { return r.primary ? "primary" : "secondary"; }

// The p a row's verdict rests on: the budget's step-down (primary; of the good direction's family
// for an improved one) or the family-wise p (secondary) when computed, else the row's own
// one-sided (primary) or two-sided p.
double decisive_p(const MetricRow& r) {
  if (r.primary && r.verdict.verdict == Verdict::improved) {
    if (r.test.family) return r.test.family->adjusted_good;
    if (r.test.good_sided) return r.test.good_sided->p;
  }
  if (r.test.family_p) return *r.test.family_p;
  return r.primary && r.test.one_sided ? r.test.one_sided->p : r.test.p_value();
}

// Its name in summary lines.
std::string decisive_p_name(const MetricRow& r) {
  if (r.primary) return r.test.family_p ? "step-down p" : "one-sided p";
  return r.test.family_p ? "family-wise p" : "p";
}

bool has_both(const MetricRow& r) { return r.test.a.n > 0 && r.test.b.n > 0; }

std::string p_text(const MetricRow& r) {
  if (!has_both(r)) return "n/a";
  return num(r.test.p_value(), "%.3g");
}

std::string adjusted_p_text(const MetricRow& r) {
  if (!has_both(r) || !r.test.family_p) return "n/a";
  return num(*r.test.family_p, "%.3g");
}

// "5-7" (the kernel's list format), "" for no CPUs.
std::string cpu_list_text(const std::vector<unsigned>& cpus) {
  if (cpus.empty()) return "";
  CpuSet set(*std::max_element(cpus.begin(), cpus.end()) + 1);
  for (unsigned cpu : cpus) set.set(cpu);
  return set.to_list();
}

// p for a summary line: 3 decimals ("0.008"), two significant digits below 0.001.
std::string p_short(double p) { return num(p, p >= 0.001 ? "%.3f" : "%.2g"); }

bool moved(const MetricRow& r) {
  return r.verdict.verdict == Verdict::improved || r.verdict.verdict == Verdict::regressed;
}

std::string pad(const std::string& s, std::size_t w, bool right) {
  // Width by code points, so "µs" lines up.
  std::size_t cps = 0;
  for (unsigned char ch : s) cps += (ch & 0xC0) != 0x80;
  if (cps >= w) return s;
  const std::string fill(w - cps, ' ');
  return right ? fill + s : s + fill;
}
// "3/3 PASS", "1/3 FAIL", "-" (no cell ran the check).
std::string gate_cell(std::size_t pass, std::size_t total) {
  if (total == 0) return "-";
  return std::to_string(pass) + "/" + std::to_string(total) + (pass == total ? " PASS" : " FAIL");
}

bool is_timing_row(const MetricRow& r) { return !is_count(r) && !is_instructions(r); }

std::string verdict_cell(const MetricRow& r) { return verdict_name(r.verdict.verdict); }

// Width of a cell in code points ("µs" is 2).
std::size_t width_of(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

std::string wrap(const std::string& text, std::size_t width, const std::string& first,
                 const std::string& rest) {
  std::string out, line;
  for (std::string_view word : split_space(text)) {
    const std::string& indent = out.empty() ? first : rest;
    if (!line.empty() && width_of(indent + line) + 1 + word.size() > width) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + std::string(word);
  }
  if (!line.empty()) out += (out.empty() ? first : rest) + line + "\n";
  return out;
}

// The columns of one kind's table; `interval` names the interval ("95% CI", or "CI").
std::vector<Column> table_columns(MetricKind kind, const std::string& interval) {
  const bool means = kind != MetricKind::timing;
  std::vector<Column> cols = {{"metric", false, [](const MetricRow& r) { return r.name; }},
                              {"unit", false, [](const MetricRow& r) { return r.unit; }}};
  if (kind == MetricKind::count)
    cols.push_back({"CPUs", false, [](const MetricRow& r) { return cpu_list_text(r.cpus); }});
  if (means) {
    cols.push_back({"A mean", true, [](const MetricRow& r) { return num(r.test.a.mean, "%.4g"); }});
    cols.push_back({"B mean", true, [](const MetricRow& r) { return num(r.test.b.mean, "%.4g"); }});
  } else {
    cols.push_back({"A median", true, [](const MetricRow& r) { return num(r.test.a.median); }});
    cols.push_back({"B median", true, [](const MetricRow& r) { return num(r.test.b.median); }});
  }
  cols.push_back(
      {kind == MetricKind::count ? "B-A [" + interval + "] (change)" : "change [" + interval + "]",
       false, format_change});
  cols.push_back({"p", true, p_text});
  cols.push_back({"adj p", true, adjusted_p_text});
  cols.push_back({"nA", true, [](const MetricRow& r) { return std::to_string(r.test.a.n); }});
  cols.push_back({"nB", true, [](const MetricRow& r) { return std::to_string(r.test.b.n); }});
  cols.push_back({"role", false, [](const MetricRow& r) { return std::string(role_name(r)); }});
  cols.push_back({"verdict", false, verdict_cell});
  return cols;
}

std::vector<const MetricRow*> rows_where(const Comparison& c, RowFilter keep) {
  std::vector<const MetricRow*> rows;
  for (const auto& r : c.metrics)
    if (keep(r)) rows.push_back(&r);
  return rows;
}

namespace {

std::string end_text(double v, double scale, const char* f) {
  if (std::isinf(v)) return v > 0 ? "+inf" : "-inf";
  return num(v * scale, f);
}

// " [low, high]" of the row's interval (scale: 100 for a fraction shown in percent).
std::string interval_text(const MetricRow& r, double scale, const char* f) {
  if (!r.test.interval) return " [CI n/a]";
  return " [" + end_text(r.test.interval->low, scale, f) + ", " +
         end_text(r.test.interval->high, scale, f) + "]";
}

std::string format_count_change(const MetricRow& r) {
  const CountTest& c = *r.test.count;
  std::string s = (c.diff > 0 ? "+" : "") + format_count_amount(c.diff, r.unit);
  s += interval_text(r, 1, "%.3g");
  if (std::isinf(c.relative_change)) return s + " (new)";
  return s + " (" + num(100 * c.relative_change, "%+.2f") + "%)";
}

}  // namespace

std::string format_change(const MetricRow& r) {
  if (is_count(r)) return format_count_change(r);
  if (!std::isfinite(r.change_pct)) return "n/a";
  return num(r.change_pct, "%+.2f") + "%" + interval_text(r, 100, "%.1f");
}

}  // namespace isolab::report_detail
