// results/variant_facts.h: a variant's build warnings and touched files (a bad warning named by
// its JSON pointer), the kernel it boots, and its patches as the report lists them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "results/variant_facts.h"

namespace isolab {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;

results::VariantRecord variant(const json& fields) {
  return results::variant_from_json(fields, "/variants/b");
}

json warning(const std::string& file, int line) {
  return {{"file", file}, {"line", line}, {"column", 3}, {"class", "-Wunused"}, {"message", "m"}};
}

TEST(ResultsVariantFacts, BuildWarningsAndTouchedFiles) {
  const results::BuildFacts f = results::build_facts(
      variant({{"build_warnings", json::array({warning("mm/vmstat.c", 12)})},
               {"touched_files", json::array({"mm/vmstat.c", 3, "mm/page_alloc.c"})}}),
      "/variants/b");
  ASSERT_TRUE(f.warnings);
  ASSERT_EQ(f.warnings->size(), 1u);
  EXPECT_EQ((*f.warnings)[0].file, "mm/vmstat.c");
  EXPECT_EQ((*f.warnings)[0].line, 12);
  EXPECT_EQ((*f.warnings)[0].klass, "-Wunused");
  EXPECT_THAT(f.touched_files, ElementsAre("mm/page_alloc.c", "mm/vmstat.c"));
  EXPECT_FALSE(results::build_facts(variant({{"build_warnings", nullptr}}), "/v").warnings);
  EXPECT_FALSE(results::build_facts(variant(json::object()), "/v").warnings);
}

TEST(ResultsVariantFacts, ABadWarningIsNamedByItsPointer) {
  try {
    results::build_facts(
        variant({{"build_warnings", json::array({warning("a.c", 1), {{"file", "x"}}})}}),
        "/variants/b");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.pointer(), "/variants/b/build_warnings/1");
  }
}

TEST(ResultsVariantFacts, TheKernelABaselineVariantBoots) {
  EXPECT_EQ(results::booted_build_key(variant({{"build_key", "k1"}})), "k1");
  EXPECT_EQ(results::booted_build_key(
                variant({{"build_key", "k1"}, {"baseline_of", {{"build_key", "k0"}}}})),
            "k0");
  EXPECT_EQ(results::booted_build_key(variant({{"build_key", "k1"}, {"baseline_of", "k0"}})), "k1");
  EXPECT_EQ(results::booted_build_key(variant(json::object())), "");
  EXPECT_THROW(results::booted_build_key(variant({{"baseline_of", {{"build_key", 5}}}})),
               json::type_error);
}

TEST(ResultsVariantFacts, PatchesOfTheCapturedRun) {
  const results::RunResult run = results::result_from_json(json::parse(read_file(
      std::filesystem::path(ISOLAB_TEST_DATA_DIR) / "runs/planted-regression-kqin12/result.json")));
  const auto patches = results::patches_shown(*run.variant("planted"));
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_NE(patches[0].path.find("0001-mm-vmstat-PLANTED-REGRESSION"), std::string::npos);
  EXPECT_EQ(patches[0].sha256.substr(0, 16), "08caeb5a679e9559");
  EXPECT_TRUE(results::patches_shown(*run.variant("vanilla")).empty());
  const auto odd = results::patches_shown(
      variant({{"patches", json::array({{{"subject", 5}, {"path", true}}, "junk"})}}));
  ASSERT_EQ(odd.size(), 2u);
  EXPECT_EQ(odd[0].subject, "5");
  EXPECT_EQ(odd[0].path, "true");
  EXPECT_EQ(odd[0].sha256, "");
  EXPECT_EQ(odd[1].path, "");
}

}  // namespace
}  // namespace isolab
