// The differential kernel profile of two variants from the cells' instruction-count profiles.
#include <gtest/gtest.h>

#include <gmock/gmock.h>

#include "compare/compare.h"
#include "compare/profile_diff.h"
#include "compare/report.h"

namespace isolab {
namespace {

using nlohmann::json;

json cell(const std::string& variant, double refresh, double slob, const char* status = "ok") {
  return {
      {"variant", variant},
      {"status", status},
      {"warmup", false},
      {"insn_counts",
       {{"profile",
         {{"vmstat-syscall",
           {{"5", json::array({{{"function", "slob_alloc"}, {"insns", slob}},
                               {{"function", "refresh_cpu_vm_stats"}, {"insns", refresh}}})}}}}}}}};
}

json run() {
  json r = {{"cells", json::array()}};
  r["cells"].push_back(cell("vanilla", 0, 1000));
  r["cells"].push_back(cell("vanilla", 0, 1200));
  r["cells"].push_back(cell("patched", 9000, 1100));
  r["cells"].push_back(cell("patched", 9400, 1100));
  r["cells"].push_back(cell("patched", 1e9, 1e9, "failed"));  // does not contribute
  return r;
}

TEST(ProfileDiff, LargestChangesFirstAsMeansPerBoot) {
  const json r = run();
  const auto ch = profile_changes(r, "vanilla", r, "patched", 10);
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_EQ(ch[0].function, "refresh_cpu_vm_stats");
  EXPECT_EQ(ch[0].step, "vmstat-syscall");
  EXPECT_EQ(ch[0].cpu, 5u);
  EXPECT_DOUBLE_EQ(ch[0].a, 0);
  EXPECT_DOUBLE_EQ(ch[0].b, 9200);
  EXPECT_EQ(ch[0].cells_b, 2u);
  EXPECT_DOUBLE_EQ(ch[1].diff(), 0);
  EXPECT_EQ(profile_change_lines({ch[0]}).at(0),
            "vmstat-syscall CPU 5: refresh_cpu_vm_stats 0 -> 9.2e+03 (+9.2e+03) kernel "
            "instructions per boot");
}

TEST(ProfileDiff, NoProfileOnOneSideGivesNothingAndBadRowsAreSkipped) {
  json r = run();
  EXPECT_TRUE(profile_changes(r, "vanilla", r, "nosuch").empty());
  r["cells"][0]["insn_counts"]["profile"]["vmstat-syscall"]["x"] = json::array();
  r["cells"][1]["insn_counts"]["profile"]["vmstat-syscall"]["5"].push_back({{"function", 3}});
  EXPECT_EQ(profile_changes(r, "vanilla", r, "patched", 1).size(), 1u);
}

// compare prints the changes in its text, Markdown and JSON output.
TEST(ProfileDiff, CompareReportsTheLargestChanges) {
  json r = run();
  r["schema_version"] = 1;
  r["run_id"] = "p";
  r["variant_order"] = {"vanilla", "patched"};
  r["variants"] = {{"vanilla", json::object()}, {"patched", json::object()}};
  for (std::size_t i = 0; i < r["cells"].size(); ++i) {
    r["cells"][i]["id"] = "c" + std::to_string(i);
    r["cells"][i]["metrics"] = json::object();
  }
  const Comparison c = compare_run_variants(r, CompareSettings{});
  ASSERT_EQ(c.profile_changes.size(), 2u);
  EXPECT_THAT(render_text(c), ::testing::HasSubstr("  vmstat-syscall CPU 5: refresh_cpu_vm_stats "
                                                   "0 -> 9.2e+03 (+9.2e+03)"));
  EXPECT_THAT(render_markdown(c), ::testing::HasSubstr("- vmstat-syscall CPU 5: refresh_cpu"));
  EXPECT_EQ(render_json(c)["profile_changes"][0]["b"], 9200);
}

}  // namespace
}  // namespace isolab
