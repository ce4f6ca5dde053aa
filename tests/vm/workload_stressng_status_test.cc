// vm tier, docs/sources.md [s3]: a stress-ng step whose requested stressor the guest kernel cannot
// run (sctp on the tinyconfig-based default kernel, from the cache) exits 0 in a real guest, and
// the cell must still be invalid, naming the stressor and the guest's own log line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "vm/isolab_run.h"

namespace isolab {
namespace {

using namespace vmtest;
using ::testing::HasSubstr;

TEST(WorkloadStressngStatus, SkippedStressorMakesTheCellInvalid) {
  auto dir = temp_dir("stressng-skip");
  IsolabRun r = run_isolab(load_spec("stressng-skip-short.json"), dir);
  ASSERT_EQ(r.result["cells"].size(), 1u) << read_file(dir / "isolab.stderr", 20000);
  const nlohmann::json& c = r.result["cells"][0];
  EXPECT_EQ(c.value("status", ""), "invalid") << c.dump(1).substr(0, 4000);
  EXPECT_THAT(c.value("reason", ""), HasSubstr("workload skip: stressor sctp did not run: sctp:"));
  // stress-ng 0.15.06 in this guest: "sctp: socket failed, errno=38 (Function not
  // implemented)" at level fail, then "successful run completed" and exit status 0.
  EXPECT_THAT(c.value("reason", ""), HasSubstr("errno=38 (Function not implemented)"));
  // The stressor that ran keeps its metrics (the raw record stays beside the result).
  EXPECT_TRUE(c["metrics"].contains("skip.cpu.bogo_ops")) << c["metrics"].dump();
}

}  // namespace
}  // namespace isolab
