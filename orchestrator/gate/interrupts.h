// /proc/interrupts read into per-CPU counts, for the isolation gate's tick check and the
// interruptions workloads (workload/noise.h).
//
// Contract:
//  parse_proc_interrupts() reads /proc/interrupts (kernel/irq/proc.c show_interrupts() and
//  arch_show_interrupts(); docs/sources.md [n2]): a header of "CPU<n>" columns (online CPUs only,
//  so "CPU9 CPU20" maps columns by name), then rows "<name>:<count per column>... <description>";
//  the name ends at the first ':' (arm64 "IPI0:2768808080 ..." has no space after it; device
//  names in the description may hold colons and spaces). Counts are read as 64-bit (the kernel
//  prints unsigned int, which wraps at 2^32: a delta must allow for that). A row with a single
//  count (x86 ERR/MIS, arm64 Err, whatever the CPU count) is system-wide: InterruptRow::total,
//  no per-CPU counts. Rows with another number of counts, no name or a name with spaces are
//  malformed: skipped and counted. There may be no LOC row (arm64: the local timer is the
//  arch_timer IRQ row). It throws isolab::Error (naming the line) when the first non-blank line
//  is not a header of distinct CPU columns.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

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

}  // namespace isolab
