// vm tier: oslat as a workload on a real 6.1 guest (tests/data/specs/oslat-short.json: the NUMA
// kernel of numa-short.json, isolated CPUs 2-3): per-CPU metrics and histograms in result.json,
// the guest's rt-tests version, and the image holding /usr/bin/oslat only for such a spec.
#include <gtest/gtest.h>

#include "vm/isolab_run.h"

namespace isolab {
namespace {

using namespace vmtest;
using nlohmann::json;

TEST(WorkloadOslat, BusyLoopOnEachIsolatedCpu) {
  auto dir = temp_dir("oslat");
  IsolabRun r = run_isolab(load_spec("oslat-short.json"), dir);
  ASSERT_EQ(r.proc.exit_code, 0) << read_file(dir / "isolab.stderr", 20000);
  ASSERT_EQ(r.result["cells"].size(), 1u);
  const json& c = r.result["cells"][0];
  ASSERT_EQ(c.value("status", ""), "ok") << c.dump(1).substr(0, 4000);

  for (const char* n : {"oslat.oslat_min_us", "oslat.oslat_avg_us", "oslat.oslat_max_us"}) {
    const json& m = metric(c, n);
    ASSERT_TRUE(m.is_object()) << n << " missing: " << c["metrics"].dump();
    EXPECT_EQ(m["cpus"], json::array({2, 3})) << n;
    EXPECT_EQ(m["unit"], "us") << n;
    for (const auto& v : m["values"]) EXPECT_TRUE(v.is_number()) << n << ": " << m.dump();
  }
  for (std::size_t i = 0; i < 2; ++i) {
    const double mn = metric(c, "oslat.oslat_min_us")["values"][i].get<double>();
    const double mx = metric(c, "oslat.oslat_max_us")["values"][i].get<double>();
    EXPECT_GE(mn, 1.0);  // rt-tests 2.4 counts floor(gap) + 1 (docs/sources.md [os4])
    EXPECT_LE(mn, mx);
  }
  for (const char* h : {"oslat[cpu2]", "oslat[cpu3]"}) {
    const json& hist = c["histograms"][h];
    ASSERT_TRUE(hist.is_object()) << h << ": " << c["histograms"].dump().substr(0, 2000);
    EXPECT_EQ(hist["unit"], "us");
    EXPECT_EQ(hist["bucket_ns"], 1000);
    EXPECT_FALSE(hist["counts"].empty());
  }
  EXPECT_EQ(c["tool_versions"]["oslat"]["oslat"], "2.40");
}

}  // namespace
}  // namespace isolab
