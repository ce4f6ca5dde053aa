// vm tier: the madvise-latency example in short (tests/data/specs/madvise-short.json, the
// example's 6.12 PREEMPT_RT kernels): in every cell the wakeup_rt tracer gave a max latency,
// its max-latency trace was kept beside the result, and the madvise-pressure load really ran
// madvise_cold_or_pageout_pte_range() (function profiler count > 0). One boot per variant.
#include <gtest/gtest.h>

#include "vm/isolab_run.h"

namespace isolab {
namespace {

using namespace vmtest;

TEST(WorkloadMadviseLatency, WakeupRtAndCallCountInEveryCell) {
  auto dir = temp_dir("madvise");
  IsolabRun r = run_isolab(load_spec("madvise-short.json"), dir);
  ASSERT_EQ(r.proc.exit_code, 0) << read_file(dir / "isolab.stderr", 20000);
  ASSERT_FALSE(r.result.is_null());
  ASSERT_EQ(r.result["cells"].size(), 2u);
  for (const auto& c : r.result["cells"]) {
    SCOPED_TRACE(c.value("id", ""));
    ASSERT_EQ(c.value("status", ""), "ok") << c.value("reason", "");
    const auto& m = c["metrics"];
    ASSERT_TRUE(m.contains("shared.wakeup_rt.max_latency_us")) << m.dump(1).substr(0, 3000);
    EXPECT_EQ(m["shared.wakeup_rt.max_latency_us"]["unit"], "us");
    EXPECT_GT(m["shared.wakeup_rt.max_latency_us"]["values"][0].get<double>(), 0);
    ASSERT_TRUE(m.contains("shared.calls.madvise_cold_or_pageout_pte_range"));
    EXPECT_GT(m["shared.calls.madvise_cold_or_pageout_pte_range"]["values"][0].get<double>(), 0);
    EXPECT_GT(m["shared.load.madvise_calls"]["values"][0].get<double>(), 0);
    const auto& t = c["latency_traces"]["shared"];
    ASSERT_TRUE(t.is_object()) << c.dump(1).substr(0, 3000);
    ASSERT_TRUE(t.contains("file"));
    auto file = r.run_dir / t["file"].get<std::string>();
    ASSERT_TRUE(std::filesystem::exists(file)) << file;
    EXPECT_NE(read_file(file, 8u << 20).find("# tracer: wakeup_rt"), std::string::npos);
  }
  ProcessResult cmp = run_isolab_command({"compare", r.run_dir.string()});
  EXPECT_NE(cmp.out.find("max-latency traces (wakeup_rt"), std::string::npos) << cmp.out;
}

}  // namespace
}  // namespace isolab
