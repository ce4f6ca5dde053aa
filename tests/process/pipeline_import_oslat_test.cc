// process tier: the built `isolab import --tool oslat` on the real captures of tests/data/oslat/,
// then `isolab compare` of two imports (per-CPU metric rows and the merged per-CPU histogram's
// tail); a run cut short exits 2 naming the file and line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "cli_scratch.h"
#include "sys/process.h"

using namespace isolab;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& name) {
  return (fs::path(ISOLAB_TEST_DATA_DIR) / "oslat" / name).string();
}

class ImportOslatCli : public CliScratchTest {
 protected:
  ImportOslatCli() : CliScratchTest("import-oslat") {}

  ProcessResult import(const std::string& label, std::vector<std::string> files) {
    std::vector<std::string> args = {
        "import", "--tool", "oslat", "--label", label, "-o", (dir_ / label).string()};
    args.insert(args.end(), files.begin(), files.end());
    return isolab(args);
  }
};

}  // namespace

TEST_F(ImportOslatCli, TwoImportsCompareWithPerCpuRowsAndTails) {
  ProcessResult help = isolab({"import", "--help"});
  EXPECT_TRUE(help.ok()) << help.err;
  EXPECT_THAT(help.out, HasSubstr("oslat --json file, or its text summary"));

  ProcessResult a = import("idle", {data("host-2.40-cpu1-d3.json"), data("host-2.40-cpu1-d3.txt")});
  ASSERT_TRUE(a.ok()) << a.err;
  ProcessResult b =
      import("memmove", {data("host-2.40-cpu1-memmove.json"), data("host-2.40-cpu1-memmove.txt")});
  ASSERT_TRUE(b.ok()) << b.err;
  const auto result = nlohmann::json::parse(read_file(dir_ / "memmove" / "result.json"));
  EXPECT_EQ(result["cells"][1]["metrics"]["oslat.oslat_max_us"]["values"],
            nlohmann::json::array({28077}));
  EXPECT_EQ(result["cells"][1]["metrics"]["oslat.oslat_max_us"]["cpus"],
            nlohmann::json::array({1}));
  EXPECT_EQ(result["cells"][0]["histograms"]["oslat[cpu1]"]["overflows"], 198);
  EXPECT_TRUE(fs::exists(dir_ / "memmove" / "cells/memmove-r1/host-2.40-cpu1-memmove.txt"));

  ProcessResult cmp = isolab(
      {"compare", (dir_ / "idle").string(), (dir_ / "memmove").string(), "--format", "json"});
  EXPECT_EQ(cmp.exit_code, 0) << cmp.err;
  const auto c = nlohmann::json::parse(cmp.out);
  EXPECT_THAT(cmp.out, HasSubstr("oslat.oslat_max_us"));
  bool tail = false;
  for (const auto& t : c["tails"])
    if (t["histogram"] == "oslat[cpu1]") {
      tail = true;
      EXPECT_EQ(t["a"]["overflows"], 2 * 494);
      EXPECT_EQ(t["b"]["overflows"], 2 * 198);
      EXPECT_EQ(t["a"]["samples"], 2 * 121999687LL);
      // p99.999 by nearest rank over the merged counts (the 988 overflows lie above it): 16 us,
      // as the counts of the two imports give it by hand; B's rank lies among its overflows.
      EXPECT_EQ(t["a"]["p99_999"], 16);
      EXPECT_TRUE(t["b"]["p99_999"].is_null()) << t.dump();
    }
  EXPECT_TRUE(tail) << cmp.out;
}

TEST_F(ImportOslatCli, RunCutShortExits2NamingFileAndLine) {
  ProcessResult r = import("cut", {data("host-2.40-cut-after-completed.txt")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("host-2.40-cut-after-completed.txt: oslat text: line 12"));
  EXPECT_THAT(r.err, HasSubstr("cut short"));
  EXPECT_FALSE(fs::exists(dir_ / "cut" / "result.json"));
}
