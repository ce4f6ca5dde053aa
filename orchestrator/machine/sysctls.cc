#include "machine/sysctls.h"

#include "base/text.h"

namespace isolab {

const std::vector<IsolationSysctl>& isolation_sysctls() {
  static const std::vector<IsolationSysctl> table = {
      {"vm.stat_interval", "period of vmstat_update, which wakes every CPU that dirtied counters"},
      {"vm.numa_stat", "NUMA counters updated on every page allocation"},
      {"kernel.timer_migration", "whether timers move from idle CPUs to busy ones"},
      {"kernel.sched_rt_runtime_us", "RT throttling: what an RT task may take of each period"},
      {"kernel.sched_rt_period_us", "the RT throttling period"},
      {"kernel.nmi_watchdog", "the hard-lockup detector's perf NMI on every CPU"},
      {"kernel.soft_watchdog", "the soft-lockup detector's per-CPU timer and thread"},
      {"kernel.watchdog*", "the lockup detectors and the CPUs they run on"},
      {"kernel.hung_task_timeout_secs", "khungtaskd's scan period"},
      {"kernel.numa_balancing", "NUMA hinting faults and task migration"},
  };
  return table;
}

const IsolationSysctl* isolation_sysctl(std::string_view name) {
  for (const IsolationSysctl& s : isolation_sysctls()) {
    const bool prefix = !s.name.empty() && s.name.back() == '*';
    const std::string_view stem = prefix ? s.name.substr(0, s.name.size() - 1) : s.name;
    if (prefix ? name.rfind(stem, 0) == 0 : name == stem) return &s;
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> sysctl_proc_paths() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const IsolationSysctl& s : isolation_sysctls()) {
    if (s.name.back() == '*') {
      out.emplace_back("kernel.watchdog", "kernel/watchdog");
      out.emplace_back("kernel.watchdog_thresh", "kernel/watchdog_thresh");
      out.emplace_back("kernel.watchdog_cpumask", "kernel/watchdog_cpumask");
      continue;
    }
    std::string path(s.name);
    for (char& c : path)
      if (c == '.') c = '/';
    out.emplace_back(std::string(s.name), path);
  }
  return out;
}

std::vector<SysctlLine> parse_sysctl_a(std::string_view text) {
  std::vector<SysctlLine> out;
  size_t n = 0;
  for (std::string_view l : text_lines(text)) {
    ++n;
    const size_t eq = l.find(" = ");
    if (eq == std::string_view::npos) continue;
    const std::string_view name = trim_space(l.substr(0, eq));
    if (!isolation_sysctl(name)) continue;
    out.push_back({std::string(name), std::string(trim_space(l.substr(eq + 3))), n});
  }
  return out;
}

}  // namespace isolab
