// `isolab cache list|prune` on a cache laid out as ensure_kernel lays it out, while other
// processes hold its locks as a concurrent build (exclusive slot lock) and a concurrent run
// (shared lock on the kernel entry it boots) do: busy entries are kept and reported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "base/files.h"
#include "kernel/cache.h"
#include "sys/process.h"

namespace fs = std::filesystem;

namespace isolab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kOldKey(64, 'a'), kRunKey(64, 'b'), kNewKey(64, 'c');
const std::string kSlotOld = "1111111111111111", kSlotBuilding = "2222222222222222";
const std::string kSource = "dddddddddddddddd";

void set_age(const fs::path& p, int hours_ago) {
  fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::hours(hours_ago));
}

class KernelCache : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = fs::temp_directory_path() / ("isolab-cache-test-" + std::to_string(::getpid()));
    fs::remove_all(cache_);
    int age = 10;
    for (const auto& key : {kOldKey, kRunKey, kNewKey}) {
      fs::path e = cache_ / "kernels" / key;
      write_file_atomic(e / "bzImage", std::string(1 << 20, 'k'));
      write_file_atomic(e / "meta.json", R"({"kernel_release": "6.1.0-isolab-)" +
                                             key.substr(0, 12) + R"(", "variant_name": "v"})");
      mark_cache_use(e);
      set_age(e / ".isolab-last-use", age--);
      write_file_atomic(cache_ / "index" / ("in-" + key.substr(0, 4)), key + "\n");
    }
    for (const auto& slot : {kSlotOld, kSlotBuilding}) {
      write_file_atomic(
          cache_ / "worktrees" / slot / ".git",
          "gitdir: " + (cache_ / "src" / kSource / ".git/worktrees" / slot).string() + "\n");
      write_file_atomic(cache_ / "worktrees" / slot / "Makefile", std::string(2 << 20, 'w'));
      write_file_atomic(cache_ / "worktrees" / (slot + ".ready"), "");
      write_file_atomic(cache_ / "build" / slot / ".config", "CONFIG_SMP=y\n");
      mark_cache_use(cache_ / "build" / slot);
      set_age(cache_ / "build" / slot / ".isolab-last-use", slot == kSlotOld ? 20 : 1);
    }
    write_file_atomic(cache_ / "src" / kSource / "Makefile", std::string(3 << 20, 's'));
    write_file_atomic(cache_ / "src" / (kSource + ".json"), "{}");
    runner_ = make_real_runner();
  }
  void TearDown() override {
    for (auto& h : holders_) h->terminate(std::chrono::milliseconds(200));
    fs::remove_all(cache_);
  }

  // Another process holding a lock (util-linux flock(1): the same flock(2) isolab uses).
  void hold(const fs::path& lock, bool shared) {
    fs::create_directories(lock.parent_path());
    ProcessSpec ps;
    ps.argv = {"flock", shared ? "--shared" : "--exclusive", lock.string(), "sleep", "120"};
    holders_.push_back(runner_->start(ps));
    // Wait until it really holds the lock: our own non-blocking attempt fails.
    for (int i = 0; i < 100; ++i) {
      if (!FileLock::try_lock(lock)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "flock did not take " << lock;
  }

  ProcessResult isolab(std::vector<std::string> args) {
    ProcessSpec ps;
    ps.argv = {ISOLAB_BINARY, "cache"};
    ps.argv.insert(ps.argv.end(), args.begin(), args.end());
    ps.argv.insert(ps.argv.end(), {"--cache-dir", cache_.string()});
    return runner_->run(ps);
  }

  fs::path cache_;
  std::unique_ptr<ProcessRunner> runner_;
  std::vector<std::unique_ptr<Process>> holders_;
};

TEST_F(KernelCache, ListShowsEveryEntryNewestFirstWithSizes) {
  ProcessResult r = isolab({"list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("kernel  cccccccccccccccc  1.0 MiB"));
  EXPECT_THAT(r.out, HasSubstr("6.1.0-isolab-cccccccccccc (v)"));
  EXPECT_THAT(r.out, HasSubstr("slot    1111111111111111  2.0 MiB"));
  EXPECT_THAT(r.out, HasSubstr("source  " + kSource));
  EXPECT_THAT(r.out, HasSubstr("total 10.0 MiB in 6 entries"));
  // Newest first: the slot used an hour ago before the kernel used 8 hours ago.
  EXPECT_LT(r.out.find(kSlotBuilding), r.out.find(kNewKey.substr(0, 16))) << r.out;
  EXPECT_LT(r.out.find(kNewKey.substr(0, 16)), r.out.find(kOldKey.substr(0, 16))) << r.out;
}

// A run boots kernel b (shared lock) and a build works in slot 2 (exclusive slot lock) while
// `prune --keep-last 0` runs: both stay, with a message; the source stays for slot 2; the rest
// goes, and the index entry of a removed kernel goes with it.
TEST_F(KernelCache, PruneSkipsWhatConcurrentRunsAndBuildsHold) {
  hold(cache_ / "locks" / (kRunKey + ".lock"), /*shared=*/true);
  hold(cache_ / "locks" / ("slot-" + kSlotBuilding + ".lock"), /*shared=*/false);
  ProcessResult r = isolab({"prune", "--keep-last", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("kept kernel " + kRunKey + ": in use"));
  EXPECT_THAT(r.out, HasSubstr("kept slot " + kSlotBuilding + ": in use"));
  EXPECT_THAT(r.out, HasSubstr("removed kernel " + kOldKey + " (1.0 MiB)"));
  EXPECT_THAT(r.out, HasSubstr("removed slot " + kSlotOld));
  EXPECT_THAT(r.out, Not(HasSubstr("removed source")));
  EXPECT_THAT(r.out, HasSubstr(": 10.0 MiB -> 6.0 MiB"));
  EXPECT_TRUE(fs::exists(cache_ / "kernels" / kRunKey / "bzImage"));
  EXPECT_FALSE(fs::exists(cache_ / "kernels" / kOldKey));
  EXPECT_FALSE(fs::exists(cache_ / "kernels" / kNewKey));
  EXPECT_FALSE(fs::exists(cache_ / "worktrees" / kSlotOld));
  EXPECT_FALSE(fs::exists(cache_ / "worktrees" / (kSlotOld + ".ready")));
  EXPECT_FALSE(fs::exists(cache_ / "build" / kSlotOld));
  EXPECT_TRUE(fs::exists(cache_ / "worktrees" / kSlotBuilding / "Makefile"));
  EXPECT_TRUE(fs::exists(cache_ / "src" / kSource / "Makefile"));
  EXPECT_FALSE(fs::exists(cache_ / "index" / ("in-" + kOldKey.substr(0, 4))));
  EXPECT_TRUE(fs::exists(cache_ / "index" / ("in-" + kRunKey.substr(0, 4))));
  // Nothing left over from the rename-then-delete of kernel entries.
  for (const auto& e : fs::directory_iterator(cache_ / "kernels"))
    EXPECT_EQ(e.path().filename().string().rfind(".prune-", 0), std::string::npos) << e.path();

  // Once the build and the run are done, the same prune removes them and the source.
  for (auto& h : holders_) h->terminate(std::chrono::milliseconds(200));
  holders_.clear();
  r = isolab({"prune", "--keep-last", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("removed source " + kSource));
  EXPECT_THAT(r.out, HasSubstr(": 6.0 MiB -> 0 B"));
}

// --max-size: the oldest go first; a busy oldest entry makes the next-oldest go instead.
TEST_F(KernelCache, MaxSizeTakesTheNextOldestWhenTheOldestIsBusy) {
  hold(cache_ / "locks" / ("slot-" + kSlotOld + ".lock"), /*shared=*/false);
  ProcessResult r = isolab({"prune", "--max-size", "9M"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("kept slot " + kSlotOld + ": in use"));
  EXPECT_THAT(r.out, HasSubstr("removed kernel " + kOldKey));
  EXPECT_THAT(r.out, HasSubstr("removed kernel " + kRunKey));
  EXPECT_THAT(r.out, HasSubstr(": 10.0 MiB -> 8.0 MiB"));
  EXPECT_TRUE(fs::exists(cache_ / "kernels" / kNewKey));
}

TEST_F(KernelCache, BadSizeAndMissingPolicyAreClearErrors) {
  ProcessResult r = isolab({"prune", "--max-size", "lots"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("size 'lots': expected a number"));
  r = isolab({"prune"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("give --keep-last N and/or --max-size SIZE"));
}

// Two runs booting the same kernel both hold it (shared locks do not exclude each other).
TEST_F(KernelCache, TwoRunsHoldOneKernel) {
  auto a = hold_kernel_entry(cache_, kNewKey);
  auto b = hold_kernel_entry(cache_, kNewKey);
  EXPECT_EQ(FileLock::try_lock(cache_ / "locks" / (kNewKey + ".lock")), nullptr);
  ASSERT_NE(FileLock::try_lock(cache_ / "locks" / (kNewKey + ".lock"), FileLock::Mode::shared),
            nullptr);
}

}  // namespace
}  // namespace isolab
