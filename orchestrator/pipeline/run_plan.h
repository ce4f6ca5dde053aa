// The pure part of a run: which cells to boot, in which order, with which guest.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmdline/analyze.h"
#include "spec/spec.h"
#include "vm/vm.h"
#include "workload/step.h"
#include "workload/workload.h"

namespace isolab {

// One boot: one variant x one repetition.
struct CellPlan {
  std::string id;  // "<variant>-r<rep>" or "<variant>-w<rep>" for warm-ups
  std::string variant;
  int repetition = 0;
  bool warmup = false;
};

// Warm-ups first, then the measured repetitions. A block is one repetition (warm-up or
// measured) of every variant: the variants interleave block by block, so that a drift of the
// host hits every variant alike. Within each block the variants run in an order drawn from a
// std::mt19937_64 seeded with `seed` (Fisher-Yates with the unbiased draws of stats/rng.h,
// the blocks drawing in plan order), so that no drift or periodic host effect can line up with
// the variants; the same seed gives the same order on every platform. nullopt: the spec's
// order in every block (A B A B ...), as a dry run without a seed shows it.
std::vector<CellPlan> plan_cells(const Spec& spec,
                                 std::optional<std::uint64_t> seed = std::nullopt);

// A boot order seed drawn from std::random_device, in [0, kMaxBootOrderSeed] (spec/spec.h).
std::uint64_t draw_boot_order_seed();

// The guest's -smp levels: sockets * cores * threads == vCPUs.
struct GuestTopology {
  int sockets = 1, cores = 1, threads = 1;
};

// The topology for a guest of `vcpus` vCPUs: the spec's /guest/topology, or by default 1
// socket of `vcpus` cores with 1 thread each (with `numa`: `vcpus` sockets of 1 core, so no
// socket spans two NUMA nodes). Throws SpecError("/guest/topology") with QEMU's words for
// a product other than vcpus (docs/sources.md [q1]: "Invalid CPU topology: product of the hierarchy
// must match maxcpus: sockets (2) * cores (4) * threads (2) != maxcpus (8)").
GuestTopology guest_topology(const GuestTopologySpec& t, int vcpus, bool numa = false);
nlohmann::json to_json(const GuestTopology& t);  // {"sockets", "cores", "threads"}

// The guest a spec asks for, derived from its command line (cmdline/analyze.h).
struct GuestDerivation {
  std::string cmdline;  // the guest's isolation command line (without console/panic)
  int vcpus = 0;
  GuestTopology topology;  // guest_topology(spec.topology, vcpus, NUMA nodes given)
  // CONFIG_NR_CPUS the guest kernel needs (Analysis::nr_cpus_required): every variant's kernel
  // is built with at least this many (guest_kernel_nr_cpus()).
  unsigned nr_cpus_required = 1;
  CpuPartition partition;
  std::string expect_isolated;   // what sysfs `isolated` should show
  std::string expect_nohz_full;  // what sysfs `nohz_full` should show ("" = nothing asked)
  nlohmann::json analysis;       // the analyzer's JSON (kept, dropped, warnings)
  ExpectedIsolation expected;    // what the isolation gate checks in the guest
};

// Throws SpecError("/guest/...") when the command line cannot be understood, or when its lists
// need more CPUs than QEMU boots (kMaxGuestVcpus), or a customer's lists use only N/all (no CPU
// count), and guest.vcpus is not given.
// kernel_nr_cpus: the CONFIG_NR_CPUS of the kernel that will boot the guest; nullopt: a kernel
// built for the guest (cmdline/analyze.h KernelAssumptions::nr_cpus_config).
GuestDerivation derive_guest(const Spec& spec,
                             std::optional<unsigned> kernel_nr_cpus = std::nullopt);

// The CONFIG_NR_CPUS that config fragments set (the last assignment wins, in merge order), or
// nullopt when none does. Throws isolab::Error naming a fragment that cannot be read or parsed.
std::optional<unsigned> fragments_nr_cpus(const std::vector<std::filesystem::path>& fragments);

// The value for KernelRequest::nr_cpus: nullopt when the fragments already set NR_CPUS >=
// required (so that guests of up to 16 vCPUs keep base.config's NR_CPUS=16 and the cached
// kernels of the default spec), else `required`, so that the guest kernel's nr_cpu_ids equals
// the guest's possible CPUs and its CPU lists parse as on the customer's machine.
std::optional<unsigned> guest_kernel_nr_cpus(const std::vector<std::filesystem::path>& fragments,
                                             unsigned required);

// CONFIG_NR_CPUS of a final .config (1 when CONFIG_SMP is off and NR_CPUS absent). Throws
// isolab::Error "<origin>: ..." when the text is not a .config or an SMP kernel has no NR_CPUS.
unsigned kernel_config_nr_cpus(std::string_view config_text, const std::string& origin);

// The isolation command line a variant's guest boots with: the derived line, the variant's
// extra_cmdline and, when tracing, trace_event_boot_param() (guest/init_script.h). The backends
// then append "console=ttyS0 panic=-1" (vm/vm.h full_kernel_cmdline()).
std::string variant_guest_cmdline(const GuestDerivation& guest, const VariantSpec& variant,
                                  bool trace);

// Throws SpecError(<the guest's command line field>) when some variant's final kernel command
// line (variant_guest_cmdline() plus the backends' additions) is longer than the 2047 bytes the
// x86-64 kernel keeps, naming the variant and the length.
void check_guest_cmdline_length(const Spec& spec, const GuestDerivation& guest, bool trace);

// Builds every workload's guest step once, so that what only the guest's CPUs can decide (a
// workload's `cpus` list against the guest's vCPUs: "5-3", "99" on 8 vCPUs) is refused before
// any kernel is built. Throws SpecError naming the field ("/workloads/0/cpus: cpulist '5-3':
// EINVAL ...").
void check_guest_steps(const Spec& spec, const GuestDerivation& guest);

// Refuses a variant's extra_cmdline holding a CPU list the kernel rejects, as a hand-written
// guest.cmdline is refused: SpecError("/variants/<i>/extra_cmdline", "nohz_full=7-5: cpulist
// '7-5': EINVAL ..."), the CPU lists read against the guest's vCPUs.
void check_variant_cmdlines(const Spec& spec, const GuestDerivation& guest);

// Refuses a compare.primary[].cpus CPU the guest does not have (CPU 12 of an 8-vCPU guest): no
// boot would give the metric a value there, so the verdict could not be judged.
// SpecError("/compare/primary/<i>/cpus", "CPU 12 is not a CPU of the guest, whose 8 vCPUs are
// 0-7: ...").
void check_primary_cpus(const Spec& spec, const GuestDerivation& guest);

// The spec's guest NUMA nodes for VmConfig::numa_nodes (empty when the spec has none). The
// cpulists were validated by parse_spec; throws isolab::Error if one does not parse.
std::vector<VmNumaNode> guest_numa_nodes(const Spec& spec);

}  // namespace isolab
