#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "base/error.h"
#include "kernel/file_lock.h"

namespace fs = std::filesystem;
using namespace isolab;

namespace {

// flock(2) locks belong to the open file description, so two FileLocks in one process
// exclude each other just as two isolab processes do.
TEST(KernelFileLock, SecondHolderWaitsUntilFirstReleases) {
  const fs::path p =
      fs::temp_directory_path() / ("isolab-lock-" + std::to_string(::getpid())) / "k.lock";
  std::atomic<bool> second_has_it{false};
  std::string wait_message;
  std::thread t;
  {
    FileLock first(p);
    t = std::thread([&] {
      FileLock second(p, [&](const std::string& m) { wait_message = m; });
      second_has_it = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(second_has_it.load());
  }
  t.join();
  EXPECT_TRUE(second_has_it.load());
  EXPECT_EQ(wait_message, "waiting for lock " + p.string() + " (another isolab process)");
  fs::remove_all(p.parent_path());
}

TEST(KernelFileLock, UnopenableLockNamesPath) {
  EXPECT_THROW(FileLock("/proc/isolab-no/such.lock"), Error);
}

}  // namespace
