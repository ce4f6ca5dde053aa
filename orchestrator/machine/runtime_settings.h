// What the customer's machine sets at run time, after boot, that bears on isolation: what the
// guest's /init sets again before any workload (guest/runtime_script.h) and the isolation gate
// reads back (gate/runtime_check.h). Pure.
//
// The rules, from what the dump shows:
//  - sysctls: every sysctl of MachineFacts::sysctls (machine/sysctls.h: the ones that bear on
//    isolation), with the value the dump holds (sysctl -a, /proc/sys, or the TuneD profile's
//    [sysctl] section, which TuneD writes). A value /init cannot write as a shell word (outside
//    [A-Za-z0-9 _.,:+=-], or longer than 100 characters) is left out, with why.
//  - housekeeping moves, when TuneD isolates CPUs (a TuneD `isolated_cores` or
//    `no_balance_cores`, or a PerformanceProfile's spec.cpu.isolated, which the Node Tuning
//    Operator renders into a TuneD profile that includes cpu-partitioning: MachineFacts'
//    evidence.tuned_isolated): the housekeeping CPUs (MachineFacts::housekeeping) become
//      the workqueue cpumask (TuneD profiles/cpu-partitioning/tuned.conf, [sysfs]
//        /sys/devices/virtual/workqueue/cpumask = ${not_isolated_cpumask}),
//      /proc/irq/default_smp_affinity and every IRQ's smp_affinity_list (TuneD
//        tuned/plugins/plugin_scheduler.py: isolated_cores with irq_process (default true) moves
//        every IRQ it can off the isolated CPUs; default_irq_smp_affinity=calc writes the
//        non-isolated CPUs),
//      and the CPUs of every kernel thread that can move (the same plugin sets the affinity of
//        every process its ps_blacklist does not name; per-CPU kernel threads refuse).
//    No TuneD isolation: nothing is moved (housekeeping nullopt) and `not_moved_why` says so.
// CPU sets are in the customer's numbering (GuestShape::to_guest turns them into the guest's).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cmdline/cpulist.h"
#include "machine/facts.h"

namespace isolab {

struct RuntimeSettings {
  std::vector<std::pair<std::string, std::string>> sysctls;   // name, value; in name order
  std::vector<std::pair<std::string, std::string>> left_out;  // sysctl name, why
  std::optional<CpuSet> housekeeping;  // what TuneD moves everything movable to
  std::string moved_by;       // "TuneD isolated_cores=1 (nodes/n/...)" when housekeeping is set
  std::string not_moved_why;  // when housekeeping is nullopt
};

RuntimeSettings runtime_settings(const MachineFacts& m);

}  // namespace isolab
