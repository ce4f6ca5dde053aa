#include <gtest/gtest.h>

#include <fstream>

#include "base/files.h"
#include "compare/compare.h"
#include "report/render.h"

namespace isolab {
namespace {

// The isolation gate table in compare's output: per check, cells passing / cells checked.
TEST(CompareGate, SummaryPerCheckAndVariant) {
  nlohmann::json run = nlohmann::json::parse(
      read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/compare/s2-one-run.json"));
  run["cells"][0]["gate"]["rows"] = {
      {{"check", "nohz_full"}, {"expected", "1"}, {"effective", "1"}, {"pass", true}},
      {{"check", "tick stopped"}, {"expected", "<= 10/s"}, {"effective", "0.3/s"}, {"pass", true}}};
  run["cells"][1]["gate"]["rows"] = {
      {{"check", "nohz_full"}, {"expected", "1"}, {"effective", ""}, {"pass", false}}};
  Comparison c = compare_run_variants(run, CompareSettings{});
  ASSERT_EQ(c.gate.size(), 2u);
  EXPECT_EQ(c.gate[0].check, "nohz_full");
  EXPECT_EQ(c.gate[0].a_pass, 1u);
  EXPECT_EQ(c.gate[0].b_pass, 0u);
  EXPECT_EQ(c.gate[0].b_total, 1u);
  EXPECT_EQ(c.gate[1].b_total, 0u);
  std::string text = render_text(c);
  EXPECT_NE(text.find("isolation gate"), std::string::npos) << text;
  EXPECT_NE(text.find("1/1 PASS"), std::string::npos) << text;
  EXPECT_NE(text.find("0/1 FAIL"), std::string::npos) << text;
  EXPECT_NE(render_markdown(c).find("| nohz_full | 1/1 PASS | 0/1 FAIL |"), std::string::npos);
  EXPECT_EQ(render_json(c)["gate"][0]["b_total"], 1);
}

// A check longer than the column (a customer's sysctl row) widens it for every row.
TEST(CompareGate, ALongCheckWidensTheColumn) {
  nlohmann::json run = nlohmann::json::parse(
      read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/compare/s2-one-run.json"));
  const std::string check = "sysctl kernel.hung_task_timeout_secs";
  for (auto& cell : run["cells"])
    cell["gate"]["rows"] = {
        {{"check", check}, {"expected", "600"}, {"effective", "600"}, {"pass", true}},
        {{"check", "nohz_full"}, {"expected", "1"}, {"effective", "1"}, {"pass", true}}};
  const std::string text = render_text(compare_run_variants(run, CompareSettings{}));
  const std::string pad(2, ' ');
  EXPECT_NE(text.find("  " + check + pad + "1/1 PASS  1/1 PASS"), std::string::npos) << text;
  EXPECT_NE(text.find("  nohz_full" + std::string(check.size() + 2 - 9, ' ') + "1/1 PASS"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace isolab
