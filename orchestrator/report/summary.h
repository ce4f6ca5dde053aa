// The wording every output format of a Comparison shares (text, JSON, Markdown, JUnit and the
// HTML page): the summary sentences that say what the exit status rests on and what changed, and
// the lines naming the runs, settings, cell issues, untrusted values and new build warnings.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare.h"

namespace isolab {

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
// or "p" for secondary ones; for a row the range rule decided (compare/verdict_rules.h rule 2)
// "the range rule (false-alarm bound 0.00099)" instead). A timing (medians) or instruction (means)
// row's line:
//   "secondary: vmstat-syscall.cycles_per_syscall: 7400 -> 8140 cycles (+10.00%), regressed,
//    family-wise p = 0.008".
// `detail` is the JSON form: {"kind" ("basis", "count", "timing", "instructions", "failure",
// "gate", "build-warnings", "missing", "secondary"), "verdict", "text", and for a row line
// "metric", "role", "unit", "a", "b", "p", "p_name" ("range rule bound", with the bound as "p",
// for a row the range rule decided) (a count line also "label", "cpus"; a
// timing or instruction line "change_pct"); for the basis "primary" (row names),
// "primary_origin", "secondary", "exit_status"; for the closing line "rows", "no_change",
// "inconclusive", "relabellings", "exact"}.
struct SummaryLine {
  std::string text;
  nlohmann::json detail;
};
std::vector<SummaryLine> summarize(const Comparison& c);

// The answer, as the first screen of the text and the top of the HTML page put it:
// is_answer_line: a line of summarize() that answers (a primary row, what counted against B or
// was flagged), not the basis, not a secondary row and not the primaries that could not reach
// alpha when some could (undecided_answers names them);
bool is_answer_line(const SummaryLine& l);
// is_secondary_line: a secondary row that changed, or the closing line on the rest;
bool is_secondary_line(const SummaryLine& l);
// is_answer_footnote: an answer line that follows the gate and what was not decided (metrics
// missing in more B boots, the calibration's note): flagged, never an exit by itself;
bool is_answer_footnote(const SummaryLine& l);
// gate_answer: the isolation gate in one line, "isolation gate: all N checks passed in every
// cell checked" or "isolation gate: failed in some cell: <check> (A 4/5 FAIL, B 5/5 PASS), ...";
// "" when no cell was checked;
std::string gate_answer(const Comparison& c);
// budget_answer: the budgets the runs judged, in one line, "budgets (as the run judged them; not
// in compare's exit status): A within budget, B over budget on CPU 3 by ..."; "" when neither
// run judged any;
std::string budget_answer(const Comparison& c);
// fidelity_answer: how the guest stood for the customer's machine, in one line, "the customer's
// machine (the report's table has each fact): 16 facts the same, 2 scaled (...), ..." for one
// run, or "...: A <summary>; B <summary>" when A's and B's differ ("none" for a run without
// one); "" when neither run reproduced a customer's machine;
std::string fidelity_answer(const Comparison& c);
// undecided_answers: what could not be decided, a line each when there is one: "not decided:
// <primaries> (could not reach alpha with these boots); <primaries> (inconclusive: see why
// below)" (either part alone when the other is empty), "cells that did not count: N (listed
// below)".
std::vector<std::string> undecided_answers(const Comparison& c);

// "N regressed, N improved, N no significant change, N inconclusive" over the rows of one role
// (primary true or false), or over every row when role is nullopt.
std::string verdict_tally(const Comparison& c, std::optional<bool> primary = std::nullopt);

// The label a run note (Comparison::run_notes) opens with: "UNFINISHED" or "LEFT OUT".
std::string run_note_label(const std::string& kind);
// "isolab compare: <spec name> (run <id>)", the run only when A and B come from the same one.
std::string title_line(const Comparison& c);
// "A = <variant> (run <id>, <kernel>)\nB = ..." (the run only when A's and B's differ, the
// parenthesis only with a run or kernel).
std::string header_line(const Comparison& c);
// The cells per side and every setting that decided the verdicts, on one line.
std::string settings_line(const Comparison& c);
// "<side> <cell>: <status> (<class>): <reason>", and for a kernel failure of B whether it
// counts against B.
std::string issue_line(const CellIssue& i);
// "B b-r1: cpu.bogo_ops: stress-ng: metrics untrustworthy: ..."
std::string untrusted_line(const UntrustedValues& u);
// The warnings B's build adds over A's, one line each; the ones in files B's series touches
// count against B (as a kernel test robot's report would be about them).
std::vector<std::string> warning_lines(const Comparison& c);
// One line per cell with a max-latency trace:
//   "before c0001-before-r0 latency: 1969 us, cyclictest-250 on CPU 1: preempt_schedule <
//    migrate_enable < rt_spin_unlock < madvise_cold_or_pageout_pte_range < ..."
// (the first 8 frames of the switch-side stack, innermost first; "(no stack trace)" without).
std::string latency_trace_line(const Comparison& c, const LatencyTraceRow& r);
// "primary: <tally>; secondary: <tally>; counted against B: ...; exit status N".
std::string summary_line(const Comparison& c);

}  // namespace isolab
