// Understanding a host kernel command line and deriving the guest from it.
//
// Contract:
//  analyze(text, options) takes either a plain command line (/proc/cmdline) or dmesg text; in the
//  latter it uses the `Command line: ` line (arch/x86/kernel/setup.c) or, failing that, the
//  `Kernel command line: ` line (init/main.c), with or without `[    0.000000] ` timestamps and
//  `<N>` syslog prefixes. Every token is classified by the single table in analyze.cc
//  (classification_table()): kept (affects isolation, timers, latency or memory behaviour), dropped
//  (host-specific; with the reason) or replaced (the orchestrator sets its own; with the reason).
//  Unknown parameters are KEPT, each with a warning: a parameter we cannot judge may matter to
//  the measurement, and the kernel passes unknown parameters without a '.' to init harmlessly.
//  Tokens after a bare `--` are init arguments for the host's init and are dropped.
//
//  The CPU sets follow Linux 6.1 (options.kernel selects other behaviour):
//   - vcpus = highest CPU named explicitly by any CPU list (isolcpus, nohz_full, rcu_nocbs,
//     irqaffinity) + 1, at least 1; `N`/`all` name no explicit CPU. options.vcpus overrides it
//     (a smaller override than the lists need gives a warning).
//   - possible CPUs = vcpus, changed by possible_cpus= and limited by nr_cpus= and NR_CPUS
//     (arch/x86/kernel/smpboot.c prefill_possible_map()); online at boot = possible limited by
//     maxcpus= / nosmp (kernel/cpu.c bringup_nonboot_cpus()).
//   - CPU lists are parsed as the kernel parses them at __setup time: 6.1 parses with
//     nr_cpu_ids bits (include/linux/cpumask.h: nr_cpumask_bits is nr_cpu_ids), so a list naming
//     a CPU >= possible is rejected (ERANGE) and `N` is the last possible CPU; 5.13..6.0 parse
//     with NR_CPUS bits and trim to the possible CPUs (case K2); 4.15..5.12 reject a nohz_full/
//     isolcpus list that names CPUs which are not possible.
//   - isolcpus= flags per kernel/sched/isolation.c housekeeping_isolcpus_setup(): nohz, domain,
//     managed_irq; no flag = domain; an unknown all-letter flag is skipped ("isolcpus: Skipped
//     unknown flag X"); a flag with other characters rejects the parameter ("isolcpus: Invalid
//     flag X"). isolcpus= and nohz_full= are applied in command-line order through
//     housekeeping_setup() (boot CPU forced back to housekeeping when none is left, "nohz_full=
//     must match isolcpus=" on a mismatch).
//   - isolated = what /sys/devices/system/cpu/isolated shows: possible CPUs outside the
//     HK_TYPE_DOMAIN housekeeping mask (drivers/base/cpu.c); nohz_full = tick_nohz_full_mask
//     (isolcpus=nohz included); housekeeping = possible - (isolated | nohz_full).
//   - rcu_nocbs = the RCU offload set rcu_init_nohz() prints (kernel/rcu/tree_nocb.h):
//     rcu_nocbs= | nohz_full (NO_HZ_FULL selects RCU_NOCB_CPU in 6.1), trimmed to possible; a bad
//     rcu_nocbs= list offloads all CPUs ("rcu_nocbs= bad CPU range, all CPUs set").
//   - irqaffinity = the default IRQ affinity (kernel/irq/irqdesc.c irq_affinity_setup()): the
//     parsed list, partial if the parse stopped on an error, always plus the boot CPU 0; all
//     possible CPUs when absent.
//  Errors: isolab::Error for input that is not a command line (binary junk, over 1 MiB, dmesg
//  without a command line). Everything the kernel itself tolerates is a warning, not an error.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmdline/cpulist.h"
#include "cmdline/tokenize.h"

namespace isolab {

struct KernelAssumptions {
  int major = 6;  // kernel version the guest runs (behaviour of CPU list parsing differs)
  int minor = 1;
  bool no_hz_full = true;        // CONFIG_NO_HZ_FULL (selects RCU_NOCB_CPU)
  unsigned nr_cpus_config = 64;  // CONFIG_NR_CPUS (x86_64 default without MAXSMP)
  bool pm_sleep_smp = false;     // CONFIG_PM_SLEEP_SMP: tick_nohz_init() drops CPU 0 from nohz_full
};

struct AnalyzeOptions {
  std::optional<unsigned> vcpus;  // override of the derived vCPU count (1..kMaxCpus)
  KernelAssumptions kernel;
};

enum class ParamAction { kKept, kDropped, kReplaced };
const char* action_name(ParamAction a);  // "kept", "dropped", "replaced"

// One row of the classification table: a normalized parameter name, or a prefix when the
// pattern ends with '.' or '*' (e.g. "rd.", "rcutree.").
struct ParamRule {
  std::string_view pattern;
  ParamAction action;
  std::string_view reason;
  bool isolation = false;  // an isolation parameter the guest /proc/cmdline must carry
};
const std::vector<ParamRule>& classification_table();
// The rule for a normalized name (exact match first, then the longest prefix); nullptr if none.
const ParamRule* find_rule(std::string_view normalized_name);

struct ParamVerdict {
  std::string param;  // the token as written
  std::string reason;
};

struct Analysis {
  std::string source_line;  // the command line analyzed (extracted from dmesg if needed)
  bool from_dmesg = false;
  std::vector<CmdlineToken> tokens;

  unsigned vcpus = 1;
  bool vcpus_overridden = false;
  unsigned possible = 1;  // possible CPUs = nr_cpu_ids
  unsigned online = 1;    // CPUs the kernel brings up at boot

  CpuSet housekeeping;
  CpuSet isolated;   // sysfs isolated (domain isolation)
  CpuSet nohz_full;  // tick_nohz_full_mask
  bool nohz_full_active = false;
  CpuSet rcu_nocbs;                 // RCU callback offload set
  bool rcu_offload_active = false;  // rcu_init_nohz() prints an "Offload RCU callbacks" line
  CpuSet irqaffinity;               // default IRQ affinity
  bool irqaffinity_given = false;
  CpuSet managed_irq_isolated;              // CPUs managed IRQs avoid (isolcpus=managed_irq)
  CpuSet workqueue_cpumask;                 // wq_unbound_cpumask: HK_WQ & HK_DOMAIN
  std::vector<std::string> isolcpus_flags;  // effective: "nohz", "domain", "managed_irq"
  bool nohz_off = false;                    // nohz=off

  std::vector<std::string> kept;  // tokens as written, in order
  std::vector<ParamVerdict> dropped;
  std::vector<ParamVerdict> replaced;
  std::vector<std::string> warnings;
  // Lines the guest kernel should print because of this command line (without "[ time ]").
  std::vector<std::string> expected_kernel_messages;
  // Canonical forms ("name=value", name normalized) of the kept isolation parameters that the
  // guest /proc/cmdline must contain.
  std::vector<std::string> isolation_params;

  std::string guest_cmdline() const;  // kept tokens joined by single spaces
};

Analysis analyze(std::string_view text, const AnalyzeOptions& options = {});

// Extracts the command line from dmesg text; nullopt if there is no command line line.
std::optional<std::string> find_cmdline_in_dmesg(std::string_view dmesg);

nlohmann::json to_json(const Analysis& a);
std::string to_text(const Analysis& a);

// What the guest should show once booted with the analysed command line.
struct ExpectedIsolation {
  unsigned vcpus = 1;
  CpuSet possible;
  CpuSet online;
  CpuSet housekeeping;
  CpuSet isolated;                    // /sys/devices/system/cpu/isolated
  bool nohz_full_requested = false;   // nohz_full= or isolcpus=nohz given
  CpuSet nohz_full;                   // /sys/devices/system/cpu/nohz_full
  std::optional<CpuSet> rcu_offload;  // dmesg "Offload RCU callbacks from CPUs:"; nullopt = none
  CpuSet irq_default_affinity;        // /proc/irq/default_smp_affinity
  bool irqaffinity_requested = false;
  // CPUs on which no non-managed IRQ's effective affinity should land: online - default affinity.
  CpuSet irq_avoid;
  bool managed_irq = false;  // isolcpus=managed_irq: managed IRQs avoid managed_irq_avoid
  CpuSet managed_irq_avoid;
  CpuSet workqueue_cpumask;  // /sys/devices/virtual/workqueue/cpumask
  bool nohz_off = false;
  std::vector<std::string> required_params;  // see Analysis::isolation_params
  std::vector<std::string> expected_kernel_messages;
};

ExpectedIsolation expected_isolation(const Analysis& a);
nlohmann::json to_json(const ExpectedIsolation& e);

}  // namespace isolab
