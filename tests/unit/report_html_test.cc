// The HTML report of a real run (tests/data/runs/planted-regression-kqin12, see its README):
// what it says and draws, and that strings from guests and specs cannot inject markup.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "report/data.h"
#include "report/html.h"
#include "report/render.h"
#include "report_hostile.h"
#include "results/result_file.h"

namespace isolab {
namespace {

const fs::path& kRun = kReportRun;

std::size_t occurrences(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// Sum of cells[id].noise.<wl>.cpus[].causes.<cause>.count in result.json.
long noise_count(const nlohmann::json& run, const std::string& id, const std::string& wl,
                 const std::string& cause) {
  for (const auto& c : run["cells"]) {
    if (c["id"] != id) continue;
    long n = 0;
    for (const auto& cpu : c["noise"][wl]["cpus"]) n += cpu["causes"][cause]["count"].get<long>();
    return n;
  }
  ADD_FAILURE() << "no cell " << id;
  return -1;
}

ReportData gather(const fs::path& dir) {
  CompareRequest o;
  o.run_dirs = {dir};
  o.primary = kReportPrimary;
  return gather_report(o);
}

TEST(ReportHtml, PlantedRunSaysWhatCompareSays) {
  const ReportData d = gather(kRun);
  const std::string html = render_html_report(d);
  const auto lines = summarize(d.loaded.comparison);
  ASSERT_FALSE(lines.empty());
  for (const SummaryLine& l : lines) EXPECT_NE(html.find(xml_escape(l.text)), std::string::npos);
  EXPECT_NE(html.find("primary: vmstat-idle: vmstat_update on CPUs 5-7: 0/s -&gt; 1.04/s (new), "
                      "regressed, step-down p = 0.008"),
            std::string::npos);
  // The planted boot's RCU stall under TCG is weighed as a rate (1 of 5 against 0 of 5).
  EXPECT_NE(html.find("kernel failure rcu_stall: B 1 of 5 boots, A 0 of 5 boots"),
            std::string::npos);
  EXPECT_NE(html.find(xml_escape(render_text(d.loaded.comparison, {.all_rows = true}))),
            std::string::npos);
  EXPECT_EQ(occurrences(html, "<script"), 1u);  // the page's own check script only
  EXPECT_EQ(occurrences(html, "data-plot=\"metric:"), d.loaded.comparison.metrics.size());
  // The answer first: the verdict, then the primary's plot before any other row's; the other
  // rows in one folded group per workload, after the answer's folded secondary lines.
  const auto verdict = html.find("<b>verdict: regressed</b>");
  const auto first_plot = html.find("data-plot=\"metric:");
  EXPECT_LT(verdict, first_plot);
  EXPECT_EQ(html.find("data-plot=\"metric:vmstat-idle.noise.vmstat_update_per_s\""), first_plot);
  EXPECT_LT(first_plot, html.find("<p class=\"method\">method: exit status 1: rests on"));
  EXPECT_EQ(occurrences(html, "<details class=\"group\">"), 1u + 3u);
  EXPECT_NE(html.find("<b>vmstat-idle</b>: "), std::string::npos);
  EXPECT_EQ(occurrences(html, "data-plot=\"noise:"), 3u);
  EXPECT_EQ(occurrences(html, "data-plot=\"histogram:"), 1u);
  // Kernel releases, patch and the planted boot's RCU stall are shown.
  EXPECT_NE(html.find("6.1.192-isolab-"), std::string::npos);
  EXPECT_NE(html.find("0001-mm-vmstat-PLANTED-REGRESSION"), std::string::npos);
  EXPECT_NE(html.find("rcu_stall"), std::string::npos);
}

// The step with the largest change of vmstat_update (0 -> 1.04/s) is drawn, from the traces
// beside result.json; its ticks are the interruptions the pipeline counted in the same window.
TEST(ReportHtml, TimelineOfTheStepThatChangedMost) {
  const ReportData d = gather(kRun);
  EXPECT_EQ(d.timeline_workload, "vmstat-idle");
  ASSERT_EQ(d.timelines.size(), 2u);
  const nlohmann::json run = load_result(kRun);
  for (const Timeline& t : d.timelines) {
    SCOPED_TRACE(t.cell_id);
    EXPECT_EQ(t.missing, "");
    EXPECT_EQ(t.cpus, (std::vector<int>{5, 6, 7}));
    EXPECT_EQ(static_cast<long>(t.marks.size()),
              noise_count(run, t.cell_id, "vmstat-idle", "interruptions"));
    long vmstat = 0;
    for (const auto& m : t.marks) {
      vmstat += m.cause == "vmstat_update";
      EXPECT_GE(m.t_s, -0.05);  // the trace holds the step, its window is read around it
      EXPECT_LE(m.t_s, t.window_s + 0.05);
    }
    EXPECT_EQ(vmstat, noise_count(run, t.cell_id, "vmstat-idle", "vmstat_update"));
  }
  EXPECT_EQ(d.timelines[0].side, "A");
  EXPECT_EQ(d.timelines[0].cell_id, "vanilla-r0");
  EXPECT_EQ(d.timelines[1].cell_id, "planted-r0");
  EXPECT_EQ(d.timelines[0].marks.size(), 491u);
  EXPECT_EQ(d.timelines[1].marks.size(), 526u);
}

TEST(ReportHtml, MissingTraceIsSaidNotFatal) {
  ReportData d = gather(kRun);
  const ReportCell* other = nullptr;
  for (const auto& c : d.cells)
    if (c.id == "vanilla-r1") other = &c;
  ASSERT_NE(other, nullptr);
  const Timeline t = read_timeline(kRun, *other, "vmstat-idle");
  EXPECT_NE(t.missing.find("vanilla-r1/records/vmstat-idle.window"), std::string::npos)
      << t.missing;
  EXPECT_TRUE(t.marks.empty());
}

// A run of a customer's machine carries the fidelity table (the dry run's for CM1, put into a
// copy of the planted run): the report shows it row by row; a run without one has no section.
TEST(ReportHtml, TheCustomersMachineIsShownFactByFact) {
  EXPECT_EQ(render_html_report(gather(kRun)).find("id=\"fidelity\""), std::string::npos);
  const fs::path dir =
      fs::temp_directory_path() / ("isolab-report-fidelity-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(kRun, dir, fs::copy_options::recursive);
  nlohmann::json run = load_result(dir);
  run["fidelity"] = nlohmann::json::parse(read_file(kRun.parent_path() / "cm1-fidelity.json"));
  write_file_atomic(dir / "result.json", run.dump());
  const std::string html = render_html_report(gather(dir));
  fs::remove_all(dir);
  const auto at = html.find("<h2 id=\"fidelity\">The customer's machine</h2>");
  ASSERT_NE(at, std::string::npos);
  const std::string section = html.substr(at, html.find("<h2", at + 1) - at);
  EXPECT_EQ(occurrences(section, "<tr>"), 22u);  // the header and the 21 rows
  EXPECT_NE(section.find("<td class=\"name\">CPUs</td><td class=\"wrap\">0-3 (4), online "
                         "0-1</td><td class=\"wrap\">0-1 (2)</td><td class=\"wrap\">scaled "
                         "(online CPUs only: CPUs 2-3 offline: not booted)</td>"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("<td>same</td>"), std::string::npos);
  EXPECT_NE(section.find(">not reproduced (the guest boots the kernels under test"),
            std::string::npos);
  // One run compared with itself: one table.
  EXPECT_EQ(occurrences(section, "<table>"), 1u);
}

TEST(ReportHtml, HostileStringsAreEscaped) {
  const fs::path dir =
      fs::temp_directory_path() / ("isolab-report-hostile-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ASSERT_NO_FATAL_FAILURE(make_hostile(dir));
  const ReportData d = gather(dir);
  const std::string html = render_html_report(d);
  fs::remove_all(dir);
  EXPECT_EQ(occurrences(html, "<script"), 1u);
  EXPECT_EQ(occurrences(html, "<img"), 0u);
  EXPECT_EQ(occurrences(html, "onerror=\""), 0u);
  EXPECT_NE(html.find("&lt;script&gt;document.title=&apos;PWNED&apos;&lt;/script&gt;"),
            std::string::npos);
  EXPECT_NE(html.find("&quot;&gt;&lt;img src=x onerror="), std::string::npos);
  EXPECT_NE(html.find("(&lt;script&gt;x&lt;/script&gt;)"), std::string::npos);  // timeline title
}

}  // namespace
}  // namespace isolab
