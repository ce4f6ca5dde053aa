// rtla timerlat top and its auto-analysis, on the example of the kernel's
// Documentation/tools/rtla/rtla-timerlat-top.rst (docs/sources.md [r6]).
#include <gtest/gtest.h>

#include <numeric>

#include "base/error.h"
#include "base/files.h"
#include "parse/timerlat_top.h"

namespace isolab {
namespace {

std::string doc() {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/rtla/doc-timerlat-top-auto-analysis.txt");
}

TEST(RtlaTimerlatTop, DocumentationTableAndRunThatStoppedEarly) {
  const RtlaTimerlatTop t = parse_rtla_timerlat_top(doc());
  EXPECT_EQ(t.duration_s, 12.0);  // the run ended when CPU 23 passed -a 40
  EXPECT_TRUE(t.stopped);
  ASSERT_EQ(t.table.cpus.size(), 23u);
  const RtlaHistCpu& c4 = t.table.cpus[3];
  EXPECT_EQ(c4.cpu, 4);
  ASSERT_TRUE(c4.irq && c4.thread);
  EXPECT_FALSE(c4.user.has_value());
  EXPECT_EQ(c4.irq->count, 12322);  // "#12322": the '#' is glued to the number
  EXPECT_EQ(c4.irq->max_us, 17.0);
  EXPECT_EQ(c4.thread->min_us, 2.0);
  EXPECT_EQ(c4.thread->avg_us, 11.0);
  EXPECT_EQ(c4.thread->max_us, 33.0);
  const RtlaHistCpu& c23 = t.table.cpus[22];
  EXPECT_EQ(c23.cpu, 23);
  EXPECT_EQ(c23.thread->max_us, 41.0);  // the table truncates the 41.96 of the analysis
  EXPECT_EQ(t.table.cpus[11].irq->count, 12321);
}

TEST(RtlaTimerlatTop, AutoAnalysisPartsAreSharesOfTheThreadLatency) {
  const RtlaTimerlatTop t = parse_rtla_timerlat_top(doc());
  ASSERT_TRUE(t.analysis.has_value());
  const TimerlatAutoAnalysis& a = *t.analysis;
  EXPECT_EQ(a.cpu, 23);
  EXPECT_EQ(a.total_label, "Thread latency");
  EXPECT_EQ(a.total_us, 41.96);
  ASSERT_EQ(a.parts.size(), 3u);
  EXPECT_EQ(a.parts[0].label, "IRQ handler delay");
  EXPECT_EQ(a.parts[0].us, 27.49);
  EXPECT_EQ(a.parts[0].share_pct, 65.52);
  EXPECT_EQ(a.parts[1].label, "Timerlat IRQ duration");
  EXPECT_EQ(a.parts[2].label, "Blocking thread");
  EXPECT_EQ(a.parts[2].us, 3.79);
  // Each share is the part over the total (27.49 / 41.96 = 65.5 %), and the parts stay below
  // it; the IRQ latency, which contains the handler delay, is kept apart.
  for (const auto& p : a.parts) EXPECT_NEAR(p.share_pct, 100 * p.us / *a.total_us, 0.05);
  const double parts = std::accumulate(a.parts.begin(), a.parts.end(), 0.0,
                                       [](double s, const auto& p) { return s + p.us; });
  EXPECT_LT(parts, *a.total_us);
  EXPECT_EQ(a.irq_latency_us, 28.13);
  EXPECT_EQ(a.blocking_task, "objtool");
  EXPECT_EQ(a.blocking_pid, 49256);
  ASSERT_EQ(a.blocking_stack.size(), 19u);
  EXPECT_EQ(a.blocking_stack.front(), "timerlat_irq");
  EXPECT_EQ(a.blocking_stack.back(), "entry_SYSCALL_64_after_hwframe");
  EXPECT_EQ(a.idle_max_us, 17.48);  // about CPU 4, not CPU 23
  EXPECT_EQ(a.idle_cpu, 4);
  const auto notes = timerlat_analysis_notes(t);
  ASSERT_EQ(notes.size(), 5u);
  EXPECT_EQ(notes[0], "rtla timerlat stopped tracing after 12 s: the results cover that time only");
  EXPECT_NE(notes[1].find("IRQ handler delay 27.49 us (65.52 %)"), std::string::npos) << notes[1];
}

// Before "rtla/auto-analysis: Replace \t with spaces" (2024-05) the block was aligned with tabs.
TEST(RtlaTimerlatTop, TabsBetweenLabelAndValue) {
  std::string text = doc();
  for (const char* label : {"IRQ handler delay:", "Thread latency:", "IRQ latency:"}) {
    const std::size_t at = text.find(label);
    ASSERT_NE(at, std::string::npos);
    std::size_t end = at + std::string(label).size();
    std::size_t spaces = end;
    while (text[spaces] == ' ') ++spaces;
    text.replace(end, spaces - end, "\t\t");
  }
  const RtlaTimerlatTop t = parse_rtla_timerlat_top(text);
  ASSERT_TRUE(t.analysis.has_value());
  EXPECT_EQ(t.analysis->parts[0].us, 27.49);
  EXPECT_EQ(t.analysis->total_us, 41.96);
  EXPECT_EQ(t.analysis->irq_latency_us, 28.13);
}

TEST(RtlaTimerlatTop, ErrorsNameTheLine) {
  EXPECT_THROW(parse_rtla_timerlat_top("nothing here\n"), Error);
  std::string text = doc();
  text.replace(text.find("  4 #12322"), 10, "  4 #12x22");
  try {
    parse_rtla_timerlat_top(text);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 7"), std::string::npos) << e.what();
  }
  std::string dup = doc();
  dup.replace(dup.find("  5 #12322"), 3, "  4");
  EXPECT_THROW(parse_rtla_timerlat_top(dup), Error);
}

}  // namespace
}  // namespace isolab
