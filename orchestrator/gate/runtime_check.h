// The gate's rows for the customer's runtime settings (machine/runtime_settings.h): what the
// guest's /init wrote and read back (record "runtime", guest/runtime_script.h) against what was
// asked. A guest that did not take a setting fails the gate. Pure.
//
// Rows, in this order, each only when asked:
//  - "sysctl <name>": expected the value, effective the value read back ("(no such file)" when
//    the kernel lacks it, the detail naming the /proc/sys path as a setup failure; "(not
//    reported)" when the record has no line); passes when equal
//    (blank runs as one space). A write that failed on a file that already holds the value
//    (a read-only sysctl such as kernel.nmi_watchdog without CONFIG_HARDLOCKUP_DETECTOR) passes,
//    and the detail names the exit status.
//  - "runtime workqueue cpumask", "runtime irq default affinity": expected the housekeeping CPUs;
//    effective the mask read back as a list; pass when equal.
//  - "runtime irq affinity": every IRQ whose write succeeded reads back inside the housekeeping
//    CPUs (fail otherwise, naming them); IRQs that refused (managed or per-CPU IRQs, which the
//    kernel places itself) are named in the detail and make the row a warning.
//  - "runtime kthreads": every kernel thread whose move succeeded reads back inside the
//    housekeeping CPUs (fail otherwise); those that refused are per-CPU threads (a count).
// No record although settings were asked: one failing row "runtime settings".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmdline/cpulist.h"
#include "gate/gate_row.h"

namespace isolab {

// What the guest was asked to set (in guest numbering).
struct ExpectedRuntime {
  std::vector<std::pair<std::string, std::string>> sysctls;
  std::optional<CpuSet> housekeeping;
  bool empty() const { return sysctls.empty() && !housekeeping; }
};

// One line of record "runtime".
struct RuntimeLine {
  std::string kind;    // "sysctl", "workqueue_cpumask", "default_smp_affinity", "irq", "kthread"
  std::string name;    // the sysctl's name, the IRQ number, the kthread's "pid comm"; "" else
  std::string status;  // "0", another exit status, or "missing"
  std::string value;   // read back, blank runs as one space, trimmed
};

// Parses the record. Throws isolab::Error "runtime line N: ..." quoting a line with too few
// fields or an unknown kind.
std::vector<RuntimeLine> parse_runtime_record(std::string_view text);

// The sysctls whose file the guest kernel lacks ("missing" lines), in record order.
std::vector<std::string> missing_sysctls(const std::vector<RuntimeLine>& lines);

// Appends the rows above. record: the record's text, nullptr when the guest sent none.
// nbits: the guest's CPU count (masks and lists read back are parsed with it).
void check_runtime(const ExpectedRuntime& e, const std::string* record, unsigned nbits,
                   std::vector<GateRow>& rows);

}  // namespace isolab
