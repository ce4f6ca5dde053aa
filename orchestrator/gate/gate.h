// The in-guest isolation gate: did the guest kernel really apply the requested isolation?
//
// Contract:
//  parse_guest_facts() reads the raw records the guest init sends (values are raw file
//  contents, untrusted). It never throws for bad content: every record that is missing where
//  required, too large (> kMaxRecordBytes) or unparsable is listed in GuestFacts::problems as
//  "<key>: <what>", and the gate fails on it. Keys:
//    cmdline (/proc/cmdline), uname_r, cpu_online, cpu_possible (/sys/devices/system/cpu/...),
//    isolated, nohz_full (absent when the sysfs file does not exist), dmesg, irq_affinity
//    (lines "<irq> <effective_affinity_list>"), default_smp_affinity (hex mask),
//    workqueue_cpumask (hex mask, may be absent), interrupts_before / interrupts_after
//    (/proc/interrupts around the busy window), busy_window_s (decimal seconds).
//  parse_proc_interrupts() reads /proc/interrupts (kernel/irq/proc.c show_interrupts() and
//  arch_show_interrupts()), case N2: a header of "CPU<n>" columns (online CPUs only, so
//  "CPU9 CPU20" maps columns by name), then rows "<name>:<count per column>... <description>";
//  the name ends at the first ':' (arm64 "IPI0:2768808080 ..." has no space after it; device
//  names in the description may hold colons and spaces). Counts are read as 64-bit (the kernel
//  prints unsigned int, which wraps at 2^32: a delta must allow for that). A row with a single
//  count (x86 ERR/MIS, arm64 Err, whatever the CPU count) is system-wide: InterruptRow::total,
//  no per-CPU counts. Rows with another number of counts, no name or a name with spaces are
//  malformed: skipped and counted. There may be no LOC row (arm64: the local timer is the
//  arch_timer IRQ row). It throws isolab::Error (naming the line) when the first non-blank line
//  is not a header of distinct CPU columns.
//  evaluate_gate() is pure. Its rows, one per check in this order (a check with nothing to
//  say adds no row): guest records (only with problems), cmdline, online CPUs, isolated,
//  nohz_full, CONFIG_NO_HZ_FULL (only after "Housekeeping: nohz unsupported"), RCU offload,
//  irq default affinity, irq effective affinity, workqueue cpumask, dmesg isolation messages,
//  tick stopped, clock. GateReport::reason names the first three failed rows. The tick check: for
//  each nohz_full CPU the LOC ("Local timer interrupts") delta over the busy window, in interrupts
//  per second; the tick counts as stopped when the rate is <= kTickStoppedMaxPerSecond (10/s: a
//  tenth of the lowest CONFIG_HZ, 100, so it holds whatever HZ the guest has; the housekeeping
//  CPUs' rate is reported beside it as the reference for the running tick). Per case O6 a clock
//  message (TSC unstable, sched_clock unstable) is recorded but fails the gate only when the tick
//  did not stop. IRQs whose effective affinity lands on an isolated CPU give a warning row (they
//  may be managed or per-CPU queue IRQs, which the kernel places there on purpose), not a failure.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmdline/analyze.h"
#include "cmdline/cpulist.h"

namespace isolab {

inline constexpr size_t kMaxRecordBytes = size_t{32} << 20;
inline constexpr double kTickStoppedMaxPerSecond = 10.0;
inline constexpr double kMinBusyWindowS = 1.0;

struct InterruptRow {
  std::string name;                     // "LOC", "0", "24"
  std::map<unsigned, uint64_t> counts;  // CPU -> count (only the columns present)
  std::optional<uint64_t> total;        // system-wide rows (ERR, MIS, Err): their one count
  std::string description;              // "Local timer interrupts", "IO-APIC 2-edge timer"
};

struct InterruptsSnapshot {
  std::vector<unsigned> cpus;  // the header's CPU columns, in order
  std::vector<InterruptRow> rows;
  size_t malformed_rows = 0;        // lines that are not rows (skipped)
  size_t first_malformed_line = 0;  // 1-based line of the first of them in the text, 0 if none
  const InterruptRow* find(std::string_view name) const;  // nullptr if absent
};

InterruptsSnapshot parse_proc_interrupts(std::string_view text);

struct IrqEffective {
  std::string irq;
  CpuSet cpus;
};

struct ClockState {
  bool tsc_unstable = false;  // "tsc: Marking TSC unstable" / "clocksource 'tsc' as unstable"
  bool sched_clock_unstable = false;  // "sched_clock: Marking unstable"
  bool sched_clock_stable = false;    // "sched_clock: Marking stable"
  std::string clocksource;            // last "clocksource: Switched to clocksource X"
  std::vector<std::string> lines;     // the dmesg lines this was read from
  std::string summary() const;        // "clocksource hpet; TSC unstable"
};

struct GuestFacts {
  std::string cmdline;
  std::vector<CmdlineToken> cmdline_tokens;
  std::string uname_r;
  std::optional<CpuSet> cpu_online, cpu_possible, isolated, nohz_full;
  std::vector<std::string> dmesg_lines;  // timestamps stripped
  bool has_dmesg = false;
  std::optional<CpuSet> rcu_offload;  // from "Offload RCU callbacks from CPUs:"; empty = (none)
  std::vector<IrqEffective> irq_affinity;
  bool has_irq_affinity = false;
  std::optional<CpuSet> default_smp_affinity, workqueue_cpumask;
  std::optional<InterruptsSnapshot> interrupts_before, interrupts_after;
  std::optional<double> busy_window_s;
  ClockState clock;
  std::vector<std::string> problems;  // "<key>: <what>"
};

GuestFacts parse_guest_facts(const std::map<std::string, std::string>& records);

struct GateRow {
  std::string check;
  std::string expected;
  std::string effective;
  bool pass = true;
  bool warning = false;  // pass, but worth a look
  std::string detail;
};

struct GateReport {
  std::vector<GateRow> rows;
  bool pass = false;
  std::string reason;  // "PASS" or "FAIL: <check>: <detail>; ..." naming the first failures
};

GateReport evaluate_gate(const ExpectedIsolation& expected, const GuestFacts& facts);

nlohmann::json to_json(const GateReport& r);
std::string to_text(const GateReport& r);  // fixed-width table, one row per check

}  // namespace isolab
