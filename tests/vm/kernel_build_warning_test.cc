// vm tier: build warnings as results (as the kernel test robot reported one for the madvise
// change of docs/examples/madvise-latency.md). The vm tier's vanilla kernel
// against tests/data/kernel/planted-warning, an unused variable in mm/vmstat.c built for real
// (only vmstat.c is recompiled after the cached vanilla build): result.json keeps each variant's
// warnings, and `isolab compare` lists the one B adds and counts it against B.
#include <gtest/gtest.h>

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
  EXPECT_EQ(variants["warning"]["touched_files"], json::array({"mm/vmstat.c"}));
  for (const auto& w : variants["vanilla"]["build_warnings"])
    EXPECT_NE(w["class"], "-Wunused-variable") << w.dump();

  ProcessResult cmp = run_isolab_command({"compare", r.run_dir.string()});
  EXPECT_EQ(cmp.exit_code, 1) << cmp.out << cmp.err;
  EXPECT_NE(cmp.out.find("build warnings B adds over A (matched by file, class and message): 1"),
            std::string::npos)
      << cmp.out;
  EXPECT_NE(cmp.out.find("mm/vmstat.c:2011:"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("counts against B"), std::string::npos) << cmp.out;
  EXPECT_NE(cmp.out.find("1 new build warning(s) of B in files it touches"), std::string::npos)
      << cmp.out;

  ProcessResult js = run_isolab_command({"compare", r.run_dir.string(), "--format", "json"});
  json j = json::parse(js.out);
  ASSERT_EQ(j["new_build_warnings"].size(), 1u) << js.out;
  EXPECT_EQ(j["new_build_warnings"][0]["in_touched_file"], true);
  EXPECT_EQ(j["summary"]["new_warnings_in_touched_files"], 1);
}

}  // namespace
}  // namespace isolab
