// `isolab bisect` refuses bad input before any build or boot: exit 2, a message naming the
// option and value, and no bisect directory left behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/files.h"
#include "sys/process.h"
#include "vm/isolab_run.h"

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

// A workload CPU list the guest cannot have is refused naming the field and the file, before
// the series apply check unpacks the kernel source into an empty cache.
TEST(BisectCli, BadWorkloadCpusAreRefusedBeforeTheSourceIsUnpacked) {
  const fs::path dir = vmtest::temp_dir("bisect-cpus");
  nlohmann::json spec = vmtest::load_spec("bisect-short.json");
  spec["workloads"][0]["cpus"] = "9";
  const fs::path spec_path = dir / "spec.json";
  write_file_atomic(spec_path, spec.dump(2));
  ProcessSpec ps;
  ps.argv = {ISOLAB_BINARY, "bisect", spec_path.string(), "--results-dir",
             (dir / "results").string()};
  ps.env = {{"ISOLAB_CACHE_DIR", (dir / "cache").string()}};
  ps.timeout = std::chrono::seconds(60);
  const ProcessResult r = make_real_runner()->run(ps);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/workloads/0/cpus: cpulist '9'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(in " + spec_path.string() + ")"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "cache" / "src")) << "the source was unpacked first";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace isolab
