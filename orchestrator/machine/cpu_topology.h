// The files that say how many CPUs a machine has and how they sit in sockets, cores and NUMA
// nodes, parsed from their text (no file access), and the topology computed from them.
//
// Formats (each parser throws isolab::Error "FILE:LINE: ..." on a line it cannot read, never
// skipping it silently):
//  - lscpu (util-linux; sos_commands/processor/lscpu): "Key:   value" lines; read are
//    "CPU(s):", "On-line CPU(s) list:", "Off-line CPU(s) list:", "Thread(s) per core:",
//    "Core(s) per socket:", "Socket(s):", "NUMA nodeN CPU(s):"; other keys are ignored.
//  - lscpu -e / -ae (a table; sos_commands/processor/lscpu_-ae, a must-gather's nodes/N/lscpu):
//    a header of column names, then one row per CPU, '-' for unknown; read are the CPU, NODE,
//    SOCKET, CORE and ONLINE ("yes"/"no") columns. A row with another number of columns than
//    the header is an error.
//  - /proc/cpuinfo (x86 layout, arch/x86/kernel/cpu/proc.c show_cpuinfo()): blocks per online
//    CPU; read are "processor", "physical id" and "core id".
//  - numactl --hardware: "node N cpus: C C ..." lines.
//  - sysfs lists (/sys/devices/system/cpu/online, node/nodeN/cpulist): the kernel's cpulist.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmdline/cpulist.h"
#include "machine/facts.h"

namespace isolab {

// A sysfs CPU list file's text (one line, may be empty: "" or "\n" is the empty set); throws
// isolab::Error naming `file` when it is not a cpulist.
CpuSet parse_sysfs_cpulist(std::string_view text, const std::string& file);

struct LscpuSummary {
  std::optional<Fact<unsigned>> cpus, sockets, cores_per_socket, threads_per_core;
  std::optional<Fact<CpuSet>> online, offline;
  std::vector<NumaNode> numa;
  std::vector<Origin> numa_from;
};
LscpuSummary parse_lscpu(std::string_view text, const std::string& file);

// One row of lscpu -e.
struct LscpuRow {
  unsigned cpu = 0;
  std::optional<unsigned> node, socket, core;
  std::optional<bool> online;
  size_t line = 0;
};
// Whether `text` is lscpu -e output (its first line names the CPU column first).
bool is_lscpu_table(std::string_view text);
std::vector<LscpuRow> parse_lscpu_table(std::string_view text, const std::string& file);

struct CpuinfoCpu {
  unsigned processor = 0;
  std::optional<unsigned> physical_id, core_id;
  size_t line = 0;  // the "processor" line
};
std::vector<CpuinfoCpu> parse_cpuinfo(std::string_view text, const std::string& file);

std::vector<NumaNode> parse_numactl_hardware(std::string_view text, const std::string& file);

// Where an online CPU sits: its package, and a core key unique across packages and dies.
struct CpuPlace {
  unsigned cpu = 0;
  unsigned socket = 0;
  unsigned long core = 0;  // (package, die, core_id) folded into one key
};

// The sockets, cores per socket and threads per core of the CPUs placed. nullopt, with `why`,
// when the sockets do not all have the same number of cores or the cores the same number of
// threads (the counts would then describe no real socket or core).
struct Topology {
  unsigned sockets = 0, cores_per_socket = 0, threads_per_core = 0;
};
std::optional<Topology> topology_of(const std::vector<CpuPlace>& places, std::string& why);

// The folded core key of CpuPlace.
unsigned long core_key(unsigned package, unsigned die, unsigned core_id);

}  // namespace isolab
