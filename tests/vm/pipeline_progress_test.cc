// vm tier: `isolab run --progress=json` during a real kernel rebuild and real cells. The variant
// carries a patch that only adds a comment with a fresh nonce to mm/vmstat.c, so every run of
// this test is a cache miss that rebuilds a few objects in the default build slot (about 11 s
// on an idle 2-core host; 60 Kbuild steps), then boots two short cells.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "vm/isolab_run.h"

using namespace isolab;
using nlohmann::json;

namespace {

// A comment line at the top of mm/vmstat.c (6.1's first three lines as context).
std::string nonce_patch(const std::string& nonce) {
  return "--- a/mm/vmstat.c\n"
         "+++ b/mm/vmstat.c\n"
         "@@ -1,3 +1,4 @@\n"
         " // SPDX-License-Identifier: GPL-2.0-only\n"
         "+/* isolab progress test " +
         nonce +
         " */\n"
         " /*\n"
         "  *  linux/mm/vmstat.c\n";
}

std::vector<json> json_lines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    auto j = json::parse(l, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << l;
    if (!j.is_discarded()) out.push_back(j);
  }
  return out;
}

}  // namespace

TEST(PipelineProgress, JsonLinesDuringRealRebuildAndCells) {
  const auto dir = vmtest::temp_dir("progress");
  std::random_device rd;
  const std::string nonce = std::to_string(rd()) + std::to_string(rd());
  write_file_atomic(dir / "nonce.patch", nonce_patch(nonce));
  json spec = vmtest::load_spec("e2e-short.json");
  spec["name"] = "progress";
  spec["variants"] =
      json::array({{{"name", "nonce"}, {"patches", {(dir / "nonce.patch").string()}}}});
  spec["workloads"] = json::array({{{"name", "vmstat-idle"},
                                    {"tool", "vmstat-overhead"},
                                    {"mode", "idle"},
                                    {"iterations", 50}}});
  spec["repetitions"] = 2;
  auto r = vmtest::run_isolab(spec, dir, {}, {"--progress=json", "--no-trace"});
  const std::string err = read_file(dir / "isolab.stderr");
  ASSERT_TRUE(r.proc.ok()) << r.proc.describe() << "\n" << err;

  std::vector<json> build, cells;
  for (const json& j : json_lines(err)) {
    ASSERT_TRUE(j.contains("event"));
    if (j["event"] != "progress") continue;
    if (j["task"] == "build nonce") build.push_back(j);
    if (j["task"] == "cells") cells.push_back(j);
  }
  // The rebuild: a total from the last build in the slot, percentages, at most 8.5 s and at
  // least 8 s between lines (throttled to 8 s, base/progress.h; polled every 200 ms), and a
  // last line at 100% with the steps make really took (kernel/kernel.cc make_image).
  ASSERT_GE(build.size(), 1u) << err;
  for (const json& j : build) {
    EXPECT_TRUE(j.contains("total")) << j.dump();
    EXPECT_TRUE(j.contains("percent")) << j.dump();
  }
  const json& last = build.back();
  EXPECT_EQ(last["done"], last["total"]) << last.dump();
  if (last["total"].get<double>() > 0) {
    EXPECT_EQ(last["percent"], 100.0) << last.dump();
  }
  for (std::size_t i = 1; i + 1 < build.size(); ++i) {
    const double gap =
        build[i]["elapsed_s"].get<double>() - build[i - 1]["elapsed_s"].get<double>();
    EXPECT_GE(gap, 7.95) << build[i].dump();
    EXPECT_LE(gap, 8.5) << build[i].dump();
  }
  if (build.size() >= 2) {
    const double gap =
        last["elapsed_s"].get<double>() - build[build.size() - 2]["elapsed_s"].get<double>();
    EXPECT_LE(gap, 8.5) << last.dump();
  }
  // Cells: 0/2, 1/2 with an ETA, 2/2.
  ASSERT_EQ(cells.size(), 3u) << err;
  EXPECT_EQ(cells[0]["done"], 0);
  EXPECT_EQ(cells[1]["done"], 1);
  EXPECT_EQ(cells[1]["total"], 2);
  ASSERT_TRUE(cells[1].contains("eta_s")) << cells[1].dump();
  EXPECT_GT(cells[1]["eta_s"].get<double>(), 0);
  EXPECT_EQ(cells[2]["done"], 2);
  std::cerr << "build lines: " << build.size() << ", cells ETA after 1/2: " << cells[1]["eta_s"]
            << " s, second cell took "
            << cells[2]["elapsed_s"].get<double>() - cells[1]["elapsed_s"].get<double>() << " s\n";
  std::filesystem::remove_all(dir);
}
