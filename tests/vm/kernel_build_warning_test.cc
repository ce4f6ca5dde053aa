// vm tier: build warnings as results (as the kernel test robot reported one for the madvise
// change of docs/examples/madvise-latency.md). The vm tier's vanilla kernel against
// tests/data/kernel/planted-warning (an unused variable in mm/vmstat.c, no Signed-off-by),
// planted-includecheck (mm/madvise.c includes linux/swap.h twice) and planted-w1 (a function
// without a prototype in mm/vmstat.c, which only W=1 and sparse see), built for real (only the
// two files are recompiled after the cached vanilla build): result.json keeps each variant's
// compiler warnings and the robot's checkpatch, includecheck, W=1 and sparse findings, and
// `isolab compare` lists the five B adds and counts them against B.
#include <gtest/gtest.h>

#include <algorithm>

#include "vm/isolab_run.h"

namespace isolab {
namespace {

using namespace vmtest;
using nlohmann::json;

TEST(KernelBuildWarning, PlantedWarningIsListedAndCountsAgainstB) {
  auto dir = temp_dir("build-warning");
  IsolabRun r = run_isolab(load_spec("build-warning.json"), dir);
  ASSERT_EQ(r.proc.exit_code, 0) << read_file(dir / "isolab.stderr", 20000);
  const json& variants = r.result["variants"];
  ASSERT_TRUE(variants["warning"]["build_warnings"].is_array()) << variants.dump(1);
  json planted;
  for (const auto& w : variants["warning"]["build_warnings"])
    if (w["file"] == "mm/vmstat.c" && w["class"] == "-Wunused-variable") planted = w;
  ASSERT_FALSE(planted.is_null()) << variants["warning"]["build_warnings"].dump(1);
  EXPECT_EQ(planted["message"], "unused variable 'planted_unused'");
  EXPECT_EQ(planted["line"], 2011);  // the patch adds it at line 2011
  EXPECT_GT(planted["column"].get<int>(), 0);
  EXPECT_EQ(variants["warning"]["touched_files"], json::array({"mm/madvise.c", "mm/vmstat.c"}));
  // The includecheck finding as the seed's robot reported it, and checkpatch's on the patch
  // without a sign-off; the vanilla kernel has neither.
  EXPECT_TRUE(std::any_of(
      variants["warning"]["build_warnings"].begin(), variants["warning"]["build_warnings"].end(),
      [](const json& w) {
        return w == json{{"file", "mm/madvise.c"},
                         {"line", 0},
                         {"column", 0},
                         {"class", "includecheck"},
                         {"message", "linux/swap.h is included more than once"}};
      }))
      << variants["warning"]["build_warnings"].dump(1);
  for (const auto& w : variants["vanilla"]["build_warnings"])
    EXPECT_NE(w["class"], "-Wunused-variable") << w.dump();

  ProcessResult cmp = run_isolab_command({"compare", r.run_dir.string()});
  EXPECT_EQ(cmp.exit_code, 1) << cmp.out << cmp.err;
  EXPECT_NE(cmp.out.find("build warnings B adds over A (matched by file, class and message): 5"),
            std::string::npos)
      << cmp.out;
  EXPECT_NE(cmp.out.find("mm/vmstat.c:2011:"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("mm/madvise.c: warning: linux/swap.h is included more than once "
                         "[includecheck]  [new in a file the series touches: counts against B]"),
            std::string::npos)
      << cmp.out;
  EXPECT_NE(cmp.out.find("ERROR: Missing Signed-off-by: line(s) [checkpatch:MISSING_SIGN_OFF]"),
            std::string::npos)
      << cmp.out;
  // What only W=1 and sparse see, and neither the base nor the regular build had.
  EXPECT_NE(cmp.out.find("mm/vmstat.c:2090:5: warning: no previous prototype for "
                         "'planted_no_prototype' [-Wmissing-prototypes]  [new in a file"),
            std::string::npos)
      << cmp.out;
  EXPECT_NE(cmp.out.find("mm/vmstat.c:2090:5: warning: symbol 'planted_no_prototype' was not "
                         "declared. Should it be static? [sparse]  [new in a file"),
            std::string::npos)
      << cmp.out;
  EXPECT_NE(cmp.out.find("5 new build warning(s) of B in files it touches"), std::string::npos)
      << cmp.out;

  ProcessResult js = run_isolab_command({"compare", r.run_dir.string(), "--format", "json"});
  json j = json::parse(js.out);
  ASSERT_EQ(j["new_build_warnings"].size(), 5u) << js.out;
  for (const auto& w : j["new_build_warnings"]) EXPECT_EQ(w["in_touched_file"], true) << w.dump();
  EXPECT_EQ(j["summary"]["new_warnings_in_touched_files"], 5);
}

}  // namespace
}  // namespace isolab
