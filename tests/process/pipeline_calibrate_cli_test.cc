// isolab calibrate and the calibration's comparison key through the command line, and the
// boot order seed of a dry run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "vm/isolab_run.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using vmtest::run_isolab_command;

const std::string kRun = std::string(ISOLAB_TEST_DATA_DIR) + "/runs/planted-regression-kqin12";

TEST(CalibrateCli, CapturedRunAndItsKey) {
  const fs::path dir = vmtest::temp_dir("calibrate-cli");
  ProcessResult cal =
      run_isolab_command({"calibrate", kRun, "--output", (dir / "cal.json").string()});
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  EXPECT_THAT(cal.out, HasSubstr("drifting metrics (Holm over each run's testable metrics, "
                                 "alpha 0.05): none (of 38 testable)"));
  // The captured run's spec declares no primary metric: its own comparison rests on failures
  // counted against B only, and its one RCU stall under TCG is not one (compare/compare.h).
  EXPECT_THAT(cal.out, HasSubstr("own comparison (vanilla vs planted): exit 0"));
  const json j = json::parse(read_file(dir / "cal.json"));
  EXPECT_EQ(j["comparison_key"]["accelerator"], "tcg");

  // The calibration applies to its own run, not to one with another isolab build.
  ProcessResult same =
      run_isolab_command({"compare", kRun, "--noise-floor", (dir / "cal.json").string(), "--format",
                          "json", "--primary", "vmstat-idle.noise.vmstat_update_per_s@6:higher"});
  EXPECT_EQ(same.exit_code, 1) << same.err;  // the planted regression, declared primary
  json other = json::parse(read_file(kRun + "/result.json"));
  other["comparison_key"]["isolab_revision"] = "0123456789abcdef0123456789abcdef01234567";
  write_file_atomic(dir / "other" / "result.json", other.dump());
  ProcessResult refused = run_isolab_command(
      {"compare", (dir / "other").string(), "--noise-floor", (dir / "cal.json").string()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("isolab_revision: calibration=(absent), run=\"0123"));
  fs::remove_all(dir);
}

TEST(CalibrateCli, DryRunShowsTheSeededOrder) {
  const fs::path dir = vmtest::temp_dir("boot-order-cli");
  json spec = vmtest::load_spec("multihost-short.json");
  spec["repetitions"] = 4;
  write_file_atomic(dir / "spec.json", spec.dump(2));
  ProcessResult dry = run_isolab_command(
      {"run", (dir / "spec.json").string(), "--dry-run", "--json", "--boot-order-seed", "7"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  const json plan = json::parse(dry.out);
  EXPECT_EQ(plan["boot_order"]["seed"], 7);
  ASSERT_EQ(plan["cells"].size(), 8u);
  // Seed 7 with two variants: the spec's order in block r0, the other in block r1.
  EXPECT_EQ(plan["cells"][0]["variant"], plan["cells"][3]["variant"]);
  EXPECT_NE(plan["cells"][0]["variant"], plan["cells"][1]["variant"]);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace isolab
