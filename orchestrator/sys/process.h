// The one interface through which isolab starts child processes (make, git, QEMU, ...).
//
// Contract:
// - argv is an argument vector, never a shell string; argv[0] is searched in PATH when it has
//   no '/'.
// - Every child runs in its own process group. The group is registered in a process-wide
//   registry so that kill_all_children() (called from the SIGINT/SIGTERM handler and at exit)
//   ends it and everything it spawned.
// - Output goes to files (stdout_path/stderr_path) or, when those are empty, is captured into
//   ProcessResult::out/err, capped at capture_limit bytes each.
// - A timeout > 0 kills the whole group (SIGTERM, then SIGKILL after 2 s) and sets timed_out.
// - Failure to start is not an exception: it is ProcessResult::start_error (non-empty).
// The real implementation (make_real_runner) is the only file that includes Boost.Process;
// FakeRunner (sys/fake_runner.h) records argv for unit tests.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace isolab {

struct ProcessSpec {
  std::vector<std::string> argv;
  std::filesystem::path cwd;                             // empty: inherit
  std::vector<std::pair<std::string, std::string>> env;  // added to / overriding ours
  std::filesystem::path stdout_path;                     // empty: capture
  std::filesystem::path stderr_path;                     // empty: capture (or merge)
  bool stderr_to_stdout = false;                         // both streams into stdout's sink
  bool append = false;                                   // append to the output files
  std::chrono::milliseconds timeout{0};                  // 0: no limit
  std::size_t capture_limit = std::size_t{16} * 1024 * 1024;
};

struct ProcessResult {
  int exit_code = -1;       // valid when term_signal == 0 and start_error is empty
  int term_signal = 0;      // signal that ended the child, 0 if it exited
  bool timed_out = false;   // killed by our timeout
  std::string start_error;  // non-empty when the child could not be started
  std::string out;          // captured stdout (when no stdout_path)
  std::string err;          // captured stderr (when no stderr_path and not merged)
  double wall_seconds = 0;

  bool ok() const {
    return start_error.empty() && !timed_out && term_signal == 0 && exit_code == 0;
  }
  // "exited 2", "killed by signal 9", "timed out after 30 s", "failed to start: ..."
  std::string describe() const;
};

// A started child; destroying it kills its process group if it is still running.
class Process {
 public:
  virtual ~Process() = default;
  virtual int pid() const = 0;
  // Waits up to `d` for the child to end; nullopt if it is still running.
  virtual std::optional<ProcessResult> wait_for(std::chrono::milliseconds d) = 0;
  // Kills the whole process group (SIGTERM, grace, SIGKILL) and reaps the child.
  virtual ProcessResult terminate(std::chrono::milliseconds grace = std::chrono::seconds(2)) = 0;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Runs to completion (or timeout).
  virtual ProcessResult run(const ProcessSpec& spec) = 0;
  // Starts and returns at once; the caller polls wait_for(). spec.timeout is ignored here.
  virtual std::unique_ptr<Process> start(const ProcessSpec& spec) = 0;
};

std::unique_ptr<ProcessRunner> make_real_runner();

// Kills every live child process group started through the real runner (async-signal-safe).
void kill_all_children();

// Installs SIGINT/SIGTERM handlers that kill all children and then re-raise the signal
// with its default action, so the exit status tells the caller what happened.
void install_teardown_handlers();

// For `isolab run`: SIGINT/SIGTERM/SIGHUP handlers that only kill every child process group
// and record the signal, so that the main path can write "interrupted" and exit itself. A
// second signal while the first is being handled ends the process at once (default action).
// After the first signal the real runner starts no new child (start_error "interrupted by
// signal N").
void install_interrupt_handlers();

// True once a handler of install_interrupt_handlers() has run (async-signal-safe read).
bool interrupt_requested();
// The signal number that set it (SIGINT, SIGTERM, SIGHUP), 0 when none.
int interrupt_signal();

// Renders argv for logs, quoting words with spaces or shell metacharacters. For display only.
std::string argv_to_display(const std::vector<std::string>& argv);

}  // namespace isolab
