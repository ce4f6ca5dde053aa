// `isolab import --tool oslat` (pipeline/import.h) on the captures of tests/data/oslat/: per-CPU
// metrics and histograms in result.json as compare reads them, and refusals naming the file
// and line (docs/sources.md [os1]-[os4]).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "base/files.h"
#include "compare/compare.h"
#include "pipeline/import.h"

using namespace isolab;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

fs::path data(const std::string& name) { return fs::path(ISOLAB_TEST_DATA_DIR) / "oslat" / name; }

json import_oslat(std::vector<fs::path> files, const std::string& workload = "") {
  ImportOptions o;
  o.tool = "oslat";
  o.label = "customer";
  o.workload = workload;
  o.files = std::move(files);
  return import_result(o, ISOLAB_SOURCE_DIR);
}

std::string import_error(const std::vector<fs::path>& files) {
  try {
    import_oslat(files);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// [os1]: the container log's table, one value per CPU, with the CPUs beside them.
TEST(ImportOslat, Os1PerCpuMetrics) {
  const json r = import_oslat({data("os1-v1.10-container-log.txt")});
  const json& cell = r["cells"][0];
  EXPECT_EQ(cell["status"], "ok");
  const json& max = cell["metrics"]["oslat.oslat_max_us"];
  EXPECT_EQ(max["unit"], "us");
  EXPECT_EQ(max["better"], "lower");
  EXPECT_EQ(max["aggregate"], "max");
  EXPECT_EQ(max["cpus"], json::array({5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(max["values"], json::array({14, 17, 9, 17, 12, 17, 8}));
  EXPECT_EQ(cell["metrics"]["oslat.oslat_min_us"]["values"], json::array({1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(cell["metrics"]["oslat.oslat_avg_us"]["aggregate"], "mean");
  EXPECT_EQ(cell["tool_versions"]["oslat"]["oslat"], "1.10");
  // One histogram per CPU, lower bounds in us; "017 (us)" of CPU 6 is [16, 17).
  const json& h6 = cell["histograms"]["oslat[cpu6]"];
  EXPECT_EQ(h6["unit"], "us");
  EXPECT_EQ(h6["bucket_ns"], 1000);
  EXPECT_EQ(h6["counts"]["16"], 140);
  EXPECT_EQ(h6["counts"]["0"], 426240622);
  EXPECT_EQ(h6["overflows"], 0);
  EXPECT_EQ(cell["histograms"].size(), 7u);
}

// Two files are two boots: compare merges each CPU's histogram over them, and a tail comes out.
TEST(ImportOslat, HistogramsMergePerCpuAcrossBoots) {
  const json r = import_oslat({data("host-2.40-cpu1-d3.json"), data("host-2.40-cpu1-memmove.json")},
                              "latency");
  ASSERT_EQ(r["cells"].size(), 2u);
  EXPECT_EQ(r["cells"][1]["metrics"]["latency.oslat_max_us"]["values"], json::array({28077}));
  EXPECT_EQ(r["cells"][0]["histograms"]["latency[cpu1]"]["overflows"], 494);
  EXPECT_EQ(r["cells"][0]["histograms"]["latency[cpu1]"]["counts"].count("31"), 0u);
  VariantData v = extract_variant(r, "customer");
  const Histogram& h = v.histograms.at("latency[cpu1]");
  EXPECT_EQ(h.overflows, 494u + 198u);
  EXPECT_EQ(h.counts.at(0), 121996230u + 3417223u);
  EXPECT_EQ(h.total(), 121999687u + 3417784u);
  const HistogramTail tail = histogram_tail(h);
  EXPECT_EQ(tail.p99, 0);              // nearly every gap is under 1 us
  EXPECT_FALSE(tail.max.has_value());  // beyond the last bucket
  EXPECT_EQ(v.metrics.at("latency.oslat_max_us").values.size(), 2u);
}

// --bucket-width 250: ns buckets, us metrics, avg left out with the reason in the notes.
TEST(ImportOslat, SubMicrosecondWidth) {
  const json r = import_oslat({data("host-2.10src-cpu1-w250.json")});
  const json& cell = r["cells"][0];
  EXPECT_EQ(cell["metrics"]["oslat.oslat_min_us"]["values"], json::array({0.02}));
  EXPECT_EQ(cell["metrics"]["oslat.oslat_max_us"]["values"], json::array({28112.857}));
  EXPECT_FALSE(cell["metrics"].contains("oslat.oslat_avg_us"));
  const json& h = cell["histograms"]["oslat[cpu1]"];
  EXPECT_EQ(h["unit"], "ns");
  EXPECT_EQ(h["bucket_ns"], 250);
  EXPECT_EQ(h["counts"]["0"], 24468459);
  EXPECT_EQ(h["overflows"], 229);
  EXPECT_THAT(cell["notes"]["oslat"].dump(), HasSubstr("avg left out"));
  EXPECT_THAT(cell["notes"]["oslat"].dump(), HasSubstr("2.1 and 2.10 print the same"));
}

// [os3]: a quote in argv breaks the JSON; the file is read, the repair noted.
TEST(ImportOslat, UnescapedCmdlineIsRead) {
  const json r = import_oslat({data("host-2.40-quiet-quote-arg.json")});
  EXPECT_EQ(r["cells"][0]["metrics"]["oslat.oslat_max_us"]["values"], json::array({22032}));
  EXPECT_THAT(r["cells"][0]["notes"]["oslat"].dump(), HasSubstr("re-escaped"));
}

// A thread without samples is a null slot; a file where no thread has one is invalid.
TEST(ImportOslat, ThreadsWithoutSamples) {
  const json r = import_oslat({data("constructed-2.40-thread1-nan.json")});
  const json& max = r["cells"][0]["metrics"]["oslat.oslat_max_us"];
  EXPECT_EQ(max["cpus"], json::array({0, 1}));
  EXPECT_EQ(max["values"], json::array({54559, nullptr}));
  EXPECT_EQ(r["cells"][0]["status"], "ok");
  EXPECT_FALSE(r["cells"][0]["histograms"].contains("oslat[cpu1]"));

  std::string text = read_file(data("constructed-2.40-thread1-nan.json"));
  const std::string t0 =
      text.substr(text.find("    \"0\": {"), text.find("    \"1\": {") - text.find("    \"0\": {"));
  std::string empty_t0 = R"(    "0": {
      "cpu": 0,
      "freq": 2597,
      "min": 18446744073709551615,
      "avg": -nan,
      "max": 0,
      "duration": 0.000,
      "histogram": {      }
    },
)";
  text.replace(text.find(t0), t0.size(), empty_t0);
  const fs::path f = fs::temp_directory_path() / ("oslat-empty-" + std::to_string(::getpid()));
  std::ofstream(f) << text;
  const json none = import_oslat({f});
  fs::remove(f);
  EXPECT_EQ(none["cells"][0]["status"], "invalid");
  EXPECT_EQ(none["cells"][0]["reason"], "oslat: no thread has samples");
}

TEST(ImportOslat, RunCutShortNamesFileAndLine) {
  const std::string e = import_error({data("host-2.40-cut-after-completed.txt")});
  EXPECT_THAT(e, HasSubstr("host-2.40-cut-after-completed.txt: oslat text: line 12: "
                           "\"Test completed.\" but no summary table follows"));
}

// [os2]: the format before rt-tests: max only, the missing rows said, not made up.
TEST(ImportOslat, Os2MaxOnly) {
  const json r = import_oslat({data("os2-v0.1.0-readme.txt")});
  const json& m = r["cells"][0]["metrics"];
  EXPECT_EQ(m["oslat.oslat_max_us"]["values"], json::array({6, 6, 6, 5, 5, 5, 6, 6}));
  EXPECT_FALSE(m.contains("oslat.oslat_min_us"));
  EXPECT_FALSE(m.contains("oslat.oslat_avg_us"));
  EXPECT_THAT(r["cells"][0]["notes"]["oslat"].dump(), HasSubstr("no Minimum or Average row"));
  EXPECT_EQ(r["cells"][0]["tool_versions"]["oslat"]["oslat"], "v0.1.0");
}

TEST(ImportOslat, ListedAmongTheFormats) {
  EXPECT_THAT(import_formats_text(), HasSubstr("  oslat         oslat --json file, or its text"));
}
