// The hwlat tracer's text (docs/sources.md [w1]), on the example of the kernel's
// Documentation/trace/ftrace.rst (tests/data/trace/doc-hwlat.txt).
#include <gtest/gtest.h>

#include <numeric>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "parse/hwlat.h"

namespace isolab {
namespace {

std::string doc() { return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/trace/doc-hwlat.txt"); }

// The lines of the documentation's example with these sequence numbers.
std::string only(const std::vector<int>& seqs) {
  std::string out, line;
  std::istringstream in(doc());
  while (std::getline(in, line))
    for (int s : seqs)
      if (line.find(": #" + std::to_string(s) + " ") != std::string::npos) out += line + "\n";
  return out;
}

double max_on(const Metrics& m, int cpu) {
  const MetricPerCpu& pc = *m.at("hwlat.max_us").per_cpu;
  for (std::size_t i = 0; i < pc.cpus.size(); ++i)
    if (pc.cpus[i] == cpu) return *pc.slots[i];
  return -1;
}

long long crossings(const Metrics& m) {
  const auto& c = m.at("hwlat.threshold_crossings").per_cpu->counts;
  return std::accumulate(c.begin(), c.end(), 0LL);
}

TEST(Hwlat, DocumentationExample) {
  ASSERT_TRUE(is_hwlat_trace(doc()));
  const auto samples = parse_hwlat_trace(doc());
  ASSERT_EQ(samples.size(), 12u);  // 13 entries written, 12 shown: not required to match
  EXPECT_EQ(samples[0].seq, 1);
  EXPECT_EQ(samples[0].cpu, 1);
  EXPECT_EQ(samples[0].inner_us, 11);
  EXPECT_EQ(samples[0].outer_us, 12);
  EXPECT_EQ(samples[0].count, 6);
  EXPECT_FALSE(samples[0].nmi_count.has_value());
  EXPECT_EQ(samples[9].nmi_total_us, 7.0);
  EXPECT_EQ(samples[9].nmi_count, 1);
  const Metrics m = hwlat_metrics(samples);
  EXPECT_EQ(max_on(m, 3), 18);  // #7: inner 18
  EXPECT_EQ(m.at("hwlat.max_us").aggregate, "max");
  EXPECT_EQ(crossings(m), 22);
}

// The five lines of the case: the larger of inner and outer counts (#4 is 17 from outer, #6
// 12 although inner is 9); count: sums to 10.
TEST(Hwlat, FiveLinesTakeTheLargerOfInnerAndOuter) {
  const std::string text = "# tracer: hwlat\n" + only({1, 4, 7, 10, 12});
  const Metrics m = hwlat_metrics(parse_hwlat_trace(text));
  EXPECT_EQ(max_on(m, 3), 18);
  EXPECT_EQ(max_on(m, 1), 17);
  EXPECT_EQ(max_on(m, 7), 12);
  EXPECT_EQ(crossings(m), 10);
  EXPECT_EQ(m.at("hwlat.nmi_count").per_cpu->counts[0], 1);  // CPU 1's #10
}

// W1 of the public cases, the line before v5.7: no count:, NMI fields; its latency is the
// outer 12 us although inner is 0.
TEST(Hwlat, PreV57LineWithNmiFields) {
  const auto s = parse_hwlat_trace(
      "           <...>-3638  [003] d... 19501.283419: #6     inner/outer(us):    0/12    "
      "ts:1499801138.297435289 nmi-total:4 nmi-count:1\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].seq, 6);
  EXPECT_EQ(s[0].cpu, 3);
  EXPECT_EQ(s[0].latency_us(), 12);
  EXPECT_EQ(s[0].count, 1);
  EXPECT_EQ(*s[0].nmi_total_us, 4);
  EXPECT_EQ(*s[0].nmi_count, 1);
}

TEST(Hwlat, OlderLinesWithoutCountCountOnceAndBadLinesAreNamed) {
  const auto s = parse_hwlat_trace(
      "           <...>-1729  [002] d...   678.473449: #1     inner/outer(us):   11/12    "
      "ts:1581527483.343962693\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].count, 1);
  EXPECT_EQ(s[0].cpu, 2);
  EXPECT_THROW(parse_hwlat_trace("# tracer: hwlat\n"), Error);
  try {
    parse_hwlat_trace("# tracer: hwlat\n  <...>-1 [001] d... 1.0: #1 inner/outer(us): x/12\n");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(is_hwlat_trace("# tracer: nop\n"));
}

}  // namespace
}  // namespace isolab
