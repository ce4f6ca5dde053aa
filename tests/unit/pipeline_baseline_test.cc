// Nightly mode: the stored baseline run names the kernel; that kernel boots in tonight's run,
// in the same blocks as tonight's kernels.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "base/error.h"
#include "base/files.h"
#include "pipeline/baseline.h"
#include "pipeline/run_plan.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;

class Baseline : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory per test: ctest runs the fixture's tests as parallel processes.
    dir_ = fs::temp_directory_path() /
           (std::string("isolab-baseline-test-") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    write_file_atomic(dir_ / "kernels" / "k1" / "bzImage", "not really a kernel");
  }
  void TearDown() override { fs::remove_all(dir_); }

  nlohmann::json stored_run() const {
    return {{"run_id", "20261201T010000Z-nightly-abc"},
            {"variants",
             {{"patched",
               {{"bzimage", (dir_ / "kernels" / "k1" / "bzImage").string()},
                {"kernel_release", "6.1.192-isolab-k1"},
                {"build_key", "k1"},
                {"patches", {{{"path", "/p/0001.patch"}, {"sha256", "aa"}}}}}}}}};
  }

  Spec tonight() const {
    nlohmann::json doc = {{"name", "nightly"},
                          {"variants",
                           {{{"name", "vanilla"}},
                            {{"name", "patched"},
                             {"extra_cmdline", "nosmt"},
                             {"sysctls", {{"vm.stat_interval", 1}}}}}},
                          {"guest", {{"cmdline", "isolcpus=1"}}},
                          {"workloads", {{{"name", "l"}, {"tool", "cyclictest"}}}},
                          {"repetitions", 5},
                          {"baseline", {{"last_good", true}}}};
    return parse_spec(doc, dir_);
  }

  fs::path dir_;
};

TEST_F(Baseline, TheStoredRunSuppliesTheKernel) {
  std::string why;
  const auto b = baseline_kernel(stored_run(), dir_ / "run", "patched", &why);
  ASSERT_TRUE(b) << why;
  EXPECT_EQ(b->build_key, "k1");
  EXPECT_EQ(b->kernel_release, "6.1.192-isolab-k1");
  EXPECT_EQ(b->run_id, "20261201T010000Z-nightly-abc");
  EXPECT_EQ(to_json(*b)["patches"][0]["sha256"], "aa");
  EXPECT_FALSE(baseline_kernel(stored_run(), dir_, "vanilla", &why));
  EXPECT_NE(why.find("recorded no variant vanilla"), std::string::npos) << why;
  fs::remove(dir_ / "kernels" / "k1" / "bzImage");
  EXPECT_FALSE(baseline_kernel(stored_run(), dir_, "patched", &why));
  EXPECT_NE(why.find("build key k1"), std::string::npos) << why;
  EXPECT_NE(why.find("no longer there"), std::string::npos) << why;
}

TEST_F(Baseline, VariantBootsInTheSameBlocksAsTonights) {
  Spec spec = tonight();
  ASSERT_EQ(spec.baseline_variant, "patched");
  std::string why;
  add_baseline_variant(spec, *baseline_kernel(stored_run(), dir_, "patched", &why));
  ASSERT_EQ(spec.variants.size(), 3u);
  const VariantSpec& v = spec.variants.back();
  EXPECT_EQ(v.name, "patched-baseline");
  EXPECT_EQ(v.extra_cmdline, "nosmt");
  EXPECT_EQ(v.sysctls.at("vm.stat_interval"), "1");
  EXPECT_TRUE(v.patches.empty());
  EXPECT_EQ(spec.raw["variants"].back()["name"], "patched-baseline");
  EXPECT_FALSE(spec.raw["variants"].back().contains("patches"));
  EXPECT_EQ(spec.raw["baseline_kernel"]["build_key"], "k1");
  // Every block of the run holds tonight's kernels and the baseline's, in a drawn order.
  const auto cells = plan_cells(spec, 3);
  ASSERT_EQ(cells.size(), 15u);
  for (std::size_t i = 0; i < cells.size(); i += 3) {
    std::set<std::string> block;
    for (std::size_t j = i; j < i + 3; ++j) block.insert(cells[j].variant);
    EXPECT_EQ(block, (std::set<std::string>{"vanilla", "patched", "patched-baseline"}));
  }
  EXPECT_THROW(add_baseline_variant(spec, *baseline_kernel(stored_run(), dir_, "patched", &why)),
               Error);
}

TEST(BaselineName, FitsTheVariantNameLimit) {
  EXPECT_EQ(baseline_variant_name("patched"), "patched-baseline");
  const std::string n = baseline_variant_name(std::string(40, 'x'));
  EXPECT_EQ(n.size(), 40u);
  EXPECT_EQ(n.substr(31), "-baseline");
}

}  // namespace
}  // namespace isolab
