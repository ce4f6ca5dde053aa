#include "report/summary.h"

#include <algorithm>
#include <cmath>

#include "compare/verdict_rules.h"
#include "report/format.h"

namespace isolab {

using namespace report_detail;

namespace {

// "<wl>: <cause>" for "<wl>.noise.<cause>[_per_s]", else the name itself.
std::string count_label(const std::string& name) {
  const std::string mid = ".noise.";
  const std::size_t at = name.find(mid);
  if (at == std::string::npos || at == 0) return name;
  std::string cause = name.substr(at + mid.size());
  const std::string suffix = "_per_s";
  if (cause.size() > suffix.size() &&
      cause.compare(cause.size() - suffix.size(), suffix.size(), suffix) == 0) {
    cause.resize(cause.size() - suffix.size());
  }
  return name.substr(0, at) + ": " + cause;
}

std::string where_text(const MetricRow& r) {
  const std::string cpus = cpu_list_text(r.cpus);
  return cpus.empty() ? "" : (r.cpus.size() == 1 ? " on CPU " : " on CPUs ") + cpus;
}

// Whether the range rule, not a p, decided the row (compare/verdict_rules.h rule 2).
bool by_range_rule(const MetricRow& r) { return r.test.range && r.test.range->applies; }

// What the verdict rests on: the range rule's false-alarm bound, or the decisive p.
std::string decided_by(const MetricRow& r) {
  if (by_range_rule(r))
    return "the range rule (false-alarm bound " + p_short(r.test.range->bound) + ")";
  return decisive_p_name(r) + " = " + p_short(decisive_p(r));
}

std::string verdict_clause(const MetricRow& r) {
  std::string s = std::string(", ") + verdict_name(r.verdict.verdict);
  if (has_both(r)) s += ", " + decided_by(r);
  return s;
}

// The p (or the range rule's bound) a summary line names, and its name.
nlohmann::json p_detail(const MetricRow& r) {
  if (by_range_rule(r)) return {{"p", jnum(r.test.range->bound)}, {"p_name", "range rule bound"}};
  return {{"p", jnum(decisive_p(r))}, {"p_name", decisive_p_name(r)}};
}

SummaryLine count_summary(const MetricRow& r) {
  const CountTest& c = *r.test.count;
  const bool is_new = c.mean_a == 0 && c.mean_b > 0;
  SummaryLine l;
  l.text = std::string(role_name(r)) + ": " + count_label(r.metric) + where_text(r) + ": " +
           format_count_amount(c.mean_a, r.unit) + " -> " + format_count_amount(c.mean_b, r.unit) +
           (is_new ? " (new)" : "") + verdict_clause(r);
  l.detail = {{"metric", r.name},
              {"kind", "count"},
              {"role", role_name(r)},
              {"verdict", verdict_name(r.verdict.verdict)},
              {"text", l.text},
              {"label", count_label(r.metric)},
              {"cpus", cpu_list_text(r.cpus)},
              {"unit", r.unit},
              {"a", jnum(c.mean_a)},
              {"b", jnum(c.mean_b)}};
  l.detail.update(p_detail(r));
  return l;
}

// A timing or by_ranks (medians) or instruction (means) row.
SummaryLine value_summary(const MetricRow& r) {
  const bool means = !by_ranks(r);
  const double a = means ? r.test.a.mean : r.test.a.median;
  const double b = means ? r.test.b.mean : r.test.b.median;
  SummaryLine l;
  l.text = std::string(role_name(r)) + ": " + r.name + ": " + num(a, "%.6g") + " -> " +
           num(b, "%.6g") + (r.unit.empty() ? "" : " " + r.unit) + " (" +
           num(r.change_pct, "%+.2f") + "%)" + verdict_clause(r);
  l.detail = {{"metric", r.name},
              {"kind", metric_kind_name(r.kind)},
              {"role", role_name(r)},
              {"verdict", verdict_name(r.verdict.verdict)},
              {"text", l.text},
              {"unit", r.unit},
              {"a", jnum(a)},
              {"b", jnum(b)},
              {"change_pct", jnum(r.change_pct)}};
  l.detail.update(p_detail(r));
  return l;
}

SummaryLine row_summary(const MetricRow& r) {
  return is_count(r) ? count_summary(r) : value_summary(r);
}

std::size_t secondary_rows(const Comparison& c) {
  return static_cast<std::size_t>(std::count_if(c.metrics.begin(), c.metrics.end(),
                                                [](const MetricRow& r) { return !r.primary; }));
}

std::string exit_verdict(int status) {
  return status == 1 ? "regressed" : status == 3 ? "could not reach alpha" : "no regression";
}

// How the budget was spent: "alpha 0.05: range rule 0.00099 (1 row), discrete step-down at
// 0.049 over 9 hypotheses (K = 6 at its first step)".
std::string budget_text(const Comparison& c) {
  const ExitBudget& b = c.budget;
  std::string s = "one budget, alpha " + num(b.alpha, "%.3g") + ": ";
  if (!b.ranges.empty())
    s += "range rule " + num(b.range_share, "%.3g") + " (" + std::to_string(b.ranges.size()) +
         " row" + (b.ranges.size() == 1 ? "" : "s") + "), ";
  return s + "discrete step-down at " + num(b.level, "%.3g") + " over " +
         std::to_string(b.entries.size()) + " hypothes" + (b.entries.size() == 1 ? "is" : "es") +
         " (K = " + std::to_string(b.first_k) + " at its first step)";
}

// The first line: what the exit status rests on, and the exit status.
SummaryLine basis_summary(const Comparison& c) {
  std::string rows;
  std::vector<std::string> names;
  for (const auto& r : c.metrics)
    if (r.primary) {
      rows += (rows.empty() ? "" : ", ") + r.name + " (" +
              (r.declared->higher_is_bad ? "higher" : "lower") + " is bad)";
      names.push_back(r.name);
    }
  const std::string failures =
      "kernel failure classes, isolation-gate checks and retried boots, each as B's rate "
      "against A's, and new build warnings in files B's series touches";
  const int status = compare_exit_status(c);
  SummaryLine l;
  l.text = "exit status " + std::to_string(status) + ": rests on " +
           (names.empty() ? "no primary metric (none declared: spec compare.primary or "
                            "--primary)"
                          : std::to_string(names.size()) + " primary metric" +
                                (names.size() == 1 ? "" : "s") + " (one-sided): " + rows) +
           ", and on " + failures + "; " + budget_text(c) + "; " +
           std::to_string(secondary_rows(c)) +
           " secondary metric rows are reported and never set it";
  l.detail = {{"kind", "basis"},
              {"text", l.text},
              {"primary", names},
              {"primary_origin", c.settings.primary_origin},
              {"secondary", secondary_rows(c)},
              {"exit_status", status},
              {"verdict", exit_verdict(status)}};
  return l;
}

void add_line(std::vector<SummaryLine>& lines, const std::string& text, nlohmann::json detail) {
  detail["text"] = text;
  lines.push_back({text, std::move(detail)});
}

// The primaries that could not reach alpha, when any.
void unreachable_summary(const Comparison& c, std::vector<SummaryLine>& lines) {
  const auto& u = c.budget.unreachable_primaries;
  if (u.empty()) return;
  std::string names;
  for (const auto& n : u) names += (names.empty() ? "" : ", ") + n;
  const std::string text =
      (c.budget.no_primary_reachable ? "no primary metric could reach alpha with these boots ("
                                     : "primary metrics that could not reach alpha with these "
                                       "boots (") +
      names + ")" +
      (c.budget.no_primary_reachable ? ": exit status 3 unless something is counted against B"
                                     : "");
  add_line(lines, text,
           {{"kind", "unreachable"},
            {"metrics", u},
            {"verdict", c.budget.no_primary_reachable ? "could not reach alpha" : "flagged"}});
}

// Kernel-failure classes, gate checks B failed, retries, new build warnings and metrics
// missing in B.
void failure_summaries(const Comparison& c, std::vector<SummaryLine>& lines) {
  for (const auto& f : c.failures)
    add_line(lines, "kernel failure " + f.failure_class + ": " + f.reason,
             {{"kind", "failure"},
              {"failure_class", f.failure_class},
              {"verdict", f.against_b ? "regressed" : "not counted against B"},
              {"a", f.a_cells},
              {"a_total", f.a_total},
              {"b", f.b_cells},
              {"b_total", f.b_total},
              {"p", f.p},
              {"p_min", f.p_min}});
  for (const auto& g : c.gate) {
    if (g.reason.empty()) continue;
    add_line(lines, "isolation gate " + g.check + ": " + g.reason,
             {{"kind", "gate"},
              {"check", g.check},
              {"verdict", g.against_b ? "regressed" : "not counted against B"},
              {"p", g.p},
              {"p_min", g.p_min}});
  }
  if (!c.retries.reason.empty())
    add_line(lines, "retried boots: " + c.retries.reason,
             {{"kind", "retries"},
              {"verdict", c.retries.against_b ? "regressed" : "not counted against B"},
              {"p", c.retries.p},
              {"p_min", c.retries.p_min}});
  if (c.new_warnings_in_touched_files() > 0)
    add_line(lines,
             std::to_string(c.new_warnings_in_touched_files()) + " new build warning(s) of " +
                 c.variant_b + " in files its series touches: regressed (see build warnings)",
             {{"kind", "build-warnings"},
              {"new_build_warnings_in_touched_files", c.new_warnings_in_touched_files()},
              {"verdict", "regressed"}});
  if (!c.calibration_note.empty())
    add_line(lines, c.calibration_note, {{"kind", "calibration"}, {"verdict", "flagged"}});
  std::string missing;
  nlohmann::json names = nlohmann::json::array();
  for (const MetricRow* r : c.missing_more_in_b()) {
    missing += (missing.empty() ? "" : ", ") + r->name + " (B " + std::to_string(r->missing_b) +
               ", A " + std::to_string(r->missing_a) + ")";
    names.push_back(r->name);
  }
  if (!missing.empty())
    add_line(lines, "missing in more B boots than A boots (not an exit by itself): " + missing,
             {{"kind", "missing"}, {"metrics", names}, {"verdict", "flagged"}});
}

// The closing line: the secondary rows that did not move, and how their p was adjusted.
SummaryLine secondary_rest_summary(const Comparison& c) {
  std::size_t rows = 0, no_change = 0, below = 0, inconclusive = 0, counts = 0;
  for (const auto& r : c.metrics) {
    if (r.primary) continue;
    ++rows;
    counts += r.kind == MetricKind::count;
    no_change += r.verdict.verdict == Verdict::no_change;
    below += r.verdict.verdict == Verdict::changed_below;
    inconclusive += r.verdict.verdict == Verdict::inconclusive;
  }
  SummaryLine l;
  if (rows == 0) {
    l.text = "secondary: no metric rows in these runs";
  } else {
    l.text = "secondary: no significant change in " + std::to_string(no_change) + " of " +
             std::to_string(rows) + " metric rows (" + std::to_string(counts) +
             " of them counts on the isolated CPUs), " + std::to_string(below) +
             " changed below threshold, " + std::to_string(inconclusive) + " inconclusive";
    if (c.secondary_range_rows > 0)
      l.text += "; " + std::to_string(c.secondary_range_rows) +
                " instruction rows by the range rule (their false-alarm bounds sum to " +
                num(c.secondary_range_bound, "%.3g") + ")";
    if (c.family.relabellings > 0)
      l.text += "; family-wise p by Westfall-Young min-P over " +
                std::to_string(c.family.relabellings) +
                (c.family.exact ? " relabellings of the boots (all of them)"
                                : " relabellings of the boots (a seeded sample)");
  }
  l.detail = {{"metric", ""},
              {"kind", "secondary"},
              {"role", "secondary"},
              {"verdict", verdict_name(Verdict::no_change)},
              {"text", l.text},
              {"rows", rows},
              {"no_change", no_change},
              {"changed_below", below},
              {"inconclusive", inconclusive},
              {"relabellings", c.family.relabellings},
              {"exact", c.family.exact}};
  return l;
}

}  // namespace

std::string header_line(const Comparison& c) {
  const bool one_run = c.run_a == c.run_b;
  auto side = [one_run](const std::string& v, const std::string& run, const std::string& kernel) {
    std::string s = v;
    std::string extra;
    if (!run.empty() && !one_run) extra += "run " + run;
    if (!kernel.empty()) extra += (extra.empty() ? "" : ", ") + kernel;
    if (!extra.empty()) s += " (" + extra + ")";
    return s;
  };
  return "A = " + side(c.variant_a, c.run_a, c.kernel_a) +
         "\nB = " + side(c.variant_b, c.run_b, c.kernel_b);
}

std::string run_note_label(const std::string& kind) {
  return kind == "unfinished" ? "UNFINISHED" : "LEFT OUT";
}

std::string title_line(const Comparison& c) {
  std::string s = "isolab compare";
  if (!c.spec_name.empty()) s += ": " + c.spec_name;
  if (c.run_a == c.run_b && !c.run_a.empty()) s += " (run " + c.run_a + ")";
  return s;
}

std::string settings_line(const Comparison& c) {
  const auto& s = c.settings;
  std::string family = c.family.relabellings > 0
                           ? std::to_string(c.family.relabellings) + " relabellings of the boots"
                           : "relabellings of the boots";
  return "cells: A " + std::to_string(c.cells_a) + ", B " + std::to_string(c.cells_b) + "; alpha " +
         num(s.alpha, "%.3g") + ", min_samples " + std::to_string(s.min_samples) +
         "; exact tests (timings and primaries declared \"test\": \"ranks\": midrank "
         "permutation; counts and instructions: permutation of per-boot means); primary metrics "
         "one-sided, a discrete (Tarone) step-down over them "
         "and the failure, gate and retry rates, their intervals one-sided bounds at 1 - level/K "
         "each; secondary two-sided with Westfall-Young min-P over " +
         family + ", " + num(100 * s.confidence_level, "%.3g") +
         "% intervals by inverting the tests; 'no significant change' only inside +-threshold "
         "(counts: +-max(floor, threshold x A)), 'changed, below threshold' when significant "
         "inside it; threshold " +
         num(s.default_threshold_pct, "%.3g") +
         "% (or per-metric/noise floor), timings under "
         "TCG at least " +
         num(s.tcg_timing_threshold_pct, "%.3g") + "%, instructions max(own, " +
         num(s.instructions_threshold_pct, "%.3g") + "%), all fixed before the run; count floor " +
         format_count_amount(s.count_floor_for("1/s"), "1/s") + " per CPU or " +
         format_count_amount(s.count_floor_for("count"), "count") + " event(s); seed " +
         std::to_string(s.seed) +
         (c.stratified ? "; cells from " + std::to_string(c.hosts.size()) +
                             " hosts: the p and verdict columns are the stratified tests' "
                             "(van Elteren for timings, permutation within hosts otherwise)"
                       : "");
}

std::string issue_line(const CellIssue& i) {
  std::string s = i.side + " " + i.cell_id + ": " + i.status;
  if (!i.failure_class.empty()) s += " (" + i.failure_class + ")";
  if (!i.reason.empty()) s += ": " + i.reason;
  if (i.kernel_failure && i.side == "B")
    s += i.against_b ? " [kernel failure: counts against B]"
                     : " [kernel failure: not counted against B, see kernel failures]";
  return s;
}

std::string untrusted_line(const UntrustedValues& u) {
  return u.side + " " + u.cell_id + ": " + u.metric + ": " + u.reason;
}

std::vector<std::string> warning_lines(const Comparison& c) {
  std::vector<std::string> out;
  if (!c.new_warnings) return out;
  for (const auto& n : *c.new_warnings)
    out.push_back(n.warning.describe() +
                  (n.in_touched_file ? "  [new in a file the series touches: counts against B]"
                                     : "  [new, in a file the series does not touch]"));
  return out;
}

constexpr std::size_t kTopFrames = 8;

std::string latency_trace_line(const Comparison& c, const LatencyTraceRow& r) {
  std::string s = (r.side == 0 ? c.variant_a : c.variant_b) + " " + r.cell_id + " " + r.workload +
                  ": " + num(r.max_latency_us) + " us";
  if (!r.task.empty()) s += ", " + r.task;
  if (r.cpu) s += " on CPU " + std::to_string(*r.cpu);
  std::string frames;
  for (std::size_t i = 0; i < r.frames.size() && i < kTopFrames; ++i)
    frames += (i ? " < " : "") + r.frames[i];
  if (r.frames.size() > kTopFrames) frames += " < ...";
  return s + ": " + (frames.empty() ? "(no stack trace)" : frames);
}

std::string verdict_tally(const Comparison& c, std::optional<bool> primary) {
  auto n = [&](Verdict v) { return std::to_string(primary ? c.count(v, *primary) : c.count(v)); };
  return n(Verdict::regressed) + " regressed, " + n(Verdict::improved) + " improved, " +
         n(Verdict::changed_below) + " changed below threshold, " + n(Verdict::no_change) +
         " no significant change, " + n(Verdict::inconclusive) + " inconclusive";
}

std::string summary_line(const Comparison& c) {
  return "primary: " + verdict_tally(c, true) + "; secondary: " + verdict_tally(c, false) +
         "; counted against B: " + std::to_string(c.kernel_failure_regressions()) +
         " kernel failure class(es) (" + std::to_string(c.kernel_failures_b()) +
         " kernel failure(s) in B), " + std::to_string(c.gate_regressions()) + " gate check(s), " +
         std::to_string(c.retry_regressions()) + " retry rate, " +
         std::to_string(c.new_warnings_in_touched_files()) +
         " new build warning(s) of B in files it touches; exit status " +
         std::to_string(compare_exit_status(c));
}

std::vector<SummaryLine> summarize(const Comparison& c) {
  std::vector<SummaryLine> lines = {basis_summary(c)};
  for (const auto& r : c.metrics)
    if (r.primary) lines.push_back(row_summary(r));
  unreachable_summary(c, lines);
  failure_summaries(c, lines);
  for (const auto& r : c.metrics)
    if (!r.primary && is_count(r) && moved(r)) lines.push_back(row_summary(r));
  for (const auto& r : c.metrics)
    if (!r.primary && !is_count(r) && moved(r)) lines.push_back(row_summary(r));
  lines.push_back(secondary_rest_summary(c));
  return lines;
}

bool is_answer_line(const SummaryLine& l) {
  const std::string kind = l.detail.value("kind", "");
  if (kind == "unreachable" && l.detail.value("verdict", "") == "flagged") return false;
  return kind != "basis" && kind != "secondary" && l.detail.value("role", "") != "secondary";
}

bool is_secondary_line(const SummaryLine& l) {
  return l.detail.value("kind", "") == "secondary" || l.detail.value("role", "") == "secondary";
}

bool is_answer_footnote(const SummaryLine& l) {
  const std::string kind = l.detail.value("kind", "");
  return kind == "missing" || kind == "calibration";
}

std::string gate_answer(const Comparison& c) {
  if (c.gate.empty()) return "";
  std::string failed;
  for (const auto& g : c.gate)
    if (g.a_pass < g.a_total || g.b_pass < g.b_total)
      failed += (failed.empty() ? "" : ", ") + g.check + " (A " + gate_cell(g.a_pass, g.a_total) +
                ", B " + gate_cell(g.b_pass, g.b_total) + ")";
  return failed.empty() ? "isolation gate: all " + std::to_string(c.gate.size()) +
                              " checks passed in every cell checked"
                        : "isolation gate: failed in some cell: " + failed;
}

std::string budget_answer(const Comparison& c) {
  if (c.budget_a.empty() && c.budget_b.empty()) return "";
  auto side = [](const std::string& v) { return v.empty() ? std::string("none judged") : v; };
  return "budgets (as the run judged them; not in compare's exit status): A " + side(c.budget_a) +
         ", B " + side(c.budget_b);
}

std::string fidelity_answer(const Comparison& c) {
  if (c.fidelity_a.empty() && c.fidelity_b.empty()) return "";
  const std::string head = "the customer's machine (the report's table has each fact): ";
  if (c.fidelity_a == c.fidelity_b) return head + c.fidelity_a;
  auto side = [](const std::string& v) { return v.empty() ? std::string("none") : v; };
  return head + "A " + side(c.fidelity_a) + "; B " + side(c.fidelity_b);
}

std::vector<std::string> undecided_answers(const Comparison& c) {
  std::vector<std::string> out;
  const auto& u = c.budget.unreachable_primaries;
  std::string unreachable, inconclusive;
  for (const auto& r : c.metrics) {
    if (!r.primary || r.verdict.verdict != Verdict::inconclusive) continue;
    std::string& names =
        std::find(u.begin(), u.end(), r.name) != u.end() ? unreachable : inconclusive;
    names += (names.empty() ? "" : ", ") + r.name;
  }
  std::string parts;
  if (!unreachable.empty()) parts = unreachable + " (could not reach alpha with these boots)";
  if (!inconclusive.empty())
    parts += (parts.empty() ? "" : "; ") + inconclusive + " (inconclusive: see why below)";
  if (!parts.empty()) out.push_back("not decided: " + parts);
  if (!c.issues.empty())
    out.push_back("cells that did not count: " + std::to_string(c.issues.size()) +
                  " (listed below)");
  return out;
}

}  // namespace isolab
