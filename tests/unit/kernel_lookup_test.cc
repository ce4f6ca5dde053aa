// lookup_kernel (the dry run's view of the kernel cache) on caches that hold less than a run
// would leave: it answers "to build" with the reason and never fails.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "base/files.h"
#include "kernel/lookup.h"
#include "sys/fake_runner.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("isolab-lookup-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

KernelRequest tarball_request(const fs::path& tarball) {
  KernelRequest req;
  req.source.kind = KernelSourceSpec::Kind::tarball;
  req.source.tarball = tarball.string();
  return req;
}

FakeRunner gcc_runner() {
  FakeRunner runner;
  runner.responder = [](const ProcessSpec&) {
    ProcessResult r;
    r.exit_code = 0;
    r.out = "gcc (Debian 12.2.0-14) 12.2.0\n";
    return r;
  };
  return runner;
}

TEST(KernelLookup, EmptyCacheSaysTheSourceIsNotUnpacked) {
  TempDir dir;
  write_file_atomic(dir.path / "linux.tar.xz", "not really a tarball");
  FakeRunner runner = gcc_runner();
  const KernelLookup k = lookup_kernel(tarball_request(dir.path / "linux.tar.xz"),
                                       {dir.path / "cache", runner, false});
  EXPECT_EQ(k.state, KernelLookup::State::to_build);
  EXPECT_THAT(k.why, HasSubstr("linux.tar.xz is not unpacked in the cache yet"));
}

// The hash memo holds every tarball a run or dry run has hashed; a second source that was only
// hashed has no source record yet (a fresh machine: the default's 6.1 was built, the 6.12 of
// another example never unpacked).
TEST(KernelLookup, TarballHashedButNeverUnpackedIsToBuildNotAnError) {
  TempDir dir;
  write_file_atomic(dir.path / "linux.tar.xz", "not really a tarball");
  FakeRunner runner = gcc_runner();
  const fs::path cache = dir.path / "cache";
  fs::create_directories(cache / "src");
  write_file_atomic(cache / "src" / "tarball-hashes.json", "{}\n");  // another source's run made it
  const KernelLookup k =
      lookup_kernel(tarball_request(dir.path / "linux.tar.xz"), {cache, runner, false});
  EXPECT_EQ(k.state, KernelLookup::State::to_build);
  EXPECT_THAT(k.why, HasSubstr("linux.tar.xz is not unpacked in the cache yet"));
  // The lookup hashed the tarball into the memo, as a run does, and wrote nothing else.
  EXPECT_THAT(read_file(cache / "src" / "tarball-hashes.json"), HasSubstr("linux.tar.xz"));
}

// The cache's own records are input too: a hash memo and a source record nested 150 000 deep
// (300 KB each) are read as absent records. nlohmann parses and destroys such a document without
// recursion, but copies it recursively (base/json_document.h): a reader that copied one would
// overflow the stack here.
TEST(KernelLookup, CacheRecordsNestedTooDeepAreReadAsAbsent) {
  TempDir dir;
  const std::string tarball_text = "not really a tarball";
  write_file_atomic(dir.path / "linux.tar.xz", tarball_text);
  FakeRunner runner = gcc_runner();
  const fs::path cache = dir.path / "cache";
  fs::create_directories(cache / "src");
  const std::string deep = std::string(150000, '[') + std::string(150000, ']');
  write_file_atomic(cache / "src" / "tarball-hashes.json", deep);
  write_file_atomic(cache / "src" / (sha256_hex(tarball_text).substr(0, 16) + ".json"), deep);
  const KernelLookup k =
      lookup_kernel(tarball_request(dir.path / "linux.tar.xz"), {cache, runner, false});
  EXPECT_EQ(k.state, KernelLookup::State::to_build);
  EXPECT_THAT(k.why, HasSubstr("linux.tar.xz is not unpacked in the cache yet"));
}

}  // namespace
}  // namespace isolab
