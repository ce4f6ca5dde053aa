// `isolab bisect` refuses bad input before any build or boot: exit 2, a message naming the
// option and value, and no bisect directory left behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sys/process.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::vector<std::string> args;
  std::string message;
};

TEST(BisectCli, BadInputIsRefusedBeforeAnythingRuns) {
  const std::string spec = std::string(ISOLAB_TEST_DATA_DIR) + "/specs/bisect-short.json";
  const fs::path results =
      fs::temp_directory_path() / ("isolab-bisect-cli-" + std::to_string(::getpid()));
  fs::remove_all(results);
  const std::vector<Case> cases = {
      {{"--variant-b", "patched"},
       "--variant-b patched: no such variant in the spec (it has vanilla, series)"},
      {{"--variant-b", "vanilla"}, "bisect: A and B are both variant vanilla"},
      {{"--metric", "insns"}, "--metric 'insns': expected METRIC[@CPUS]:higher|lower"},
      {{"--metric", "vmstat-syscall.nope:higher"},
       "--metric vmstat-syscall.nope:higher: no metric of the spec's workloads is named "
       "vmstat-syscall.nope (they give vmstat-syscall.*)"},
      {{"--boots", "8", "--max-boots", "4"}, "--max-boots 4 is below --boots 8"},
  };
  for (const Case& c : cases) {
    ProcessSpec ps;
    ps.argv = {ISOLAB_BINARY, "bisect", spec, "--results-dir", results.string()};
    ps.argv.insert(ps.argv.end(), c.args.begin(), c.args.end());
    ps.timeout = std::chrono::seconds(60);
    const ProcessResult r = make_real_runner()->run(ps);
    EXPECT_EQ(r.exit_code, 2) << c.message << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(fs::exists(results));
}

}  // namespace
}  // namespace isolab
