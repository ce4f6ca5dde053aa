// The sysctls that bear on CPU isolation, each with why, and where a dump holds their values.
//
// The table (isolation_sysctls()): vm.stat_interval, vm.numa_stat, kernel.timer_migration,
// kernel.sched_rt_runtime_us, kernel.sched_rt_period_us, kernel.nmi_watchdog,
// kernel.soft_watchdog, kernel.watchdog*, kernel.hung_task_timeout_secs,
// kernel.numa_balancing. Their values come from `sysctl -a` output ("name = value" lines, as
// procps prints them; sos_commands/kernel/sysctl_-a), from /proc/sys files (the name's dots
// as slashes), or from a TuneD profile's [sysctl] section (what TuneD sets).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace isolab {

struct IsolationSysctl {
  std::string_view name;  // a name, or a prefix when it ends in '*'
  std::string_view why;
};
const std::vector<IsolationSysctl>& isolation_sysctls();
// The table's row for `name`, or nullptr when it does not bear on isolation.
const IsolationSysctl* isolation_sysctl(std::string_view name);

// The names of the table without a '*', as /proc/sys paths ("vm/stat_interval").
std::vector<std::pair<std::string, std::string>> sysctl_proc_paths();

struct SysctlLine {
  std::string name, value;
  size_t line = 0;
};
// The rows of `sysctl -a` output whose name is in the table, in order. Lines that are not
// "name = value" (procps's own "sysctl: permission denied on key ..." messages) are skipped.
std::vector<SysctlLine> parse_sysctl_a(std::string_view text);

}  // namespace isolab
