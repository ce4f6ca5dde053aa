// Classifier for a guest's kernel console log (serial ttyS0 captured by QEMU/libvirt).
//
// The log is untrusted: it may hold binary junk, NUL bytes, escape sequences, lines of any
// length and interleaved userspace output. The classifier works in bounded memory and linear
// time: only the first 4096 bytes of each line are examined (the kernel's printk records are
// at most 1024 bytes), at most 64 findings are kept (the rest only counted), and excerpts are
// sanitized (base/files.h sanitize_excerpt) and cut.
//
// Recognised kernel messages (format strings from linux 6.1; a "[ t.tttttt] " timestamp or
// "<N>" level prefix may precede them):
//   panic      "Kernel panic - not syncing: ..."                       (kernel/panic.c panic())
//   oops       "Oops: ...", "BUG: ..." (other than the lockups below), "kernel BUG at file:line!",
//              "general protection fault" (arch/x86/kernel/dumpstack.c, traps.c, lib/bug.c)
//   warning    "WARNING: CPU: N PID: P at file:line func" (kernel/panic.c __warn()) and other
//              "WARNING: " reports (lockdep, ...)
//   rcu_stall  "rcu: INFO: rcu_sched self-detected stall on CPU", "rcu: INFO: rcu_preempt
//              detected stalls on CPUs/tasks:" (kernel/rcu/tree_stall.h)
//   lockup     "watchdog: BUG: soft lockup - CPU#N stuck for Ns!" (kind "soft lockup"),
//              "Watchdog detected hard LOCKUP on cpu N" (kind "hard lockup"),
//              "BUG: workqueue lockup" (kind "workqueue lockup") (kernel/watchdog*.c,
//              kernel/workqueue.c)
//   hung_task  "INFO: task NAME:PID blocked for more than N seconds." (kernel/hung_task.c);
//              not fatal
// Every class except hung_task is fatal; the FIRST fatal finding in the log decides (a panic
// usually follows the oops that caused it). With -no-reboot QEMU exits 0 (docs/sources.md [o3])
// after a panic, so the cell verdict must come from here.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

struct ConsoleFinding {
  std::string klass;  // failure class: "panic" | "oops" | "warning" | "rcu_stall" | "lockup" |
                      // "hung_task" (the names of result.json cells[].failure_class)
  std::string kind;   // finer: "Kernel panic", "Oops", "BUG", "kernel BUG",
                      // "general protection fault", "WARNING", "RCU stall", "soft lockup",
                      // "hard lockup", "workqueue lockup", "hung task"
  bool fatal = true;
  std::size_t line = 0;  // 1-based line number in the log
  std::string summary;   // the matching line, timestamp removed, sanitized, at most 300 bytes
  std::string location;  // WARNING/kernel BUG: "file:line" when printed, else ""
  std::string excerpt;   // up to 3 lines before and 8 after (each cut to 200 bytes), sanitized
  // RCU stall only: the "rcu_<flavor> kthread starved for N jiffies! ... ->state=0x0" line that
  // followed it within 64 lines (sanitized), else "". State 0x0 is TASK_RUNNING: the
  // grace-period kthread was runnable and got no CPU for N jiffies, which the kernel reports as
  // starvation (kernel/rcu/tree_stall.h, rcu_check_gp_kthread_starvation; the stalled CPUs'
  // lines then say "(false positive?)" when they were idle). In a guest that is what a host that
  // does not run the vCPUs looks like (an overloaded TCG host); see pipeline/cell_classify.h.
  std::string gp_kthread_starved;
};

struct ConsoleReport {
  std::vector<ConsoleFinding> findings;  // in log order, at most 64
  std::size_t findings_total = 0;        // including those beyond the 64 kept
  std::optional<ConsoleFinding> fatal;   // the first fatal finding, if any
  std::size_t lines = 0;
  std::size_t bytes = 0;
  std::size_t long_lines = 0;  // lines longer than 4096 bytes (examined in part)
};

// Incremental form for logs read in chunks; classify_console() and classify_console_file() use it.
class ConsoleClassifier {
 public:
  ConsoleClassifier();
  void feed(std::string_view chunk);
  ConsoleReport finish();  // classifies a last line without "\n"; call once

 private:
  struct Pending {
    std::vector<ConsoleFinding*> targets;  // the kept finding and/or report_.fatal
    int lines_after = 0;
  };
  void end_line();
  void add_finding(ConsoleFinding f);

  ConsoleReport report_;
  std::string line_;                 // first 4096 bytes of the current line
  std::size_t line_len_ = 0;         // its full length
  std::vector<std::string> before_;  // the last 3 lines (cut), oldest first
  std::vector<Pending> pending_;     // findings still collecting lines after them
  // The last RCU stall: its line, its index in report_.findings (-1: not kept), and whether it
  // is report_.fatal; for ConsoleFinding::gp_kthread_starved.
  std::size_t rcu_stall_line_ = 0;
  long rcu_stall_index_ = -1;
  bool rcu_stall_is_fatal_ = false;
  void note_gp_kthread_starvation(std::string_view msg, const std::string& cut);
};

// Classifies a whole log held in memory.
ConsoleReport classify_console(std::string_view log);

// Classifies a log file in 1 MiB chunks (bounded memory for any size). Throws isolab::Error
// naming the path when it cannot be read.
ConsoleReport classify_console_file(const std::filesystem::path& path);

// {"fatal": finding|null, "findings": [finding...], "findings_total": n, "lines": n,
//  "bytes": n, "long_lines": n}; finding = {"class", "kind", "fatal", "line", "summary",
//  "location", "excerpt"}.
nlohmann::json console_report_to_json(const ConsoleReport& report);

// The byte memory held where the vCPU trapped in the first "int3: 0000 [#N]" oops of log: the
// byte before the "<..>" mark of the oops's "Code:" line (the kernel prints RIP's
// neighbourhood from memory, and after an int3 trap RIP points past the int3). Two lowercase hex
// digits, e.g. "e8"; nullopt when the log has no such oops or its Code: line within 40 lines
// cannot be read. A value other than "cc" means the CPU executed an int3 that memory did not
// hold when the oops was printed (arch/x86/kernel/dumpstack.c show_opcodes() for the format).
std::optional<std::string> int3_trap_byte(std::string_view log);

}  // namespace isolab
