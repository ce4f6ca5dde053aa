// The spec's guest shape: its NUMA nodes and CPU topology (/guest/numa_nodes, /guest/topology;
// spec/spec.h Spec, docs/spec.md). Header-only.
#pragma once

#include <string>

namespace isolab {

// One guest NUMA node (QEMU -numa node + memory-backend-ram; libvirt <cpu><numa><cell>).
// Node i of Spec::numa_nodes is NUMA node i of the guest.
struct NumaNodeSpec {
  std::string cpus;    // canonical cpulist of the vCPUs on the node ("0-1")
  int memory_mib = 0;  // the node's memory, MiB
};

// The guest's CPU topology as QEMU -smp / libvirt <topology> levels. Every level > 0 and
// sockets * cores * threads == the guest's vCPUs (QEMU refuses any other product; docs/sources.md
// [q1]; checked by derive_guest(), pipeline/run_plan.h, once the vCPU count is known).
struct GuestTopologySpec {
  int sockets = 1;
  int cores = 0;  // 0: the guest's vCPUs (1 socket of N cores, 1 thread each)
  int threads = 1;
  bool given = false;  // the spec has /guest/topology
};

}  // namespace isolab
