// The guest that stands for a customer's machine (machine/facts.h): how many vCPUs, their
// sockets, cores and threads, their NUMA nodes, and which of the customer's CPUs each vCPU
// stands for. Pure.
//
// The rule (docs/spec.md, "The customer's machine"), the first that applies:
//  - "same": every CPU of the machine is online and there are at most max_vcpus of them:
//    vCPU i is CPU i, with the machine's sockets, cores per socket and threads per core (lscpu's
//    counts) and its NUMA nodes.
//  - "online CPUs only": some CPUs are offline (facts `cpus` != `online`) and the online ones
//    are at most max_vcpus: the guest boots the online CPUs, vCPU i the i-th online CPU (QEMU
//    has no offline CPUs to boot: -smp counts the CPUs that start), with the topology lscpu
//    counted over the online CPUs when its product is their number.
//  - "one CPU per class": more online CPUs than max_vcpus: two CPUs are of one class when they
//    are on the same NUMA node and alike in every list the isolation facts give (isolated,
//    nohz_full, rcu_nocbs, housekeeping); each class keeps its lowest CPU, in the customer's
//    order (so CPU 0 stays the boot CPU). Every list then names in the guest the classes it
//    names on the customer's machine: the smallest guest in which the line's lists mean the same.
//    The sockets, cores and threads are not kept: one socket of N cores on one NUMA node, one
//    socket per vCPU on several (so that no socket spans two nodes, pipeline/run_plan.h).
//  - "from the line": the facts give no CPU count and their isolation lists name no CPU:
//    customer_cpu is empty and the line's lists decide the guest (cmdline/analyze.h).
// Facts with no CPU count but with isolation lists (a node's line alone whose isolcpus= and
// housekeeping hints, such as tuned.non_isolcpus=, name every CPU) take the CPUs those lists
// name together as the online CPUs; `why` says so.
// When the kept topology's product is not the guest's vCPUs (lscpu counted otherwise), or when
// a socket QEMU makes (vCPUs numbered socket by socket, vm/vm.h vcpu_topology_ids) would span
// two of the machine's NUMA nodes (a machine that numbers its CPUs across sockets, such as even
// CPUs on node 0), the topology falls back to the default and `topology_kept` is false; `why`
// says so.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cmdline/cpulist.h"
#include "machine/facts.h"

namespace isolab {

struct GuestShape {
  std::string rule;                    // "same", "online CPUs only", "one CPU per class", ...
  std::string why;                     // what the rule left out, for the fidelity table
  std::vector<unsigned> customer_cpu;  // customer_cpu[i]: the customer's CPU vCPU i stands for
  unsigned sockets = 1, cores = 1, threads = 1;
  bool topology_kept = false;      // the machine's own sockets, cores and threads
  std::vector<CpuSet> numa_nodes;  // in guest numbering; empty: one node (no NUMA layout)
  unsigned customer_nbits = 0;     // the customer's CPU count (cpus' last + 1)

  unsigned vcpus() const { return static_cast<unsigned>(customer_cpu.size()); }
  // Whether vCPU i is CPU i for every i (no list needs rewriting).
  bool identity() const;
  // The guest vCPUs that stand for CPUs of `customer`: {i : customer has customer_cpu[i]}.
  CpuSet to_guest(const CpuSet& customer) const;
};

// The largest guest a customer's machine gets unless the spec says otherwise
// (/customer/max_vcpus): base.config's CONFIG_NR_CPUS, so the default kernels boot it.
inline constexpr unsigned kCustomerGuestMaxVcpus = 16;

GuestShape guest_shape(const MachineFacts& m, unsigned max_vcpus = kCustomerGuestMaxVcpus);

// The customer's line with the CPU lists of isolcpus=, nohz_full=, rcu_nocbs=, irqaffinity=,
// kthread_cpus= and systemd.cpu_affinity= and the hex mask of tuned.non_isolcpus= written in
// guest numbering (shape.to_guest of each, read with the customer's CPU count); every other
// token, and a list the customer's kernel could not parse, as written. shape.identity(): the
// line as given.
std::string line_in_guest_numbering(std::string_view line, const GuestShape& shape);

}  // namespace isolab
