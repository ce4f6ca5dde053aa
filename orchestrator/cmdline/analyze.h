// Understanding a host kernel command line and deriving the guest from it.
//
// Contract:
//  analyze(text, options) takes either a plain command line (/proc/cmdline) or dmesg text; in the
//  latter it uses the `Command line: ` line (arch/x86/kernel/setup.c) or, failing that, the
//  `Kernel command line: ` line (init/main.c), with or without `[    0.000000] ` timestamps and
//  `<N>` syslog prefixes; a leading UTF-8 byte order mark is skipped. Every token is classified
//  by the single table in analyze.cc (classification_table()): kept (affects isolation, timers,
//  latency or memory behaviour), dropped (host-specific; with the reason) or replaced (the
//  orchestrator sets its own; with the reason).
//  Unknown parameters are KEPT, each with a warning: a parameter we cannot judge may matter to
//  the measurement, and the kernel passes unknown parameters without a '.' to init harmlessly.
//  Tokens after a bare `--` are init arguments for the host's init and are dropped.
//
//  The 2048-byte limit: x86-64 COMMAND_LINE_SIZE is 2048 including the NUL
//  (arch/x86/include/asm/setup.h); the boot protocol tells the boot loader cmdline_size = 2047
//  (arch/x86/boot/header.S) and head64.c copies at most that into boot_command_line. So the
//  kernel sees the first 2047 bytes: a longer line is cut there before tokenizing, every
//  parameter that starts past the cut goes in `dropped` ("past byte 2047 ..."), a parameter the
//  cut runs through goes in `dropped` too and its surviving prefix is analysed as the kernel
//  sees it, and the isolation is computed without what was lost (docs/sources.md [k6]).
//
//  Deriving the vCPU count (Linux 6.1: lib/bitmap.c bitmap_parselist() via cpulist_parse(),
//  called by housekeeping_setup() in kernel/sched/isolation.c for isolcpus=/nohz_full=, by
//  rcu_nocb_setup() in kernel/rcu/tree_nocb.h and irq_affinity_setup() in
//  kernel/irq/irqdesc.c). These parse with nr_cpumask_bits bits, which in 6.1 is nr_cpu_ids
//  (include/linux/cpumask.h), the number of possible CPUs; a region whose end is >= that width
//  fails with ERANGE and the whole parameter is ignored. So a list the customer's kernel
//  accepted proves the customer had more possible CPUs than its largest range END, not only its
//  largest member: `0-15:2/4` (members 0-1,4-5,8-9,12-13) needs 16. `N` is the last possible
//  CPU and `all` is 0-N: they parse at any width and prove nothing, except that `a-N` needs
//  a+1 (start <= end). Group patterns `a-b:used/group` need b+1 like any range.
//   - vcpus = the largest such need over the isolcpus=, nohz_full=, rcu_nocbs=, irqaffinity=
//     lists (of a list with a bad item, the regions before it, so that the guest's kernel stops
//     at the same item as the customer's; a word at the start of isolcpus= is a flag), so that
//     every list the customer's kernel accepted still parses and means the same, and over the
//     line's machine hints (cmdline/line_hints.h: tuned.non_isolcpus=, systemd.cpu_affinity=
//     name housekeeping CPUs, so their highest CPU + 1 is a need too: `nohz_full=4-19
//     tuned.non_isolcpus=00f0000f` is a 24-CPU machine whose CPUs 20-23 are housekeeping);
//     `vcpus_reason` says which list or hint decided. Each hint is in `hints` with what it
//     says; a hint naming as housekeeping a CPU the line isolates, or one that could not be
//     read, gives a warning. Lists using only N/all give no count: 1 vCPU and
//     `cpu_count_unknown`, with a warning asking for the count.
//   - capped at kMaxGuestVcpus (QEMU 7.2's limit, below) with a warning naming the list; the
//     capped guest's kernel then rejects that list (ERANGE), which the analysis shows.
//   - options.vcpus overrides the derivation (1..kMaxCpus; below the need gives a warning).
//   - nr_cpus= (kernel/smp.c nrcpus()) only lowers nr_cpu_ids and maxcpus=/nosmp only limit
//     the CPUs brought online: they do not raise the count. possible_cpus=P
//     (arch/x86/kernel/smpboot.c, early_param) makes P CPUs possible whatever is present, so
//     the guest kernel needs NR_CPUS >= P as well.
//  The guest kernel: nr_cpus_required = max(vcpus, possible_cpus=) (at most kMaxGuestNrCpus) is
//  the CONFIG_NR_CPUS the guest kernel needs for nr_cpu_ids to equal the guest's possible
//  CPUs; isolab builds its guest kernels with at least that (pipeline/run_plan.h). The analysis
//  uses options.kernel.nr_cpus_config when given (the NR_CPUS of the .config that will boot),
//  else nr_cpus_required (a kernel built for this guest).
//
//  The CPU sets follow Linux 6.1 (options.kernel selects other behaviour):
//   - possible CPUs = vcpus, changed by possible_cpus= and limited by nr_cpus= and NR_CPUS
//     (arch/x86/kernel/smpboot.c prefill_possible_map()); online at boot = possible limited by
//     maxcpus= / nosmp (kernel/cpu.c bringup_nonboot_cpus()).
//   - CPU lists are parsed as the kernel parses them at __setup time: 6.1 parses with
//     nr_cpu_ids bits (include/linux/cpumask.h: nr_cpumask_bits is nr_cpu_ids), so a list naming
//     a CPU >= possible is rejected (ERANGE) and `N` is the last possible CPU; 5.13..6.0 parse
//     with NR_CPUS bits and trim to the possible CPUs (docs/sources.md [k2]); 4.15..5.12 reject a
//     nohz_full/ isolcpus list that names CPUs which are not possible.
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
//  The customer's kernel decides (cmdline/customer_kernel.h). When the dmesg has a "Linux
//  version" line or options.customer_kernel_version is set (failing both, the release in
//  BOOT_IMAGE='s image name, "vmlinuz-4.18.0-372.19.1.el8_6.x86_64"), the isolcpus= flags are
//  judged by that kernel's rules too, and its own messages in the dmesg override the rules: an
//  isolcpus= that the customer's kernel ignored as a whole (an unknown flag before 5.7, any flag
//  before 4.15, or its dmesg saying "isolcpus: Error, unknown flag") but 6.1 would apply goes to
//  `dropped` with the reason, is left out of the guest's line and of the isolation computed,
//  and a warning names the difference; the rest is analysed as the guest's kernel
//  (options.kernel) treats it. A CPU set the customer's kernel reported ("NO_HZ: Full dynticks
//  CPUs: L.", "Offload RCU callbacks from CPUs: L.") that differs from the analysis, and a
//  "Housekeeping: ... incorrect CPU range" the analysis does not predict, each give a warning
//  quoting the kernel. A customer kernel other than the guest's major.minor gives a warning
//  naming both.
//  Errors: isolab::Error for input that is not a command line (binary junk, over 1 MiB, dmesg
//  without a command line). Everything the kernel itself tolerates is a warning, not an error.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmdline/analysis.h"
#include "cmdline/cpulist.h"
#include "cmdline/line_hints.h"
#include "cmdline/param_rules.h"
#include "cmdline/tokenize.h"

namespace isolab {

Analysis analyze(std::string_view text, const AnalyzeOptions& options = {});

// The bytes of a command line the x86-64 kernel keeps: COMMAND_LINE_SIZE - 1 = 2047.
inline constexpr size_t kX86CmdlineKeptBytes = kX86CommandLineSize - 1;
// nullopt when the x86-64 kernel keeps `line` whole; otherwise a message naming its length,
// the limit and the first parameter the cut reaches, e.g. "the final guest command line is 2131
// bytes; x86-64 keeps 2047 (COMMAND_LINE_SIZE 2048 with the NUL): 'trace_event=...' and what
// follows would be lost".
std::optional<std::string> cmdline_cut_message(std::string_view line, std::string_view what);

// Extracts the command line from dmesg text; nullopt if there is no command line line.
std::optional<std::string> find_cmdline_in_dmesg(std::string_view dmesg);

// What the guest should show once booted with the analysed command line.
struct ExpectedIsolation {  // NOLINT(clang-analyzer-optin.performance.Padding): as Analysis
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

}  // namespace isolab
