// The reading of a cell's latency histograms (results/histogram.h) and the tails of what it reads.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/files.h"
#include "results/histogram.h"
#include "stats/sample.h"

namespace isolab {
namespace {

TEST(Histogram, NearestRankTailAndMerge) {
  const auto boot1 = results::histogram_from_json(
      nlohmann::json::parse(R"({"unit":"us","counts":{"0":10,"1":5000,"17":3},"overflows":0})"),
      "/h");
  const auto boot2 = results::histogram_from_json(
      nlohmann::json::parse(R"({"unit":"us","counts":{"1":4900,"2":80,"40":7}})"), "/h");
  Histogram merged;
  merge_histogram(merged, boot1);
  merge_histogram(merged, boot2);
  EXPECT_EQ(merged.total(), 10000u);
  EXPECT_EQ(merged.counts.at(1), 9900u);
  // Ranks: p99 -> 9900 (bucket 1 ends at 10+9900 = 9910), p99.9 -> 9990: 9910 + 80 = 9990 is
  // bucket 2, max 40.
  const HistogramTail t = histogram_tail(merged);
  EXPECT_EQ(t.samples, 10000u);
  EXPECT_EQ(t.p99, 1);
  EXPECT_EQ(t.p99_9, 2);
  // p99.999 -> rank 9999.9, so 10000: the highest sample, as below 100 000 samples it is.
  EXPECT_EQ(t.p99_999, 40);
  EXPECT_EQ(t.max, 40);
  EXPECT_EQ(histogram_percentile(merged, 99.91), 17);
  EXPECT_EQ(histogram_percentile(merged, 100), 40);
}

TEST(Histogram, OverflowsMakeTheTailUnknown) {
  const auto h = results::histogram_from_json(
      nlohmann::json::parse(R"({"counts":{"5":98,"6":1},"overflows":1})"), "/x");
  const HistogramTail t = histogram_tail(h);
  EXPECT_EQ(t.p99, 6);
  EXPECT_FALSE(t.p99_9.has_value());
  EXPECT_FALSE(t.max.has_value());
  EXPECT_EQ(t.overflows, 1u);
}

TEST(Histogram, BadInputNamesThePointer) {
  try {
    results::histogram_from_json(nlohmann::json::parse(R"({"counts":{"1":2,"x1":3}})"),
                                 "/cells/0/histograms/latency");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.pointer(), "/cells/0/histograms/latency/counts/x1");
  }
  try {
    results::histogram_from_json(nlohmann::json::parse(R"({"counts":{"1":-2}})"), "/h");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.pointer(), "/h/counts/1");
  }
  EXPECT_THROW(results::histogram_from_json(nlohmann::json::parse(R"({"counts":[1]})"), "/h"),
               SpecError);
}

TEST(Histogram, CellHistogramsWithTheirUnitsAndPointers) {
  const results::CellRecord c = results::cell_from_json(
      nlohmann::json::parse(R"({"histograms": {"b": {"unit": "ns", "counts": {"3": 2}},
                                               "a/x": {"counts": {"1": 1}, "overflows": 4}}})"),
      "/cells/2");
  const auto hs = results::cell_histograms(c, "/cells/2");
  ASSERT_EQ(hs.size(), 2u);
  EXPECT_EQ(hs[0].name, "a/x");
  EXPECT_EQ(hs[0].unit, "us");
  EXPECT_EQ(hs[0].histogram.overflows, 4u);
  EXPECT_EQ(hs[0].histogram.counts.at(1), 1u);
  EXPECT_EQ(hs[1].unit, "ns");
  EXPECT_EQ(results::cell_histogram(c, "b")->counts.at(3), 2u);
  EXPECT_FALSE(results::cell_histogram(c, "none"));
  const results::CellRecord none = results::cell_from_json({{"histograms", nullptr}}, "/cells/0");
  EXPECT_TRUE(results::cell_histograms(none, "/cells/0").empty());
  EXPECT_FALSE(results::cell_histogram(none, "b"));
}

TEST(Histogram, ABadCellHistogramIsNamedByItsPointerOrSkipped) {
  const results::CellRecord c = results::cell_from_json(
      nlohmann::json::parse(R"({"histograms": {"l/at": {"counts": {"1": 1}, "overflows": -1}}})"),
      "/cells/2");
  try {
    results::cell_histograms(c, "/cells/2");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.pointer(), "/cells/2/histograms/l~1at/overflows");
  }
  EXPECT_FALSE(results::cell_histogram(c, "l/at"));
}

TEST(Histogram, CapturedCellHistogram) {
  const results::RunResult run = results::result_from_json(nlohmann::json::parse(read_file(
      std::filesystem::path(ISOLAB_TEST_DATA_DIR) / "runs/planted-regression-kqin12/result.json")));
  const auto hs = results::cell_histograms(run.cells[0], "/cells/0");
  ASSERT_EQ(hs.size(), 1u);
  EXPECT_EQ(hs[0].name, "latency");
  EXPECT_EQ(hs[0].unit, "us");
  EXPECT_EQ(hs[0].histogram.counts.at(100), 4u);
  EXPECT_EQ(hs[0].histogram.counts.at(101), 7u);
}

}  // namespace
}  // namespace isolab
