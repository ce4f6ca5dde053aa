// results/metric_record.h: a cell's metric objects read with their checks, each bad field named
// by its JSON pointer, and the real metrics of a captured run read back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "results/metric_record.h"

namespace isolab {
namespace {

using nlohmann::json;

results::CellRecord cell_with(const json& metrics) {
  return results::cell_from_json({{"id", "a-r0"}, {"metrics", metrics}}, "/cells/4");
}

// The only metric of a one-metric cell, read.
results::MetricRecord read_one(const json& metric) {
  const results::CellRecord c = cell_with({{"wl.m", metric}});
  return results::metric_record(results::metric_entries(c, "/cells/4").at(0));
}

// The JSON pointer of what reading `metric` (record, then cpus) refuses; "" when nothing.
std::string refused_at(const json& metric) {
  const results::CellRecord c = cell_with({{"wl.m", metric}});
  const results::MetricEntry e = results::metric_entries(c, "/cells/4").at(0);
  try {
    const results::MetricRecord r = results::metric_record(e);
    results::metric_cpus(e);
    results::check_non_negative(r, e.pointer);
  } catch (const SpecError& err) {
    return err.pointer();
  }
  return "";
}

TEST(ResultsMetricRecord, EntriesInKeyOrderWithTheirPointers) {
  const results::CellRecord c = cell_with({{"z/x", {{"values", {1}}}}, {"a~b", {{"values", {2}}}}});
  const auto entries = results::metric_entries(c, "/cells/4");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "a~b");
  EXPECT_EQ(entries[0].pointer, "/cells/4/metrics/a~0b");
  EXPECT_EQ(entries[1].pointer, "/cells/4/metrics/z~1x");
  EXPECT_TRUE(results::metric_entries(cell_with(nullptr), "/cells/4").empty());
}

TEST(ResultsMetricRecord, ReadsEveryField) {
  const results::MetricRecord r = read_one({{"unit", "1/s"},
                                            {"better", "lower"},
                                            {"kind", "count"},
                                            {"aggregate", "max"},
                                            {"values", {0.5, nullptr, 2.5}},
                                            {"source", "tcg-plugin"},
                                            {"cpus", {5, 6, 7}}});
  EXPECT_EQ(r.unit, "1/s");
  EXPECT_EQ(r.better, "lower");
  EXPECT_EQ(r.kind, "count");
  EXPECT_EQ(r.aggregate, "max");
  EXPECT_EQ(r.values, (std::vector<double>{0.5, 2.5}));
  ASSERT_EQ(r.slots.size(), 3u);
  EXPECT_DOUBLE_EQ(r.slots[0], 0.5);
  EXPECT_TRUE(std::isnan(r.slots[1]));
  EXPECT_EQ(r.source, "tcg-plugin");
  EXPECT_EQ(r.untrustworthy, "");
  EXPECT_FALSE(r.first_negative);
  EXPECT_DOUBLE_EQ(r.aggregated(), 2.5);
  const results::CellRecord c = cell_with({{"wl.m", {{"values", {1}}, {"cpus", {5, 6, 7}}}}});
  EXPECT_EQ(results::metric_cpus(results::metric_entries(c, "/c").at(0)),
            (std::vector<unsigned>{5, 6, 7}));
}

TEST(ResultsMetricRecord, AggregatesAndDefaults) {
  EXPECT_EQ(read_one({{"values", {1, 2, 6}}}).aggregate, "mean");
  EXPECT_DOUBLE_EQ(read_one({{"values", {1, 2, 6}}}).aggregated(), 3);
  EXPECT_DOUBLE_EQ(read_one({{"aggregate", nullptr}, {"values", {1, 2, 6}}}).aggregated(), 3);
  EXPECT_DOUBLE_EQ(read_one({{"aggregate", "min"}, {"values", {4, 2, 6}}}).aggregated(), 2);
  EXPECT_DOUBLE_EQ(read_one({{"aggregate", "sum"}, {"values", {4, 2, 6}}}).aggregated(), 12);
  const results::MetricRecord lenient =
      read_one({{"values", {1}}, {"unit", 3}, {"kind", nullptr}, {"untrustworthy", "exit 7"}});
  EXPECT_EQ(lenient.unit, "");
  EXPECT_EQ(lenient.kind, "");
  EXPECT_EQ(lenient.untrustworthy, "exit 7");
}

TEST(ResultsMetricRecord, BadFieldsAreNamedByTheirPointer) {
  EXPECT_EQ(refused_at(3), "/cells/4/metrics/wl.m");
  EXPECT_EQ(refused_at({{"aggregate", "median"}, {"values", {1}}}),
            "/cells/4/metrics/wl.m/aggregate");
  EXPECT_EQ(refused_at({{"aggregate", 3}, {"values", {1}}}), "/cells/4/metrics/wl.m/aggregate");
  EXPECT_EQ(refused_at({{"values", 1}}), "/cells/4/metrics/wl.m/values");
  EXPECT_EQ(refused_at(json::object()), "/cells/4/metrics/wl.m/values");
  EXPECT_EQ(refused_at({{"values", {1, "2"}}}), "/cells/4/metrics/wl.m/values/1");
  EXPECT_EQ(refused_at({{"values", {1}}, {"kind", "rate"}}), "/cells/4/metrics/wl.m/kind");
  EXPECT_EQ(refused_at({{"values", {1}}, {"cpus", 5}}), "/cells/4/metrics/wl.m/cpus");
  EXPECT_EQ(refused_at({{"values", {1, 2}}, {"cpus", {5, 8192}}}), "/cells/4/metrics/wl.m/cpus/1");
  EXPECT_EQ(refused_at({{"values", {1, 2}}, {"cpus", {5, 6.0}}}), "/cells/4/metrics/wl.m/cpus/1");
  EXPECT_EQ(refused_at({{"values", {1, nullptr, -2, -3}}}), "/cells/4/metrics/wl.m/values/2");
  EXPECT_EQ(refused_at({{"values", {1, nullptr}}, {"cpus", nullptr}}), "");
}

TEST(ResultsMetricRecord, ErrorsQuoteTheValueAsWritten) {
  try {
    results::check_non_negative(read_one({{"values", {4, -3}}}), "/m");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(),
                 "/m/values/1: a count, event rate or instruction count must be >= 0, got -3");
  }
  try {
    read_one({{"values", {1}}, {"kind", "rate"}});
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(),
                 "/cells/4/metrics/wl.m/kind: metric kind must be \"count\", \"timing\" or "
                 "\"instructions\", got \"rate\"");
  }
}

// Every metric of the captured planted run reads, with its own values.
TEST(ResultsMetricRecord, CapturedRunReads) {
  const json doc = json::parse(read_file(std::filesystem::path(ISOLAB_TEST_DATA_DIR) /
                                         "runs/planted-regression-kqin12/result.json"));
  const results::RunResult run = results::result_from_json(doc);
  std::size_t metrics = 0;
  for (std::size_t i = 0; i < run.cells.size(); ++i)
    for (const auto& e : results::metric_entries(run.cells[i], "/cells/" + std::to_string(i))) {
      const results::MetricRecord r = results::metric_record(e);
      EXPECT_EQ(r.slots.size(), doc["cells"][i]["metrics"][e.name]["values"].size()) << e.name;
      results::metric_cpus(e);
      ++metrics;
    }
  EXPECT_GT(metrics, 100u);
  // vanilla-r0's latency.latency_avg_us: three cyclictest threads' averages.
  const results::MetricEntry first = results::metric_entries(run.cells[0], "/cells/0").at(0);
  EXPECT_EQ(first.name, "latency.latency_avg_us");
  const results::MetricRecord r = results::metric_record(first);
  EXPECT_EQ(r.unit, "us");
  EXPECT_EQ(r.better, "lower");
  EXPECT_EQ(r.values, (std::vector<double>{4798.77, 4179.13, 3984.59}));
  EXPECT_NEAR(r.aggregated(), (4798.77 + 4179.13 + 3984.59) / 3, 1e-9);
}

}  // namespace
}  // namespace isolab
