// The host CPU plan: which host CPUs each concurrently running guest (a "slot") gets.
//
// Policy:
//  - every vCPU thread of a guest gets its own host CPU when the host has enough CPUs;
//  - the guest's isolated vCPUs go on the host's isolated CPUs (isolcpus / nohz_full) when the
//    host has any, each on a whole physical core: the SMT siblings of that CPU are given to no
//    other vCPU (of any guest), so no guest's isolated vCPU shares a core with another vCPU;
//  - the guest's other vCPUs go on the remaining host isolated CPUs first, then on host
//    housekeeping CPUs, never on a sibling of an isolated vCPU;
//  - one housekeeping CPU is kept free of vCPUs for QEMU's main loop and I/O threads (the
//    "emulator") and the host when the host has more than one; all slots' emulators share the
//    housekeeping CPUs that no vCPU holds (on the slot's NUMA node when it has some);
//  - a slot's CPUs come from one NUMA node when one node can hold them.
// A guest that cannot get dedicated CPUs (more vCPUs than usable host CPUs) runs only with
// overcommit: then every vCPU and the emulator of each slot may run on every online host CPU.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cmdline/cpulist.h"
#include "pipeline/run_plan.h"
#include "spec/spec.h"

namespace isolab {

// The host's CPUs as sysfs shows them. All sets have the width kMaxCpus-independent width
// `nbits` (highest CPU + 1).
struct HostTopology {
  CpuSet online;              // /sys/devices/system/cpu/online
  std::vector<CpuSet> cores;  // SMT sibling groups (thread_siblings_list), each group once
  std::vector<CpuSet> nodes;  // /sys/devices/system/node/node<N>/cpulist, by node number
  CpuSet isolated;            // /sys/devices/system/cpu/isolated (isolcpus=)
  CpuSet nohz_full;           // /sys/devices/system/cpu/nohz_full (absent file: empty)
  unsigned nbits = 0;
  // Host CPUs the kernel keeps for itself: online minus isolated minus nohz_full (all online
  // CPUs when that would be empty).
  CpuSet housekeeping() const;
};

// Reads the topology under sysfs_root (normally "/sys"): devices/system/cpu/{online,isolated,
// nohz_full}, devices/system/cpu/cpu<N>/topology/thread_siblings_list for every online CPU
// (missing: the CPU is its own core), devices/system/node/node<N>/cpulist (missing: one node
// with every online CPU). Throws isolab::Error naming the file for an unreadable `online` or
// a list that does not parse.
HostTopology read_host_topology(const std::filesystem::path& sysfs_root = "/sys");

// A topology from text, for tests and `doctor`: online/isolated/nohz_full as CPU lists,
// cores and nodes as lists of CPU lists (empty cores: every CPU its own core; empty nodes:
// one node). Throws CpuListError for a bad list.
HostTopology make_host_topology(const std::string& online, const std::vector<std::string>& cores,
                                const std::vector<std::string>& nodes,
                                const std::string& isolated = "",
                                const std::string& nohz_full = "");

// What one guest needs.
struct GuestCpuNeeds {
  int vcpus = 1;
  CpuSet isolated_vcpus;  // guest CPU numbers that are isolated / nohz_full in the guest
  bool overcommit = false;
  // Guests at once: 0 = auto (as many as fit with dedicated CPUs, at least 1).
  int parallel = 0;
};

// The needs of the spec's guest: its vCPUs, its isolated vCPUs (isolcpus domain and nohz_full:
// guest.partition.isolated), spec.overcommit, and parallel (-1: spec.parallel; 0: auto).
GuestCpuNeeds guest_cpu_needs(const Spec& spec, const GuestDerivation& guest, int parallel);

// The host CPUs of one slot (one guest running at a time on it).
struct SlotPlan {
  int index = 0;
  std::vector<CpuSet> vcpu_cpus;  // [vCPU] the host CPUs its thread may run on
  CpuSet emulator_cpus;           // QEMU main loop and I/O threads
  CpuSet reserved;                // SMT siblings of this slot's isolated vCPUs left idle
  int node = -1;                  // NUMA node of the vCPUs, -1 when they span nodes
};

struct HostPlan {
  bool ok = false;               // false: refused (error says why, with the numbers)
  bool overcommitted = false;    // vCPUs share host CPUs
  bool emulator_shared = false;  // no housekeeping CPU was left free for the emulator
  int fits_dedicated = 0;        // guests that fit at once with dedicated CPUs
  std::vector<SlotPlan> slots;
  std::string error;  // !ok: "guest needs 8 vCPUs ..., host has 2 ..."
  std::vector<std::string> notes;
};

// The plan (pure). Never throws; a guest that needs more than the host has without
// needs.overcommit, or more slots asked than fit, gives ok=false and an error naming the
// vCPU count, the host's online/isolated/housekeeping CPU counts and the slots that fit.
HostPlan plan_host(const HostTopology& host, const GuestCpuNeeds& needs);

// {"overcommitted", "emulator_shared", "fits_dedicated", "slots": [{"index", "vcpus":
//  ["2", ...] (CPU lists), "emulator": "0-1", "reserved": "", "node"}], "notes", "error"}.
nlohmann::json to_json(const HostPlan& p);
// {"online", "isolated", "nohz_full", "housekeeping" (CPU lists), "cores": [..], "nodes": [..]}.
nlohmann::json to_json(const HostTopology& t);
// A few lines for `isolab doctor`: the host, then one line per slot.
std::string host_plan_text(const HostTopology& t, const GuestCpuNeeds& needs, const HostPlan& p);

}  // namespace isolab
