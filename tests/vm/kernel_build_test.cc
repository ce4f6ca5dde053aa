// Real kernel builds: linux-source-6.1 with tinyconfig + the project's fragments, into the
// shared cache (ISOLAB_CACHE_DIR, default $HOME/.cache/isolab). The first run takes minutes
// (unpack + full build); later runs hit the cache and must not run make at all.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/files.h"
#include "kernel/kernel.h"
#include "sys/process.h"

namespace fs = std::filesystem;
using namespace isolab;

namespace {

// Passes everything to the real runner and counts make invocations.
class CountingRunner : public ProcessRunner {
 public:
  explicit CountingRunner(ProcessRunner& real) : real_(real) {}
  int make_calls = 0;
  std::vector<std::vector<std::string>> argvs;
  ProcessResult run(const ProcessSpec& spec) override {
    argvs.push_back(spec.argv);
    if (!spec.argv.empty() && spec.argv[0] == "make") ++make_calls;
    return real_.run(spec);
  }
  std::unique_ptr<Process> start(const ProcessSpec& spec) override { return real_.start(spec); }

 private:
  ProcessRunner& real_;
};

const fs::path kSource = ISOLAB_SOURCE_DIR;

std::vector<fs::path> fragments() {
  std::vector<fs::path> out;
  for (const char* f : {"kernel-configs/base.config", "kernel-configs/isolation.config"})
    if (fs::exists(kSource / f)) out.push_back(kSource / f);
  if (out.empty()) out.push_back(fs::path(ISOLAB_TEST_DATA_DIR) / "kernel/fragments/small.config");
  return out;
}

// patches/vmstat-nohz/series (quilt order) when present, else the *.patch files sorted.
std::vector<fs::path> vmstat_patches() {
  std::vector<fs::path> out;
  const fs::path dir = kSource / "patches/vmstat-nohz";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  if (fs::exists(dir / "series")) {
    std::istringstream in(read_file(dir / "series"));
    std::string line;
    while (std::getline(in, line))
      if (!line.empty() && line[0] != '#') out.push_back(dir / line);
    return out;
  }
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".patch") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void progress(const std::string& m) {
  static const auto t0 = std::chrono::steady_clock::now();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "[%7.1f s] %s\n", s, m.c_str());
}

class KernelBuild : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists("/usr/src/linux-source-6.1.tar.xz"))
        << "linux-source-6.1 is not installed (scripts/setup.sh installs it)";
    real_ = make_real_runner();
    log_dir_ = fs::temp_directory_path() / ("isolab-kernel-vm-test-" + std::to_string(::getpid()));
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(log_dir_, ec);
  }
  KernelEnv env(ProcessRunner& r) {
    KernelEnv e{default_cache_dir(), r};
    e.log_dir = log_dir_;
    e.jobs = 2;  // shared 2-core machine
    e.progress = progress;
    return e;
  }
  std::unique_ptr<ProcessRunner> real_;
  fs::path log_dir_;
};

TEST_F(KernelBuild, VanillaThenCacheHitWithoutMake) {
  KernelRequest req;
  req.fragments = fragments();
  req.variant_name = "vanilla";
  CountingRunner first(*real_);
  KernelArtifact a = ensure_kernel(req, env(first));
  progress("first call: from_cache=" + std::to_string(a.from_cache) +
           " build_seconds=" + std::to_string(a.build_seconds) + " release=" + a.kernel_release);
  ASSERT_TRUE(fs::is_regular_file(a.bzimage));
  EXPECT_GT(fs::file_size(a.bzimage), 100000u);
  EXPECT_EQ(a.build_key.size(), 64u);
  EXPECT_EQ(a.kernel_release, "6.1.192-isolab-" + a.build_key.substr(0, 12));
  EXPECT_EQ(read_file(a.bzimage.parent_path() / "kernel_release"), a.kernel_release + "\n");
  EXPECT_EQ(sha256_file(a.config_path), a.config_sha256);
  // The fragments' key options are in the final config.
  std::string config = read_file(a.config_path);
  if (fs::exists(kSource / "kernel-configs/isolation.config")) {
    EXPECT_NE(config.find("\nCONFIG_NO_HZ_FULL=y\n"), std::string::npos);
  }
  EXPECT_NE(config.find("# CONFIG_LOCALVERSION_AUTO is not set"), std::string::npos);

  CountingRunner second(*real_);
  auto t0 = std::chrono::steady_clock::now();
  KernelArtifact b = ensure_kernel(req, env(second));
  double hit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress("cache hit took " + std::to_string(hit_s) + " s");
  EXPECT_TRUE(b.from_cache);
  EXPECT_EQ(second.make_calls, 0);
  EXPECT_EQ(b.build_key, a.build_key);
  EXPECT_EQ(b.kernel_release, a.kernel_release);
  EXPECT_EQ(sha256_file(b.bzimage), sha256_file(a.bzimage));
}

TEST_F(KernelBuild, PatchedVariantGetsItsOwnKey) {
  auto patches = vmstat_patches();
  ASSERT_FALSE(patches.empty()) << "no patches/vmstat-nohz/*.patch";
  KernelRequest vanilla;
  vanilla.fragments = fragments();
  vanilla.variant_name = "vanilla";
  KernelRequest patched = vanilla;
  patched.patches = patches;
  patched.variant_name = "patched";
  CountingRunner r(*real_);
  KernelArtifact v = ensure_kernel(vanilla, env(r));
  KernelArtifact p = ensure_kernel(patched, env(r));
  progress("patched: from_cache=" + std::to_string(p.from_cache) +
           " build_seconds=" + std::to_string(p.build_seconds) + " release=" + p.kernel_release);
  EXPECT_NE(p.build_key, v.build_key);
  EXPECT_NE(p.kernel_release, v.kernel_release);
  EXPECT_EQ(p.patches.size(), patches.size());
  EXPECT_EQ(p.config_sha256, v.config_sha256);  // the patches do not touch Kconfig
  CountingRunner again(*real_);
  KernelArtifact p2 = ensure_kernel(patched, env(again));
  EXPECT_TRUE(p2.from_cache);
  EXPECT_EQ(again.make_calls, 0);
  EXPECT_EQ(p2.build_key, p.build_key);
}

}  // namespace
