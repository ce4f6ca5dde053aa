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

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmdline/cpulist.h"
#include "cmdline/line_hints.h"
#include "cmdline/param_rules.h"
#include "cmdline/tokenize.h"

namespace isolab {

// The most vCPUs a guest can have. QEMU 7.2 (qemu-system-x86_64 7.2.22 on Debian 12, checked
// with -smp N): the `pc` machine (pc-i440fx-7.2) has max_cpus 255 ("Invalid SMP CPUs 256. The
// max CPUs supported by machine 'pc-i440fx-7.2' is 255"); `q35` (pc-q35-7.2, what
// vm/qemu.cc boots) has max_cpus 288 but refuses -smp 256 and up without KVM ("current -smp
// configuration requires kernel irqchip and X2APIC API support": APIC IDs above 254 need
// x2APIC, and a guest needs interrupt remapping for them). KVM's own limit (KVM_MAX_VCPUS,
// 1024 on x86 since 5.15) is higher, so 255 binds on every host. vm/vm.cc enforces the same.
inline constexpr unsigned kMaxGuestVcpus = 255;
// The largest CONFIG_NR_CPUS an x86-64 kernel without CPUMASK_OFFSTACK accepts
// (arch/x86/Kconfig NR_CPUS_RANGE_END).
inline constexpr unsigned kMaxGuestNrCpus = 512;

struct KernelAssumptions {
  int major = 6;  // kernel version the guest runs (behaviour of CPU list parsing differs)
  int minor = 1;
  bool no_hz_full = true;  // CONFIG_NO_HZ_FULL (selects RCU_NOCB_CPU)
  // CONFIG_NR_CPUS of the kernel that boots the line; nullopt: a kernel built for this guest
  // (NR_CPUS = Analysis::nr_cpus_required).
  std::optional<unsigned> nr_cpus_config;
  bool pm_sleep_smp = false;  // CONFIG_PM_SLEEP_SMP: tick_nohz_init() drops CPU 0 from nohz_full
};

struct AnalyzeOptions {
  std::optional<unsigned> vcpus;  // override of the derived vCPU count (1..kMaxCpus)
  KernelAssumptions kernel;       // the kernel the guest boots
  // The kernel the line was written for ("5.4.0-150-generic"; `--kernel-version`), when it is
  // not in the dmesg given; overrides the dmesg's "Linux version" line.
  std::optional<std::string> customer_kernel_version;
  // Where customer_kernel_version was given, as errors and Analysis::customer_kernel name it.
  std::string customer_kernel_version_source = "--kernel-version";
};

struct ParamVerdict {
  std::string param;  // the token as written
  std::string reason;
};

// Field order follows the documented output, not the smallest padding (one per analysis).
struct Analysis {           // NOLINT(clang-analyzer-optin.performance.Padding)
  std::string source_line;  // the command line analyzed (extracted from dmesg if needed)
  bool from_dmesg = false;
  // The customer's kernel: "5.4.0-150-generic (dmesg)" or "... (--kernel-version)"; "" when
  // neither a dmesg "Linux version" line nor options.customer_kernel_version gave one.
  std::string customer_kernel;
  // Its own lines about isolcpus=, nohz_full=, rcu_nocbs= (cmdline/customer_kernel.h).
  std::vector<std::string> customer_kernel_messages;
  std::vector<CmdlineToken> tokens;
  // What tuned.non_isolcpus= and systemd.cpu_affinity= say of the machine (line_hints.h).
  std::vector<LineHint> hints;

  unsigned vcpus = 1;
  bool vcpus_overridden = false;
  unsigned vcpus_needed = 0;  // CPUs the lists need, before the cap (0: no list gives a count)
  std::string vcpus_reason;   // why vcpus has its value ("'isolcpus=0-15:2/4' ends at CPU 15 ...")
  bool cpu_count_unknown = false;  // the lists use only N/all: the line does not give the count
  unsigned nr_cpus_required = 1;   // CONFIG_NR_CPUS the guest kernel needs (see the contract)
  unsigned nr_cpus_config = 1;     // CONFIG_NR_CPUS the analysis assumed
  size_t cmdline_bytes = 0;        // length of source_line
  bool truncated = false;          // source_line is longer than the 2047 bytes the kernel keeps
  unsigned possible = 1;           // possible CPUs = nr_cpu_ids
  unsigned online = 1;             // CPUs the kernel brings up at boot

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
