// process tier: `isolab run --dry-run` of every spec in examples/ on a machine that has built
// nothing. Each plan is printed (its kernels, boots and verdict, and the budgets of a spec with
// budgets) whether the kernel cache is
// empty or holds only the memo of hashed tarballs (what a run leaves before it unpacks one: a
// dry run then read the source record of a tarball it had never unpacked and failed).
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

std::vector<fs::path> example_specs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(ISOLAB_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".json") out.push_back(e.path());
  return out;
}

// Runs the dry run of `example` against the kernel cache `cache` and expects its plan.
void expect_plan(const fs::path& example, const fs::path& cache) {
  ProcessSpec ps;
  ps.argv = {ISOLAB_BINARY, "run", example.string(), "--dry-run"};
  ps.env = {{"ISOLAB_CACHE_DIR", cache.string()}};
  ps.timeout = std::chrono::seconds(120);
  const ProcessResult r = make_real_runner()->run(ps);
  EXPECT_EQ(r.exit_code, 0) << example << "\n" << r.err;
  for (const char* section : {"\nKernels (kernel cache ", "\nBoots: ", "\nVerdict (isolab compare"})
    EXPECT_NE(r.out.find(section), std::string::npos) << example << ": no '" << section << "'";
  // A spec with budgets lists them, each saying whether the accelerator enforces it.
  if (read_file(example).find("\"budgets\"") != std::string::npos) {
    EXPECT_NE(r.out.find("\nBudgets (isolab run and isolab budget; exit status 4"),
              std::string::npos)
        << example;
    EXPECT_NE(r.out.find(" /s on the isolated CPUs of oslat (count: enforced everywhere): "
                         "enforced\n"),
              std::string::npos)
        << example << "\n"
        << r.out;
  }
}

TEST(DryRun, EveryExamplePlansOnAnEmptyCacheAndWritesNothing) {
  const fs::path dir = vmtest::temp_dir("dry-run-empty");
  const std::vector<fs::path> examples = example_specs();
  ASSERT_FALSE(examples.empty());
  for (const fs::path& example : examples) {
    expect_plan(example, dir / "cache");
    EXPECT_FALSE(fs::exists(dir / "cache")) << example << " wrote into the empty cache";
  }
  fs::remove_all(dir);
}

TEST(DryRun, EveryExamplePlansWhenItsTarballWasHashedButNeverUnpacked) {
  const fs::path dir = vmtest::temp_dir("dry-run-memo");
  const fs::path src = dir / "cache" / "src";
  fs::create_directories(src);
  write_file_atomic(src / "tarball-hashes.json", "{}");
  for (const fs::path& example : example_specs()) expect_plan(example, dir / "cache");
  for (const auto& e : fs::directory_iterator(src))
    EXPECT_EQ(e.path().filename(), "tarball-hashes.json") << "a dry run unpacked a source";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace isolab
