// process tier: the rendered step run does not hand the result channel (fd 3, /dev/ttyS1 in the
// guest) to what it starts. finish() drains the channel by closing it; a process that still
// holds it (busybox timeout's watcher outlives the step by up to a second) would make that close
// not the last one, and poweroff -f would cut the last records. Run with the busybox the guest
// image is built from (guest/initramfs.h BaseImageInputs::busybox), fd 3 a host file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "base/files.h"
#include "guest/init_script.h"
#include "guest/initramfs.h"
#include "sys/process.h"

namespace fs = std::filesystem;

namespace isolab {
namespace {

// The /init line that runs the step under timeout, as render_plan_files writes it.
std::string rendered_step_line() {
  GuestPlan p;
  p.nonce = "Ch4nnelHolders";
  p.vcpus = 2;
  p.skip_on_mismatch = false;
  p.steps.push_back({"only", "true", {}, 10, ""});
  std::istringstream init(render_plan_files(p).front().second);
  for (std::string line; std::getline(init, line);)
    if (line.rfind("timeout ", 0) == 0) return line;
  return "";
}

class ResultChannelHolders : public ::testing::Test {
 protected:
  ResultChannelHolders()
      : runner_(make_real_runner()),
        dir_(fs::temp_directory_path() / ("isolab-fd3-" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
  }
  ~ResultChannelHolders() override { fs::remove_all(dir_); }

  // Runs `line` with fd 3 open on a channel file, closes fd 3 and prints the pids of the
  // processes that still have the channel open.
  std::string holders_after(const std::string& line) {
    const fs::path channel = dir_ / "channel";
    const std::string script = "exec 3> " + channel.string() + "\n" + line +
                               "\nexec 3>&-\n"
                               "for f in /proc/[0-9]*/fd/*; do\n"
                               "  [ \"$(readlink $f 2>/dev/null)\" = " +
                               channel.string() +
                               " ] && echo \"${f%/fd/*}\"\n"
                               "done\n"
                               "exit 0\n";
    write_file_atomic(dir_ / "run.sh", script);
    ProcessSpec s;
    s.argv = {BaseImageInputs{}.busybox.string(), "sh", (dir_ / "run.sh").string()};
    s.cwd = dir_;
    s.timeout = std::chrono::seconds(30);
    const ProcessResult r = runner_->run(s);
    EXPECT_TRUE(r.ok()) << r.describe() << ": " << r.err;
    return r.out;
  }

  std::unique_ptr<ProcessRunner> runner_;
  fs::path dir_;
};

TEST_F(ResultChannelHolders, TheCheckSeesABackgroundHolder) {
  EXPECT_NE(holders_after("sleep 2 &"), "");
}

TEST_F(ResultChannelHolders, NothingTheStepStartedHoldsTheChannel) {
  const std::string line = rendered_step_line();
  ASSERT_NE(line, "") << "no `timeout ...` line in the rendered /init";
  EXPECT_EQ(holders_after(line), "") << line;
}

}  // namespace
}  // namespace isolab
