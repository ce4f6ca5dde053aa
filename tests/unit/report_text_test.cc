// The text report of a real run (tests/data/runs/planted-regression-kqin12, with the planted
// vmstat_update as its primary): the answer on the first 80x24 screen, the method after it,
// and only the rows that changed unless --all.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "budgets/judge.h"
#include "compare/request.h"
#include "report/format.h"
#include "report/json.h"
#include "report/summary.h"
#include "report/text.h"
#include "report_hostile.h"
#include "unwrapped.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Comparison planted() {
  CompareRequest r;
  r.run_dirs = {kReportRun};
  r.primary = kReportPrimary;
  std::ostringstream err;
  return load_comparison(r, err).comparison;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(TextReport, TheAnswerFitsTheFirstScreen) {
  const std::vector<std::string> lines = lines_of(render_text(planted()));
  ASSERT_GE(lines.size(), 24u);
  const std::vector<std::string> screen(lines.begin(), lines.begin() + 24);
  // Every line of the answer, up to the end of the method's paragraph, fits 80 columns, the
  // run and the kernels included; the tables below it are as wide as their columns.
  std::string first;
  bool method = false;
  for (const auto& l : screen) {
    first += l + "\n";
    if (method && l.rfind("  ", 0) != 0) break;
    method = method || l.rfind("method:", 0) == 0;
    EXPECT_LE(report_detail::width_of(l), 80u) << l;
  }
  ASSERT_TRUE(method) << first;
  EXPECT_EQ(screen[0], "isolab compare: planted-regression (run");
  EXPECT_EQ(screen[2], "A = vanilla (6.1.192-isolab-6615e1979a99)");
  EXPECT_EQ(screen[4], "verdict: regressed (exit status 1)");
  EXPECT_THAT(first, HasSubstr("  primary: vmstat-idle: vmstat_update on CPUs 5-7: 0/s -> 1.04/s"));
  EXPECT_THAT(first, HasSubstr("  isolation gate: all 11 checks passed in every cell checked\n"));
  EXPECT_THAT(first, HasSubstr("  cells that did not count: 1 (listed below)\n"));
  // The method follows the answer; the settings come last.
  EXPECT_LT(first.find("verdict:"), first.find("method: exit status 1: rests on 1 primary"));
  EXPECT_THAT(first, Not(HasSubstr("settings:")));
}

// A primary that cannot reach alpha with these boots (an interrupt count that is 0 in every boot
// of both kernels) is named once, in the "not decided" line with its reason, right after the
// gate, and not again among the rows that did not move.
TEST(TextReport, APrimaryThatCannotReachAlphaIsNamedOnceWithTheGate) {
  CompareRequest r;
  r.run_dirs = {kReportRun};
  r.primary = kReportPrimary;
  r.primary.push_back("latency.noise.irq_per_s@7:higher");
  std::ostringstream err;
  const std::string text = render_text(load_comparison(r, err).comparison);
  const std::vector<std::string> lines = lines_of(text);
  ASSERT_GE(lines.size(), 24u);
  std::string screen;
  for (std::size_t i = 0; i < 24; ++i) screen += lines[i] + "\n";
  const std::string flat = unwrapped(screen);
  // (unwrapped() joins the answer's indented lines with a space)
  EXPECT_THAT(flat, HasSubstr("isolation gate: all 11 checks passed in every cell checked not "
                              "decided: latency.noise.irq_per_s[cpu7] (could not reach alpha "
                              "with these boots) cells"));
  EXPECT_THAT(unwrapped(text), Not(HasSubstr("primary metrics that could not reach alpha")));
  const std::string name = "latency.noise.irq_per_s[cpu7] (could not";
  EXPECT_EQ(flat.find(name), flat.rfind(name));
}

// Two runs (B's run renamed here): each side names its run, on lines wrapped at 80 columns.
TEST(TextReport, TwoRunsNameEachSidesRunWithinEightyColumns) {
  Comparison c = planted();
  c.run_b = "20261201T000000Z-planted-regression-other";
  const std::vector<std::string> lines = lines_of(render_text(c));
  ASSERT_GE(lines.size(), 8u);
  EXPECT_EQ(lines[0], "isolab compare: planted-regression");
  const std::string head =
      unwrapped(lines[1] + "\n" + lines[2] + "\n" + lines[3] + "\n" + lines[4] + "\n");
  EXPECT_THAT(head, HasSubstr("A = vanilla (run 20261130T203925Z-planted-regression-kqin12, "
                              "6.1.192-isolab-6615e1979a99)\nB = planted (run "
                              "20261201T000000Z-planted-regression-other, "));
  for (std::size_t i = 0; i < 8; ++i) EXPECT_LE(report_detail::width_of(lines[i]), 80u) << lines[i];
}

// The planted run copied, its result.json changed by `edit`, compared A against B.
Comparison compare_edited_copy(const std::string& tag,
                               const std::function<void(nlohmann::json&)>& edit) {
  const fs::path dir =
      fs::temp_directory_path() / ("isolab-report-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(kReportRun, dir, fs::copy_options::recursive);
  nlohmann::json run = load_result(dir);
  edit(run);
  write_file_atomic(dir / "result.json", run.dump());
  CompareRequest r;
  r.run_dirs = {dir};
  r.primary = kReportPrimary;
  std::ostringstream err;
  Comparison c = load_comparison(r, err).comparison;
  fs::remove_all(dir);
  return c;
}

// A run that judged budgets (here the planted run, judged by the budgets' own code against
// vmstat_update below 0.5/s on the isolated CPUs and recorded as `isolab run` records it): the
// answer says each side's verdict, as the run's, apart from compare's exit status.
TEST(TextReport, TheBudgetsTheRunJudgedAreInTheAnswer) {
  const Comparison c = compare_edited_copy("budgets", [](nlohmann::json& run) {
    const auto budgets = parse_budgets(
        nlohmann::json::parse(
            R"([{"workload": "vmstat-idle", "metric": "vmstat_update_per_s", "below": 0.5}])"),
        "/budgets");
    run["budgets"] = to_json(judge_budgets(budgets, run));
  });
  EXPECT_EQ(c.budget_a, "within budget");
  EXPECT_THAT(c.budget_b, testing::StartsWith("over budget on CPU "));
  const std::vector<std::string> lines = lines_of(render_text(c));
  std::string first;
  for (std::size_t i = 0; i < 24 && i < lines.size(); ++i) first += lines[i] + "\n";
  const std::string screen = unwrapped(first);
  EXPECT_THAT(screen, HasSubstr("budgets (as the run judged them; not in compare's exit status): "
                                "A within budget, B over budget on CPU "));
  EXPECT_THAT(screen, HasSubstr("verdict: regressed (exit status 1)"));
  // Without a recorded judgement there is no such line.
  EXPECT_THAT(render_text(planted()), Not(HasSubstr("budgets (as the run")));
}

// A run of a customer's machine (the fidelity rows of examples/customer-cm1.json's dry run):
// the answer says how the guest stood for it, the facts that are not the same named, once when
// A and B are the same run; JSON holds each side's summary.
TEST(TextReport, HowTheGuestStoodForTheCustomersMachineIsInTheAnswer) {
  const Comparison c = compare_edited_copy("fidelity", [](nlohmann::json& run) {
    run["fidelity"] =
        nlohmann::json::parse(read_file(kReportRun.parent_path() / "cm1-fidelity.json"));
  });
  const std::string summary =
      "16 facts the same, 2 scaled (CPUs, kernel command line), 3 not reproduced (kernel, TuneD "
      "profile, IRQs on isolated CPUs)";
  EXPECT_EQ(c.fidelity_a, summary);
  EXPECT_EQ(c.fidelity_b, summary);
  const std::string screen = unwrapped(render_text(c));
  EXPECT_THAT(screen,
              HasSubstr("the customer's machine (the report's table has each fact): " + summary));
  EXPECT_EQ(render_json(c)["fidelity"]["b"], summary);
  // A run without a customer's machine has no such line, and A and B apart are each named.
  EXPECT_THAT(render_text(planted()), Not(HasSubstr("the customer's machine")));
  Comparison apart = c;
  apart.fidelity_a.clear();
  EXPECT_EQ(fidelity_answer(apart),
            "the customer's machine (the report's table has each fact): A none; B " + summary);
}

TEST(TextReport, OnlyTheRowsThatChangedUnlessAll) {
  const Comparison c = planted();
  const std::string text = render_text(c);
  const std::string all = render_text(c, {.all_rows = true});
  // The primary's row is shown; the 121 inconclusive and 3 unchanged secondary rows are counted.
  EXPECT_THAT(text, HasSubstr("vmstat-idle.noise.vmstat_update_per_s  1/s"));
  EXPECT_THAT(unwrapped(text), HasSubstr("(124 secondary rows not shown: 3 no significant "
                                         "change, 121 inconclusive; --all shows every row)"));
  EXPECT_THAT(text, Not(HasSubstr("latency.latency_max_us")));
  EXPECT_THAT(all, HasSubstr("latency.latency_max_us"));
  EXPECT_THAT(all, Not(HasSubstr("rows not shown")));
  EXPECT_LT(lines_of(text).size() + 124, lines_of(all).size());
  // JSON keeps every row whatever the text shows.
  EXPECT_EQ(render_json(c)["metrics"].size(), c.metrics.size());
}

TEST(TextReport, WrapFillsLinesAndKeepsALongWordWhole) {
  using report_detail::wrap;
  EXPECT_EQ(wrap("a bb ccc dddd", 8, "  ", "    "), "  a bb\n    ccc\n    dddd\n");
  EXPECT_EQ(wrap("averyveryverylongword x", 8, "", ""), "averyveryverylongword\nx\n");
  EXPECT_EQ(wrap("  ", 80, "", ""), "");
}

}  // namespace
}  // namespace isolab
