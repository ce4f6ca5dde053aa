#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "sys/process.h"

namespace isolab {

// True if pid still runs (not a zombie) after waiting up to `d` for it to go.
static bool process_alive(int pid, std::chrono::milliseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  for (;;) {
    FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
    if (!f) return false;
    char state = 0;
    int n = std::fscanf(f, "%*d (%*[^)]) %c", &state);
    std::fclose(f);
    if (n == 1 && state == 'Z') return false;
    if (std::chrono::steady_clock::now() > end) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

TEST(RealRunner, CapturesOutputAndExitCode) {
  auto r = make_real_runner();
  ProcessSpec s;
  s.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"};
  auto res = r->run(s);
  EXPECT_EQ(res.exit_code, 3);
  EXPECT_EQ(res.out, "out\n");
  EXPECT_EQ(res.err, "err\n");
  EXPECT_FALSE(res.ok());
}

TEST(RealRunner, MissingProgramIsStartError) {
  auto r = make_real_runner();
  ProcessSpec s;
  s.argv = {"no-such-program-isolab"};
  auto res = r->run(s);
  EXPECT_FALSE(res.start_error.empty());
  EXPECT_NE(res.describe().find("no-such-program-isolab"), std::string::npos);
}

TEST(RealRunner, TimeoutKillsWholeGroup) {
  auto r = make_real_runner();
  ProcessSpec s;
  // The grandchild would outlive a plain kill of the shell.
  s.argv = {"sh", "-c", "sleep 30 & echo $! > /tmp/isolab-test-grandchild; wait"};
  s.timeout = std::chrono::milliseconds(300);
  auto res = r->run(s);
  EXPECT_TRUE(res.timed_out);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  FILE* f = std::fopen("/tmp/isolab-test-grandchild", "r");
  ASSERT_NE(f, nullptr);
  int pid = 0;
  ASSERT_EQ(std::fscanf(f, "%d", &pid), 1);
  std::fclose(f);
  EXPECT_FALSE(process_alive(pid, std::chrono::seconds(2))) << "grandchild " << pid << " survived";
}

// The run's handler only kills the children and records the signal; the process goes
// on (so that it can write "interrupted") and starts no new child; a second signal ends it.
// The scenario runs in the child EXPECT_EXIT forks (the handlers and the flag are process-wide);
// each failed step exits with its own code.
[[noreturn]] void interrupt_scenario() {
  install_interrupt_handlers();
  auto runner = make_real_runner();
  ProcessSpec sleeper;
  sleeper.argv = {"sleep", "60"};
  auto child = runner->start(sleeper);
  const int pid = child->pid();
  if (interrupt_requested()) std::_Exit(10);
  ::raise(SIGINT);
  if (!interrupt_requested() || interrupt_signal() != SIGINT) std::_Exit(11);
  auto r = child->wait_for(std::chrono::seconds(5));
  if (!r || r->term_signal != SIGKILL || process_alive(pid, std::chrono::seconds(1)))
    std::_Exit(12);
  ProcessSpec echo;
  echo.argv = {"echo", "hi"};
  ProcessResult refused = runner->run(echo);
  if (refused.start_error != "interrupted by signal 2") std::_Exit(13);
  std::_Exit(0);
}

// After the first signal was recorded, a second one ends the process at once.
[[noreturn]] void second_signal_scenario() {
  install_interrupt_handlers();
  ::raise(SIGTERM);
  if (interrupt_signal() != SIGTERM) std::_Exit(20);
  ::raise(SIGINT);
  std::_Exit(21);
}

TEST(InterruptHandlers, FirstSignalStopsChildrenAndIsRecorded) {
  EXPECT_EXIT(interrupt_scenario(), ::testing::ExitedWithCode(0), "");
}

TEST(InterruptHandlers, SecondSignalEndsTheProcess) {
  EXPECT_EXIT(second_signal_scenario(), ::testing::KilledBySignal(SIGINT), "");
}

}  // namespace isolab
