// Progress of long steps (kernel builds, cells) for `isolab run`, on stderr.
//
// Three renderings (ProgressMode):
// - tty: one status line redrawn in place ("\r" + erase-line, ESC [K) at most every
//   tty_interval_s; messages are printed above it.
// - plain (stderr is not a terminal): one line per update, at most one per plain_interval_s
//   for a task (default 8 s: a poll of a command and its measure add up to 2 s, and a long step
//   must show a line at least every 10 s), plus every message;
// - json: one JSON object per line for CI systems, with the same throttling as plain:
//     {"event":"message","text":"..."}
//     {"event":"progress","task":"build vanilla","done":812,"total":2410,"unit":"objects",
//      "percent":33.7,"elapsed_s":95.2,"eta_s":187.1}
//   "total", "percent" and "eta_s" are absent when unknown.
// - quiet: nothing at all.
// Time comes from an injected clock (seconds, monotonic), so throttling and ETA are testable.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace isolab {

enum class ProgressMode { quiet, tty, plain, json };

// The estimated seconds left when `done` of `total` units took `elapsed_s` since the task
// started at `done_at_start` units (a resumed run starts above 0): elapsed / work done so far
// times the work left. nullopt when nothing was done yet, total is unknown, or done >= total.
std::optional<double> eta_seconds(double elapsed_s, double done, double done_at_start,
                                  std::optional<double> total);

// The estimated seconds left for a task done in units of their own (cells): the median of the
// seconds each finished unit took, times the units left. The median, not elapsed / done: one
// slow or fast cell (a retried boot, a one-off stall) does not move it. It cannot foresee a
// change of the host's load, which moves the seconds per cell on a shared host
// (docs/measurements.md).
// nullopt without a finished unit, an unknown total, or done >= total.
std::optional<double> median_unit_eta(const std::vector<double>& unit_seconds, double done,
                                      std::optional<double> total);

// "42 s", "3 min 05 s", "1 h 02 min".
std::string format_duration(double seconds);

class Progress {
 public:
  using Clock = std::function<double()>;  // monotonic seconds
  // `out` must outlive the object (normally std::cerr).
  Progress(ProgressMode mode, std::ostream& out, Clock now, double plain_interval_s = 8.0,
           double tty_interval_s = 0.25);
  ~Progress();

  // An event worth a line of its own ("variant vanilla: cache hit ..."). Never throttled.
  void message(const std::string& text);

  // The task `task` has done `done` of `total` (nullopt: unknown) `unit`s. The first update of
  // a task starts its clock. Shown when the task's last line is at least the interval old, or
  // when `force` (a unit finished: a cell). Forced updates time the units between them, and
  // such a task's ETA is median_unit_eta(); other tasks' is eta_seconds(). Returns whether a
  // line was written.
  bool update(const std::string& task, double done, std::optional<double> total,
              const std::string& unit, bool force = false);

  // The task is over: a tty status line is erased; the task's clock is forgotten.
  void finish(const std::string& task);

  // The text of an update line (the percentage is floored, 100 only at done == total, at most
  // 99 past the total): "build vanilla: 812/2410 objects (33%), 1 min 35 s, ETA 3 min
  // 07 s"; without total: "build vanilla: 812 objects, 1 min 35 s".
  static std::string line_text(const std::string& task, double done, std::optional<double> total,
                               const std::string& unit, double elapsed_s,
                               std::optional<double> eta_s);

 private:
  struct Task {
    double started = 0, done_at_start = 0;
    std::optional<double> last_shown;
    double last_forced_t = 0, last_forced_done = 0;  // the previous forced update
    std::vector<double> unit_seconds;                // one per unit finished between them
  };
  std::optional<double> task_eta(Task& tk, double t, double done, std::optional<double> total,
                                 bool force);
  void clear_status();
  void write_json(const std::string& task, double done, std::optional<double> total,
                  const std::string& unit, double elapsed, std::optional<double> eta);

  ProgressMode mode_;
  std::ostream& out_;
  Clock now_;
  double plain_interval_, tty_interval_;
  std::map<std::string, Task> tasks_;
  std::string status_;  // tty: the status line on screen, "" when none
};

// The mode for `--progress` (text|json) and `--quiet` when writing to file descriptor `fd`:
// quiet wins; json is json; text is tty when isatty(fd), else plain.
ProgressMode progress_mode(const std::string& format, bool quiet, int fd);

// A monotonic clock in seconds (steady_clock), for Progress.
double monotonic_seconds();

// Seconds of steady_clock from t0 to now.
double seconds_since(std::chrono::steady_clock::time_point t0);

}  // namespace isolab
