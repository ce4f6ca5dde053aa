// The CPUs of a machine (all, online, sockets, cores, threads, NUMA nodes) from every file of a
// dump that gives them, in order of trust, each fact with the files that agree on it.
//
// Order of trust, per fact (machine/facts.h offer(): a later source that disagrees is a note):
//  - cpus (all, offline included): sys/devices/system/cpu/present, then possible; lscpu -e rows;
//    lscpu's "CPU(s):"; sysfs online with offline; /proc/cpuinfo's processors with the offline
//    list. The per-CPU directories sys/devices/system/cpu/cpuN never give the count: sos copies
//    them one by one until its size limit and stops (at 64 on large machines), so they may hold
//    fewer CPUs than the machine has.
//  - online: sysfs online; lscpu's "On-line CPU(s) list:"; lscpu -e ONLINE "yes"; /proc/cpuinfo
//    (it lists online CPUs only); cpus without the offline list.
//  - sockets, cores per socket, threads per core, of the online CPUs: the per-CPU sysfs
//    topology (physical_package_id, die_id, core_id), used only when it covers every online
//    CPU; lscpu -e SOCKET and CORE; /proc/cpuinfo "physical id" and "core id"; lscpu's counts.
//  - numa_nodes: sys/devices/system/node/nodeN/cpulist; lscpu's "NUMA nodeN CPU(s):"; lscpu -e
//    NODE; numactl --hardware.
// A fact none gives goes to not_read with why (naming a cut of the per-CPU directories).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "machine/cpu_topology.h"
#include "machine/facts.h"
#include "machine/machine_root.h"

namespace isolab {

struct CpuFiles {
  std::vector<LscpuSummary> summaries;
  struct Table {
    std::vector<LscpuRow> rows;
    std::string file;
  };
  std::vector<Table> tables;
  struct Cpuinfo {
    std::vector<CpuinfoCpu> cpus;
    std::string file;
  };
  std::vector<Cpuinfo> cpuinfos;
  std::optional<Fact<CpuSet>> present, possible, online, offline;  // sysfs lists
  std::vector<CpuPlace> sysfs_places;                              // per-CPU topology directories
  CpuSet sysfs_cpu_dirs{kMaxCpus};                                 // the cpuN directories present
  std::string sysfs_dir;                                           // where they are, for origins
  std::vector<NumaNode> sysfs_numa;
  std::vector<Origin> sysfs_numa_from;
  std::vector<std::pair<std::vector<NumaNode>, Origin>> numactl;
};

// One lscpu output (summary or -e table, told apart by is_lscpu_table()).
void add_lscpu(CpuFiles& f, std::string_view text, const std::string& file);
// Every CPU file of a machine folder: sysfs, lscpu and lscpu -ae (sos_commands/processor/),
// /proc/cpuinfo, numactl --hardware (sos_commands/numa/).
void read_cpu_files(const MachineRoot& root, CpuFiles& f);
// The facts cpus, online, sockets, cores_per_socket, threads_per_core and numa_nodes.
void cpu_facts(const CpuFiles& f, MachineFacts& m);

}  // namespace isolab
