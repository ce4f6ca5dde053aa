// vm tier: the main job's verdicts mean something. A deliberately bad kernel
// (patches/planted-regression: vmstat_update queued on every CPU every stat interval) must come
// out of `isolab run` + `isolab compare` as "regressed" on the count of vmstat_update runs on
// the isolated CPUs, with exit status 1, under TCG on this machine.
#include <gtest/gtest.h>

#include "unwrapped.h"
#include "vm/isolab_run.h"

namespace isolab {
namespace {

using namespace vmtest;

TEST(PipelineVerdict, PlantedRegressionIsCaught) {
  auto dir = temp_dir("planted");
  IsolabRun r = run_isolab(load_spec("planted-short.json"), dir);
  ASSERT_EQ(r.proc.exit_code, 0) << read_file(dir / "isolab.stderr", 20000);
  ASSERT_FALSE(r.result.is_null());
  std::size_t ok = 0;
  for (const auto& c : r.result["cells"]) ok += c.value("status", "") == "ok";
  ASSERT_EQ(ok, 8u) << r.result["cells"].dump(1).substr(0, 4000);

  // The vanilla kernel really runs the code the planted patch changes: vmstat_update shows up
  // in the planted kernel's traces on the isolated CPUs, and the counts are per CPU.
  const nlohmann::json* planted_cell = nullptr;
  for (const auto& c : r.result["cells"])
    if (c.value("variant", "") == "planted") planted_cell = &c;
  ASSERT_NE(planted_cell, nullptr);
  const auto& m = (*planted_cell)["metrics"]["vmstat-idle.noise.vmstat_update_per_s"];
  ASSERT_TRUE(m.is_object()) << (*planted_cell)["metrics"].dump(1).substr(0, 3000);
  EXPECT_EQ(m["cpus"], nlohmann::json::array({2, 3}));
  EXPECT_GT(m["counts"][1].get<long>(), 0) << m.dump();

  ProcessResult cmp = run_isolab_command({"compare", r.run_dir.string()});
  EXPECT_EQ(cmp.exit_code, 1) << cmp.out << cmp.err;
  // The answer comes first and names the planted metric as regressed (its line word-wrapped).
  EXPECT_LT(cmp.out.find("\nverdict: regressed (exit status 1)\n"), cmp.out.find("\nmethod: "))
      << cmp.out;
  const std::string out = unwrapped(cmp.out);
  std::size_t line = out.find("vmstat_update on CPUs 2-3");
  ASSERT_NE(line, std::string::npos) << cmp.out;
  std::string first = out.substr(line, out.find('\n', line) - line);
  EXPECT_NE(first.find("regressed"), std::string::npos) << first;
}

}  // namespace
}  // namespace isolab
