#include "base/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace isolab {

std::optional<double> eta_seconds(double elapsed_s, double done, double done_at_start,
                                  std::optional<double> total) {
  const double worked = done - done_at_start;
  if (!total || worked <= 0 || elapsed_s <= 0 || done >= *total) return std::nullopt;
  return elapsed_s / worked * (*total - done);
}

std::optional<double> median_unit_eta(const std::vector<double>& unit_seconds, double done,
                                      std::optional<double> total) {
  if (unit_seconds.empty() || !total || done >= *total) return std::nullopt;
  std::vector<double> v = unit_seconds;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double median = v[mid];
  if (v.size() % 2 == 0) median = (median + *std::max_element(v.begin(), v.begin() + mid)) / 2;
  return median * (*total - done);
}

std::optional<double> Progress::task_eta(Task& tk, double t, double done,
                                         std::optional<double> total, bool force) {
  if (!force) return eta_seconds(t - tk.started, done, tk.done_at_start, total);
  const double units = std::round(done - tk.last_forced_done);
  if (units >= 1 && units <= 1000)
    for (int i = 0; i < static_cast<int>(units); ++i)
      tk.unit_seconds.push_back((t - tk.last_forced_t) / units);
  tk.last_forced_t = t;
  tk.last_forced_done = done;
  return median_unit_eta(tk.unit_seconds, done, total);
}

std::string format_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[48];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%ld s", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, (s % 3600) / 60);
  return buf;
}

Progress::Progress(ProgressMode mode, std::ostream& out, Clock now, double plain_interval_s,
                   double tty_interval_s)
    : mode_(mode),
      out_(out),
      now_(std::move(now)),
      plain_interval_(plain_interval_s),
      tty_interval_(tty_interval_s) {}

Progress::~Progress() { clear_status(); }

void Progress::clear_status() {
  if (mode_ != ProgressMode::tty || status_.empty()) return;
  out_ << "\r\x1b[K" << std::flush;
  status_.clear();
}

void Progress::message(const std::string& text) {
  switch (mode_) {
    case ProgressMode::quiet:
      return;
    case ProgressMode::json:
      out_ << nlohmann::json{{"event", "message"}, {"text", text}}.dump(
                  -1, ' ', false, nlohmann::json::error_handler_t::replace)
           << "\n"
           << std::flush;
      return;
    case ProgressMode::tty: {
      std::string status = status_;
      clear_status();
      out_ << "isolab: " << text << "\n";
      if (!status.empty()) out_ << status;
      status_ = status;
      out_ << std::flush;
      return;
    }
    case ProgressMode::plain:
      out_ << "isolab: " << text << "\n" << std::flush;
      return;
  }
}

std::string Progress::line_text(const std::string& task, double done, std::optional<double> total,
                                const std::string& unit, double elapsed_s,
                                std::optional<double> eta_s) {
  char num[64];
  std::string s = task + ": ";
  if (total && *total > 0) {
    // Past the estimate a task shows 99%, not 100% or more: the estimate can be short.
    const double pct = done == *total ? 100.0 : std::min(99.0, std::floor(100.0 * done / *total));
    std::snprintf(num, sizeof num, "%.0f/%.0f %s (%.0f%%)", done, *total, unit.c_str(), pct);
  } else {
    std::snprintf(num, sizeof num, "%.0f %s", done, unit.c_str());
  }
  s += num;
  s += ", " + format_duration(elapsed_s);
  if (eta_s) s += ", ETA " + format_duration(*eta_s);
  return s;
}

void Progress::write_json(const std::string& task, double done, std::optional<double> total,
                          const std::string& unit, double elapsed, std::optional<double> eta) {
  auto round1 = [](double v) { return std::round(v * 10) / 10; };
  nlohmann::json j{{"event", "progress"},
                   {"task", task},
                   {"done", done},
                   {"unit", unit},
                   {"elapsed_s", round1(elapsed)}};
  if (total) {
    j["total"] = *total;
    if (*total > 0)
      j["percent"] = done == *total ? 100.0 : round1(std::min(99.9, 100.0 * done / *total));
  }
  if (eta) j["eta_s"] = round1(*eta);
  out_ << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
}

bool Progress::update(const std::string& task, double done, std::optional<double> total,
                      const std::string& unit, bool force) {
  if (mode_ == ProgressMode::quiet) return false;
  const double t = now_();
  auto [it, fresh] = tasks_.try_emplace(task);
  Task& tk = it->second;
  if (fresh) {
    tk.started = tk.last_forced_t = t;
    tk.done_at_start = tk.last_forced_done = done;
  }
  const auto eta = task_eta(tk, t, done, total, force);
  const double interval = mode_ == ProgressMode::tty ? tty_interval_ : plain_interval_;
  if (!force && tk.last_shown && t - *tk.last_shown < interval) return false;
  tk.last_shown = t;
  const double elapsed = t - tk.started;
  if (mode_ == ProgressMode::json) {
    write_json(task, done, total, unit, elapsed, eta);
  } else if (mode_ == ProgressMode::plain) {
    out_ << "isolab: " << line_text(task, done, total, unit, elapsed, eta) << "\n" << std::flush;
  } else {
    status_ = "isolab: " + line_text(task, done, total, unit, elapsed, eta);
    out_ << "\r\x1b[K" << status_ << std::flush;
  }
  return true;
}

void Progress::finish(const std::string& task) {
  tasks_.erase(task);
  clear_status();
}

ProgressMode progress_mode(const std::string& format, bool quiet, int fd) {
  if (quiet) return ProgressMode::quiet;
  if (format == "json") return ProgressMode::json;
  return ::isatty(fd) ? ProgressMode::tty : ProgressMode::plain;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double monotonic_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace isolab
