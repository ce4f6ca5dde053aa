// The /init fragment that sets the customer's runtime settings (machine/runtime_settings.h) in
// the guest before any workload, as TuneD sets them on the customer's machine, and reports what
// each write left behind. Pure.
//
// What it does, in this order:
//  - each sysctl: when /proc/sys/<name, '.' as '/'> does not exist, says so on the console
//    ("isolab: setup: sysctl N: /proc/sys/... does not exist in this kernel") and sets $skip, so
//    that no step runs in a guest without the customer's setting (the cell is then invalid:
//    pipeline/guest_setup.h); else writes the value and reads it back;
//  - with housekeeping CPUs: writes their hex mask to /sys/devices/virtual/workqueue/cpumask and
//    /proc/irq/default_smp_affinity, their list to every /proc/irq/<n>/smp_affinity_list (a
//    managed or per-CPU IRQ refuses: its status is not 0), and moves every kernel thread (an
//    empty /proc/<pid>/cmdline) there with taskset (a per-CPU kernel thread refuses).
// Record "runtime", one tab-separated line per write (gate/runtime_check.h parses it):
//   sysctl <name> <status> <value read back>        status "missing" or the write's exit status
//   workqueue_cpumask <status> <value read back>
//   default_smp_affinity <status> <value read back>
//   irq <n> <status> <smp_affinity_list read back>
//   kthread <pid> <status> <comm> <Cpus_allowed_list read back>
// Tabs and newlines inside a value read back are written as spaces.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace isolab {

struct GuestRuntime {
  // Names [a-z0-9_]+(.[A-Za-z0-9_-]+)+; values [A-Za-z0-9 _.,:+=-]{1,100}.
  std::vector<std::pair<std::string, std::string>> sysctls;
  std::string housekeeping;       // canonical cpulist; "" = nothing moved
  std::string housekeeping_mask;  // the same CPUs as the kernel's hex mask ("%*pb")
  bool empty() const { return sysctls.empty() && housekeeping.empty(); }
};

// The fragment ("" for an empty GuestRuntime). Throws isolab::Error for a name, value, list
// or mask outside its allowed characters.
std::string render_runtime_settings(const GuestRuntime& r);

}  // namespace isolab
