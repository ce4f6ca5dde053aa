// What the analysis of a kernel command line gives (cmdline/analyze.h analyze(), whose contract
// says how each field is derived) and the options it takes. Header-only: the value types the
// analysis steps of cmdline/ (customer_kernel, vcpus) and their callers share.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cmdline/cpulist.h"
#include "cmdline/line_hints.h"
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

  // The kept tokens joined by single spaces.
  std::string guest_cmdline() const {
    std::string out;
    for (const auto& k : kept) out += (out.empty() ? "" : " ") + k;
    return out;
  }
};

}  // namespace isolab
