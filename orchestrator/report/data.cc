#include "report/data.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "base/files.h"
#include "parse/trace.h"
#include "results/result.h"

namespace isolab {

namespace {

constexpr std::size_t kMaxTraceBytes = 64u << 20;

bool is_noise_metric(const std::string& name, std::string& workload) {
  const auto at = name.find(".noise.");
  if (at == std::string::npos) return false;
  workload = name.substr(0, at);
  return true;
}

// Cells of `variant` in run order; contributing only (status ok) when ok_only. Warm-up cells
// never.
std::vector<ReportCell> cells_of(const results::RunResult& run, const std::string& variant,
                                 const std::string& side, bool ok_only) {
  std::vector<ReportCell> out;
  for (const results::CellRecord& c : run.cells) {
    if (c.variant.value_or("") != variant || c.is_warmup()) continue;
    if (ok_only && !c.is_ok()) continue;
    out.push_back({side, c.id.value_or(""), &c});
  }
  return out;
}

// The two sides as ReportData has them: samples, contributing cells, every non-warm-up cell.
void gather_sides(ReportData& d) {
  const LoadedComparison& l = d.loaded;
  d.side_a = extract_variant(l.result_a, l.variant_a);
  d.side_b = extract_variant(l.result_b, l.variant_b);
  d.cells = cells_of(l.result_a, l.variant_a, "A", true);
  const auto b = cells_of(l.result_b, l.variant_b, "B", true);
  d.cells.insert(d.cells.end(), b.begin(), b.end());
  d.all_a = cells_of(l.result_a, l.variant_a, "A", false);
  d.all_b = cells_of(l.result_b, l.variant_b, "B", false);
}

// "<start> <end>" seconds; nullopt when malformed.
std::optional<std::pair<double, double>> parse_window(const std::string& text) {
  std::istringstream in(text);
  double a = 0, b = 0;
  if (!(in >> a >> b) || !std::isfinite(a) || !std::isfinite(b) || b <= a) return std::nullopt;
  return std::make_pair(a, b);
}

// Every interruption start of the trace (the trace holds the step: the pipeline counts all of
// it, and its last events can be a few ms past the /proc/uptime reading of the window's end).
void collect_marks(std::string_view text, double start_s, Timeline& t) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    const auto l = parse_trace_line(line);
    if (!l || !l->ts_ns) continue;
    const double ts = static_cast<double>(*l->ts_ns) / 1e9;
    InterruptionStart s = interruption_start(*l);
    if (s.cause.empty()) continue;
    if (t.marks.size() >= kMaxTimelineMarks) {
      ++t.dropped;
      continue;
    }
    t.marks.push_back({l->cpu, std::string(s.cause), std::move(s.name), ts - start_s});
  }
}

std::string read_small(const std::filesystem::path& p, std::size_t limit) {
  return read_file(p, limit);
}

}  // namespace

std::string choose_timeline_workload(const Comparison& c) {
  std::string wl, moved, busiest;
  double moved_diff = -1, busiest_mean = -1;
  for (const MetricRow& r : c.metrics) {
    if (r.kind != MetricKind::count || !is_noise_metric(r.name, wl)) continue;
    const Verdict v = r.verdict.verdict;
    const double diff = r.test.count ? std::abs(r.test.count->diff) : 0;
    const bool sum = r.name == wl + ".noise.interruptions_per_s";
    if ((v == Verdict::improved || v == Verdict::regressed) && !sum && diff > moved_diff)
      moved_diff = diff, moved = wl;
    if (sum && r.test.b.n > 0 && r.test.b.mean > busiest_mean)
      busiest_mean = r.test.b.mean, busiest = wl;
  }
  if (!moved.empty()) return moved;
  if (!busiest.empty()) return busiest;
  for (const MetricRow& r : c.metrics)
    if (is_noise_metric(r.name, wl)) return wl;
  return "";
}

Timeline read_timeline(const std::filesystem::path& run_dir, const ReportCell& cell,
                       const std::string& workload) {
  Timeline t;
  t.side = cell.side;
  t.cell_id = cell.id;
  t.workload = workload;
  const std::string raw = cell.record->raw_dir.value_or("");
  const std::filesystem::path rel(raw);
  if (raw.empty() || rel.is_absolute() ||
      std::any_of(rel.begin(), rel.end(), [](const auto& part) { return part == ".."; })) {
    t.missing = "cell " + cell.id + " has no usable raw_dir";
    return t;
  }
  const auto records = (run_dir.empty() ? std::filesystem::path(".") : run_dir) / rel / "records";
  try {
    const auto window = parse_window(read_small(records / (workload + ".window"), 4096));
    if (!window) {
      t.missing = (records / (workload + ".window")).string() + ": not '<start> <end>' seconds";
      return t;
    }
    t.window_s = window->second - window->first;
    const std::string text = read_small(records / (workload + ".trace"), kMaxTraceBytes);
    t.cpus = parse_trace(text).traced_cpus;
    collect_marks(text, window->first, t);
  } catch (const std::exception& e) {
    t.missing = e.what();
  }
  return t;
}

ReportData gather_report(const CompareRequest& options) {
  ReportData d;
  d.loaded = load_comparison(options);
  const LoadedComparison& l = d.loaded;
  gather_sides(d);
  d.timeline_workload = choose_timeline_workload(l.comparison);
  if (d.timeline_workload.empty()) return d;
  for (const char* side : {"A", "B"}) {
    auto it = std::find_if(d.cells.begin(), d.cells.end(),
                           [&](const ReportCell& c) { return c.side == side; });
    if (it == d.cells.end()) continue;
    d.timelines.push_back(
        read_timeline(side[0] == 'A' ? l.dir_a : l.dir_b, *it, d.timeline_workload));
  }
  return d;
}

}  // namespace isolab
