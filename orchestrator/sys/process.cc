// The only translation unit that includes Boost.Process.
#include "sys/process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <csignal>
#include <cstdio>
#include <thread>

#include "base/files.h"

namespace bp = boost::process;
namespace fs = std::filesystem;

namespace isolab {

namespace {

// Fixed-size, lock-free registry of live process groups so that a signal handler can kill
// them without allocating or locking.
constexpr std::size_t kMaxGroups = 256;
std::array<std::atomic<pid_t>, kMaxGroups> g_groups{};

void register_group(pid_t pgid) {
  for (auto& slot : g_groups) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pgid)) return;
  }
}
// The first interrupting signal (install_interrupt_handlers); 0 while none arrived.
volatile std::sig_atomic_t g_interrupt_signal = 0;

void unregister_group(pid_t pgid) {
  for (auto& slot : g_groups) {
    pid_t expected = pgid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

// Puts the child into a new process group before exec, so that killpg() reaches every
// descendant (make's compiler jobs, QEMU's helpers).
struct NewProcessGroup : bp::extend::handler {
  template <typename Exec>
  void on_exec_setup(Exec&) const {
    ::setpgid(0, 0);
    // If isolab dies without cleaning up (kill -9), the kernel kills the child too, so no
    // QEMU or make is left behind.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // Undo our SIGINT/SIGTERM handlers in the child, and the SIGPIPE that libvirt clients
    // ignore (vm/libvirt_host.cc): an ignored signal stays ignored across exec.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
  }
};

fs::path make_temp_path(const char* tag) {
  static std::atomic<unsigned> counter{0};
  return fs::temp_directory_path() /
         ("isolab-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + tag);
}

class RealProcess : public Process {
 public:
  RealProcess(const ProcessSpec& spec) : spec_(spec), start_(std::chrono::steady_clock::now()) {
    out_path_ = spec.stdout_path.empty() ? make_temp_path("out") : spec.stdout_path;
    capture_out_ = spec.stdout_path.empty();
    if (spec.stderr_to_stdout) {
      err_path_ = out_path_;
    } else {
      err_path_ = spec.stderr_path.empty() ? make_temp_path("err") : spec.stderr_path;
      capture_err_ = spec.stderr_path.empty();
    }
    if (g_interrupt_signal != 0) {
      result_.start_error = "interrupted by signal " + std::to_string(g_interrupt_signal);
      done_ = true;
      return;
    }
    if (spec.argv.empty()) {
      result_.start_error = "empty argv";
      done_ = true;
      return;
    }
    std::error_code ec;
    for (const auto& p : {out_path_, err_path_})
      if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);

    bp::environment env = boost::this_process::environment();
    for (const auto& [k, v] : spec.env) env[k] = v;
    boost::filesystem::path exe = spec.argv[0];
    if (spec.argv[0].find('/') == std::string::npos) {
      exe = bp::search_path(spec.argv[0]);
      if (exe.empty()) {
        result_.start_error = "program not found in PATH: " + spec.argv[0];
        done_ = true;
        return;
      }
    }
    std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
    std::string cwd = spec.cwd.empty() ? fs::current_path().string() : spec.cwd.string();
    // Open the sinks ourselves so that append mode and stderr merging are explicit.
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (spec.append ? O_APPEND : O_TRUNC);
    int out_fd = ::open(out_path_.c_str(), flags, 0644);
    int err_fd = spec.stderr_to_stdout ? out_fd : ::open(err_path_.c_str(), flags, 0644);
    if (out_fd < 0 || err_fd < 0) {
      result_.start_error = "cannot open output file " + out_path_.string();
      if (out_fd >= 0) ::close(out_fd);
      done_ = true;
      return;
    }
    FILE* out_f = ::fdopen(out_fd, spec.append ? "a" : "w");
    FILE* err_f = spec.stderr_to_stdout ? out_f : ::fdopen(err_fd, spec.append ? "a" : "w");
    try {
      child_ = bp::child(exe, bp::args(args), bp::start_dir(cwd), env,
                         bp::std_in<bp::null, bp::std_out> out_f, bp::std_err > err_f,
                         NewProcessGroup{});
      pgid_ = child_.id();
      // The child calls setpgid itself; do it here too so there is no window in which a
      // signal to the group misses it.
      ::setpgid(pgid_, pgid_);
      register_group(pgid_);
      // A signal between fork and registration would have missed this group.
      if (g_interrupt_signal != 0) ::killpg(pgid_, SIGKILL);
    } catch (const std::exception& e) {
      result_.start_error = e.what();
      done_ = true;
    }
    std::fclose(out_f);
    if (err_f != out_f) std::fclose(err_f);
  }

  ~RealProcess() override {
    if (!done_) RealProcess::terminate(std::chrono::milliseconds(500));  // no virtual dispatch
    cleanup_temp();
  }

  int pid() const override { return pgid_; }

  std::optional<ProcessResult> wait_for(std::chrono::milliseconds d) override {
    if (done_) return result_;
    auto deadline = std::chrono::steady_clock::now() + d;
    for (;;) {
      if (poll()) return result_;
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  ProcessResult terminate(std::chrono::milliseconds grace) override {
    if (done_) return result_;
    ::killpg(pgid_, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + grace;
    while (std::chrono::steady_clock::now() < deadline) {
      if (poll()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // Kill the whole group even if the leader has exited: its descendants may live on.
    ::killpg(pgid_, SIGKILL);
    if (!done_) {
      int status = 0;
      ::waitpid(pgid_, &status, 0);
      finish(status);
    }
    return result_;
  }

  void mark_timed_out() { result_.timed_out = true; }

 private:
  bool poll() {
    if (done_) return true;
    int status = 0;
    pid_t r = ::waitpid(pgid_, &status, WNOHANG);
    if (r == 0) return false;
    if (r < 0) status = 0;
    finish(status);
    return true;
  }

  void finish(int status) {
    done_ = true;
    child_.detach();
    unregister_group(pgid_);
    // Reap stragglers left in the group (a daemonized grandchild, a QEMU helper).
    ::killpg(pgid_, SIGKILL);
    if (WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result_.term_signal = WTERMSIG(status);
    result_.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (capture_out_) result_.out = read_capped(out_path_);
    if (capture_err_) result_.err = read_capped(err_path_);
    cleanup_temp();
  }

  std::string read_capped(const fs::path& p) {
    try {
      return read_file(p, spec_.capture_limit);
    } catch (const std::exception&) {
      return {};
    }
  }

  void cleanup_temp() {
    std::error_code ec;
    if (capture_out_) fs::remove(out_path_, ec);
    if (capture_err_) fs::remove(err_path_, ec);
  }

  ProcessSpec spec_;
  std::chrono::steady_clock::time_point start_;
  fs::path out_path_, err_path_;
  bool capture_out_ = false, capture_err_ = false;
  bp::child child_;
  pid_t pgid_ = -1;
  bool done_ = false;
  ProcessResult result_;
};

class RealRunner : public ProcessRunner {
 public:
  ProcessResult run(const ProcessSpec& spec) override {
    RealProcess p(spec);
    if (spec.timeout.count() > 0) {
      if (auto r = p.wait_for(spec.timeout)) return *r;
      p.mark_timed_out();
      return p.terminate(std::chrono::seconds(2));
    }
    return *p.wait_for(std::chrono::hours(24 * 365));
  }
  std::unique_ptr<Process> start(const ProcessSpec& spec) override {
    return std::make_unique<RealProcess>(spec);
  }
};

extern "C" void teardown_signal_handler(int sig) {
  kill_all_children();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

extern "C" void interrupt_signal_handler(int sig) {
  if (g_interrupt_signal != 0) {  // second signal: give up on an orderly end
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  g_interrupt_signal = sig;
  kill_all_children();
}

}  // namespace

std::string ProcessResult::describe() const {
  if (!start_error.empty()) return "failed to start: " + start_error;
  if (timed_out) return "timed out after " + std::to_string(static_cast<long>(wall_seconds)) + " s";
  if (term_signal != 0) return "killed by signal " + std::to_string(term_signal);
  return "exited " + std::to_string(exit_code);
}

std::unique_ptr<ProcessRunner> make_real_runner() { return std::make_unique<RealRunner>(); }

void kill_all_children() {
  for (auto& slot : g_groups) {
    pid_t pg = slot.load();
    if (pg > 0) ::killpg(pg, SIGKILL);
  }
}

void install_teardown_handlers() {
  struct sigaction sa {};
  sa.sa_handler = teardown_signal_handler;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
}

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = interrupt_signal_handler;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

bool interrupt_requested() { return g_interrupt_signal != 0; }

int interrupt_signal() { return g_interrupt_signal; }

std::string argv_to_display(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`;&|<>()*?[]{}!#~") == std::string::npos;
    if (plain) {
      s += a;
    } else {
      s += '\'';
      for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
      s += '\'';
    }
  }
  return s;
}

}  // namespace isolab
