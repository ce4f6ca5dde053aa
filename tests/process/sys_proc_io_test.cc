// /proc/<pid>/io of a real process tree (sys/proc_io.h): what the cold-build progress reads
// while tar and git run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "base/files.h"
#include "sys/proc_io.h"
#include "sys/process.h"

namespace isolab {
namespace {

// bash reads a 1 MiB file itself, then waits in a child (sleep).
TEST(ProcIo, CountsTheProcessAndItsLiveChildren) {
  const auto file =
      std::filesystem::temp_directory_path() / ("isolab-proc-io-" + std::to_string(::getpid()));
  write_file_atomic(file, std::string(1048576, 'a'));
  auto runner = make_real_runner();
  ProcessSpec spec;
  spec.argv = {"bash", "-c", "read -r -N 1048576 x < " + file.string() + "; sleep 4; true"};
  auto child = runner->start(spec);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const ProcIo own = process_io(child->pid());
  const ProcIo tree = process_tree_io(child->pid());
  EXPECT_GE(own.rchar, 1048576u);
  EXPECT_GT(tree.rchar, own.rchar);  // plus the live sleep (its loader read the ELF files)
  ASSERT_TRUE(child->wait_for(std::chrono::seconds(10)).has_value());
  const ProcIo gone = process_tree_io(child->pid());  // reaped: zeros, no throw
  EXPECT_EQ(gone.rchar, 0u);
  EXPECT_EQ(gone.wchar, 0u);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace isolab
