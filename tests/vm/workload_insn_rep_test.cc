// vm tier: instruction counts that leave out rep-string executions catch what the page clear
// hides. tests/data/specs/planted-fault-short.json boots the default's vanilla 6.1 kernel and
// the same kernel with tests/data/kernel/planted-fault-path (50 NOPs in do_anonymous_page), 5
// boots each under TCG (forced: the plugin exists only there), page-fault-bench on CPU 3. Each
// fault also clears its page: 4097 rep-string executions with the TCG CPU model's ERMS. The
// plugin's count per fault moves by 50 of about 6200 (under compare's 1% instruction threshold:
// no significant change), the count without rep-string executions by 50 of about 2000
// (regressed). Both are the spec's primary metrics.
//
// A boot's count can sit in another regime: the VMA lookup's maple-tree walk follows where
// address-space randomization put the mappings, and the page allocator's per-CPU lists follow
// the boot's history (one boot in ten once counted 62 fewer per fault, all of it in
// mtree_range_walk; docs/instruction-counts.md). The 50 are exact between the two kernels'
// median boots.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "stats/sample.h"
#include "vm/isolab_run.h"

namespace isolab {
namespace {

using namespace vmtest;
using nlohmann::json;

const json& compared(const json& cmp, const std::string& name) {
  static const json none;
  for (const json& m : cmp["metrics"])
    if (m.value("name", "") == name) return m;
  return none;
}

TEST(WorkloadInsnRep, PlantedFaultPathIsCaughtWithoutRepIterationsOnly) {
  auto dir = temp_dir("insn-rep");
  IsolabRun r = run_isolab(load_spec("planted-fault-short.json"), dir, {}, {"--accel", "tcg"});
  ASSERT_EQ(r.proc.exit_code, 0) << read_file(dir / "isolab.stderr", 20000);
  std::size_t ok = 0;
  std::map<std::string, std::vector<double>> all_by_variant, norep_by_variant;
  for (const json& c : r.result["cells"]) {
    if (c.value("status", "") != "ok") continue;
    ++ok;
    const std::string variant = c.value("variant", "");
    all_by_variant[variant].push_back(
        metric(c, "faults.insns_per_page_fault")["values"][0].get<double>());
    norep_by_variant[variant].push_back(
        metric(c, "faults.norep_insns_per_page_fault")["values"][0].get<double>());
    // The planted NOPs are exactly 50 instructions; the page clear's rep executions are the
    // same in both kernels, a page's 4096 bytes and the final check at the least.
    EXPECT_GE(metric(c, "faults.rep_iters_per_page_fault")["values"][0].get<double>(), 4097);
    std::printf("%s: %.2f instructions per fault, %.2f without rep-string executions\n",
                c.value("id", "").c_str(),
                metric(c, "faults.insns_per_page_fault")["values"][0].get<double>(),
                metric(c, "faults.norep_insns_per_page_fault")["values"][0].get<double>());
  }
  ASSERT_GE(ok, 8u) << "too few cells ok for the exact test";
  ProcessResult cmp = run_isolab_command({"compare", r.run_dir.string(), "--format", "json"});
  ASSERT_NE(cmp.exit_code, 2) << cmp.out << cmp.err;
  const json j = json::parse(cmp.out);
  const json& all = compared(j, "faults.insns_per_page_fault");
  const json& norep = compared(j, "faults.norep_insns_per_page_fault");
  ASSERT_TRUE(all.is_object() && norep.is_object()) << cmp.out.substr(0, 4000);
  EXPECT_NEAR(median_of(norep_by_variant["planted"]) - median_of(norep_by_variant["vanilla"]), 50,
              0.5);
  EXPECT_NEAR(median_of(all_by_variant["planted"]) - median_of(all_by_variant["vanilla"]), 50, 0.5);
  // The full count sees the 50 instructions (between the median boots) but they are
  // under 1% of it: below the instruction threshold, not a regression (docs/verdicts.md). The
  // verdict rests on the boots' means, so a boot in the other regime (62 fewer, above) can take
  // the difference of means past 1% (a vanilla boot at 6164 against 6226 did: +1.005%); the
  // verdict is asserted when every boot of each kernel sits in one regime.
  const auto spread = [](const std::vector<double>& v) {
    return *std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end());
  };
  if (spread(all_by_variant["vanilla"]) <= 1 && spread(all_by_variant["planted"]) <= 1)
    EXPECT_EQ(all["verdict"], "changed, below threshold") << all.dump();
  else
    std::printf("a boot sat in the other regime: the full count's verdict is %s, not asserted\n",
                all.value("verdict", "").c_str());
  EXPECT_EQ(norep["verdict"], "regressed") << norep.dump();
  EXPECT_EQ(cmp.exit_code, 1);
}

}  // namespace
}  // namespace isolab
