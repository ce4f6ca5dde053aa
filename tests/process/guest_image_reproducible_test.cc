// process tier: the guest tools built from this checkout in two build directories, with debug
// information (RelWithDebInfo), give the same guest image: the same guest_image_sha256 and the
// same initramfs bytes, so that a run from another CI runner is not refused as unlike.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/files.h"
#include "guest/initramfs.h"
#include "sys/process.h"

using namespace isolab;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kTools = {"vmstat-overhead", "madvise-pressure", "isolab-mark"};

// Configures a build directory of the checkout and builds the guest tools in it.
void build_tools(ProcessRunner& runner, const fs::path& dir) {
  ProcessSpec configure;
  configure.argv = {"cmake",
                    "-S",
                    ISOLAB_SOURCE_DIR,
                    "-B",
                    dir.string(),
                    "-G",
                    "Ninja",
                    "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                    "-DISOLAB_TESTS=OFF"};
  configure.timeout = std::chrono::seconds(300);
  const ProcessResult c = runner.run(configure);
  ASSERT_TRUE(c.ok()) << c.describe() << ": " << c.err;
  ProcessSpec build;
  build.argv = {"ninja", "-C", dir.string(), "-j1"};
  build.argv.insert(build.argv.end(), kTools.begin(), kTools.end());
  build.timeout = std::chrono::seconds(300);
  const ProcessResult b = runner.run(build);
  ASSERT_TRUE(b.ok()) << b.describe() << ": " << b.out << b.err;
}

BaseImage image_of(ProcessRunner& runner, const fs::path& dir) {
  BaseImageInputs in;
  for (const auto& t : kTools) in.tools.push_back(dir / t);
  return ensure_base_image(runner, in, dir / "cache");
}

}  // namespace

TEST(GuestImage, TheSameCheckoutBuiltInTwoDirectoriesGivesTheSameImage) {
  const fs::path root =
      fs::temp_directory_path() / ("isolab-reproducible-" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto runner = make_real_runner();
  build_tools(*runner, root / "first");
  build_tools(*runner, root / "second-build");
  const BaseImage a = image_of(*runner, root / "first");
  const BaseImage b = image_of(*runner, root / "second-build");
  EXPECT_EQ(a.sha256, b.sha256);
  EXPECT_EQ(sha256_file(a.path), sha256_file(b.path));
  fs::remove_all(root);
}
