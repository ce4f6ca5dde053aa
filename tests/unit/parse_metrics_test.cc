// Metric / Metrics: JSON shape of result.json cells[].metrics, NaN never stored, reduction.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/error.h"
#include "parse/metrics.h"

namespace isolab {
namespace {

TEST(Metrics, JsonRoundTripHasTheSchemaShape) {
  Metrics m;
  EXPECT_TRUE(add_metric_value(m, "latency_max_us", "us", true, "max", 31));
  EXPECT_TRUE(add_metric_value(m, "latency_max_us", "us", true, "max", 40));
  EXPECT_TRUE(add_metric_value(m, "cpu.bogo_ops_per_s_real", "bogo ops/s", false, "sum", 1234.5));
  nlohmann::json j = m;
  EXPECT_EQ(
      j.dump(),
      R"({"cpu.bogo_ops_per_s_real":{"aggregate":"sum","better":"higher","unit":"bogo ops/s","values":[1234.5]},)"
      R"("latency_max_us":{"aggregate":"max","better":"lower","unit":"us","values":[31.0,40.0]}})");
  EXPECT_EQ(j.get<Metrics>(), m);
}

// docs/sources.md [s3]: values stress-ng does not vouch for carry the reason through result.json.
TEST(Metrics, UntrustworthyRoundTripAndMarking) {
  Metrics m;
  add_metric_value(m, "w.cpu.bogo_ops", "bogo ops", false, "sum", 10);
  add_metric_value(m, "w.cpu.bogo_ops_per_s_real", "bogo ops/s", false, "sum", 5);
  add_metric_value(m, "w.vm.bogo_ops", "bogo ops", false, "sum", 7);
  EXPECT_EQ(mark_untrustworthy(m, "w.cpu.", "stress-ng exited 7"), 2u);
  EXPECT_EQ(mark_untrustworthy(m, "w.cpu.", "later"), 2u);  // the first reason stays
  nlohmann::json j = m;
  EXPECT_EQ(j["w.cpu.bogo_ops"]["untrustworthy"], "stress-ng exited 7");
  EXPECT_FALSE(j["w.vm.bogo_ops"].contains("untrustworthy"));
  EXPECT_EQ(j.get<Metrics>(), m);
  j["w.vm.bogo_ops"]["untrustworthy"] = "";
  EXPECT_THROW(j.get<Metrics>(), Error);
}

TEST(Metrics, NonFiniteValuesAreNeverStored) {
  Metrics m;
  EXPECT_FALSE(add_metric_value(m, "x", "us", true, "mean", std::nan("")));
  EXPECT_FALSE(
      add_metric_value(m, "x", "us", true, "mean", std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(m.empty());  // no value, no metric
  Metric bad{"us", true, "mean", {1, std::nan("")}, {}};
  nlohmann::json j;
  EXPECT_THROW(to_json(j, bad), Error);
}

TEST(Metrics, MismatchedRedefinitionIsAnError) {
  Metrics m;
  add_metric_value(m, "x", "us", true, "mean", 1);
  EXPECT_THROW(add_metric_value(m, "x", "ns", true, "mean", 1), Error);
  EXPECT_THROW(add_metric_value(m, "x", "us", false, "mean", 1), Error);
  EXPECT_THROW(add_metric_value(m, "x", "us", true, "max", 1), Error);
  EXPECT_THROW(add_metric_value(m, "y", "us", true, "median", 1), Error);
  Metrics other;
  add_metric_value(other, "x", "us", true, "mean", 3);
  merge_metrics(m, other);
  EXPECT_EQ(m.at("x").values, (std::vector<double>{1, 3}));
}

TEST(Metrics, Reduce) {
  EXPECT_DOUBLE_EQ(reduce_metric({"us", true, "mean", {5.2, 5.9, 6.1}, {}}), 5.733333333333333);
  EXPECT_DOUBLE_EQ(reduce_metric({"us", true, "max", {31, 40, 28}, {}}), 40);
  EXPECT_DOUBLE_EQ(reduce_metric({"us", true, "min", {31, 40, 28}, {}}), 28);
  EXPECT_DOUBLE_EQ(reduce_metric({"count", false, "sum", {1, 2, 3.5}, {}}), 6.5);
  EXPECT_THROW(reduce_metric({"us", true, "mean", {}, {}}), Error);
  EXPECT_THROW(reduce_metric({"us", true, "median", {1}, {}}), Error);
}

TEST(Metrics, FromJsonNamesTheBadField) {
  auto expect_error = [](const char* text, const char* field) {
    try {
      nlohmann::json::parse(text).get<Metric>();
      ADD_FAILURE() << text;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), testing::HasSubstr(field)) << text;
    }
  };
  expect_error(R"({"better":"lower","aggregate":"max","values":[1]})", "\"unit\"");
  expect_error(R"({"unit":"us","better":"less","aggregate":"max","values":[1]})", "\"better\"");
  expect_error(R"({"unit":"us","better":"lower","aggregate":"p50","values":[1]})", "\"aggregate\"");
  expect_error(R"({"unit":"us","better":"lower","aggregate":"max","values":[]})", "\"values\"");
  expect_error(R"({"unit":"us","better":"lower","aggregate":"max","values":[1,"2"]})", "values/1");
  expect_error(R"({"unit":"us","better":"lower","aggregate":"max","values":[1,null]})", "values/1");
  expect_error(R"([1,2])", "expected an object");
  // per-CPU metrics
  const char* base = R"({"unit":"us","better":"lower","aggregate":"max",)";
  expect_error((std::string(base) + R"("cpus":[5],"values":[1,2]})").c_str(), "\"cpus\"");
  expect_error((std::string(base) + R"("cpus":[5,-1],"values":[1,2]})").c_str(), "cpus/1");
  expect_error((std::string(base) + R"("cpus":[5,6],"values":[null,null]})").c_str(), "only null");
  expect_error((std::string(base) + R"("cpus":[5],"values":[1],"counts":[1,2]})").c_str(),
               "\"counts\"");
  expect_error((std::string(base) + R"("cpus":[5],"values":[1],"counts":[-1]})").c_str(),
               "counts/0");
  expect_error((std::string(base) + R"("cpus":[5],"values":[1],"window_s":0})").c_str(),
               "\"window_s\"");
  expect_error((std::string(base) + R"("cpus":[5],"values":[1],"kind":""})").c_str(), "\"kind\"");
}

// The trace-derived metrics (parse/trace.h) carry per-CPU evidence; null marks a CPU without a
// value, and the per-cell reduction sees only the numbers.
TEST(Metrics, PerCpuEvidenceRoundTrips) {
  auto m = make_per_cpu_metric("us", true, "max",
                               MetricPerCpu{{5, 6, 7}, {12.5, std::nullopt, 3.0}, "", {}, {}});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->values, (std::vector<double>{12.5, 3.0}));
  EXPECT_DOUBLE_EQ(reduce_metric(*m), 12.5);
  nlohmann::json j = *m;
  EXPECT_EQ(j.dump(), R"({"aggregate":"max","better":"lower","cpus":[5,6,7],"unit":"us",)"
                      R"("values":[12.5,null,3.0]})");
  EXPECT_EQ(j.get<Metric>(), *m);

  auto r = make_per_cpu_metric("1/s", true, "mean",
                               MetricPerCpu{{5, 6}, {1.5, 0.0}, "count", {3, 0}, 2.0});
  nlohmann::json k = *r;
  EXPECT_EQ(k["kind"], "count");
  EXPECT_EQ(k["counts"], nlohmann::json({3, 0}));
  EXPECT_EQ(k["window_s"], 2.0);
  EXPECT_EQ(k.get<Metric>(), *r);

  // A non-finite slot becomes null; all null: no metric.
  EXPECT_FALSE(make_per_cpu_metric("us", true, "max", MetricPerCpu{{1}, {std::nan("")}, "", {}, {}})
                   .has_value());
  EXPECT_THROW(make_per_cpu_metric("us", true, "max", MetricPerCpu{{1, 2}, {1.0}, "", {}, {}}),
               Error);
  EXPECT_THROW(make_per_cpu_metric("us", true, "max", MetricPerCpu{{1}, {1.0}, "", {}, -1.0}),
               Error);
  // built whole: appending is refused
  Metrics ms{{"noise.longest_us", *m}};
  EXPECT_THROW(add_metric_value(ms, "noise.longest_us", "us", true, "max", 1), Error);
}

}  // namespace
}  // namespace isolab
