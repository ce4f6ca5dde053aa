#include "cmdline/param_rules.h"

namespace isolab {

namespace {

constexpr auto K = ParamAction::kKept;
constexpr auto D = ParamAction::kDropped;
constexpr auto R = ParamAction::kReplaced;

constexpr std::string_view kLatency = "affects latency or timer behaviour";
constexpr std::string_view kIsol = "CPU isolation parameter";
constexpr std::string_view kCpus = "limits the CPUs the kernel uses";
constexpr std::string_view kMem = "affects memory behaviour";
constexpr std::string_view kMitig = "speculation mitigations change syscall and interrupt cost";
constexpr std::string_view kRcuWhy = "RCU behaviour affects noise on isolated CPUs";
constexpr std::string_view kHostBoot = "host boot loader / root file system setting";
constexpr std::string_view kHostDracut = "host initramfs (dracut) setting";
constexpr std::string_view kHostDisplay = "host display / boot splash setting";
constexpr std::string_view kHostPower =
    "host CPU power management driver; does nothing in an emulated guest";
constexpr std::string_view kHostIommu = "host IOMMU setting; the guest has no IOMMU";
constexpr std::string_view kHostLsm =
    "host security module setting; the guest initramfs has no policy";
constexpr std::string_view kHostUserspace = "host userspace (systemd / locale) setting";
// init/main.c unknown_bootoption(): a word the kernel does not know, without a '.', goes to init
// (NAME=value into its environment, a bare word into its arguments).
constexpr std::string_view kInitEnv =
    "not a kernel parameter: the kernel hands it to init's environment (init/main.c "
    "unknown_bootoption()); the host's locale";
constexpr std::string_view kLonePlus =
    "not a kernel parameter: a lone '+' is TuneD's append marker left by an empty cmdline_ "
    "option of the profile (OpenShift's cmdline_additionalArg=+ without additional kernel "
    "arguments); the kernel hands it to init as an argument (init/main.c unknown_bootoption())";
constexpr std::string_view kTunedHint =
    "read by TuneD on the host, not by the kernel; isolab reads it as a hint of the machine "
    "(cmdline/line_hints.h)";

}  // namespace

// The one classification table. Patterns are normalized names ('-' -> '_'); a pattern ending in
// '.' or '*' is a prefix.
// NOLINTNEXTLINE(readability-function-size): a data table, one row per parameter
const std::vector<ParamRule>& classification_table() {
  static const std::vector<ParamRule> table = {
      // Isolation.
      {"isolcpus", K, kIsol, true},
      {"nohz_full", K, kIsol, true},
      {"nohz", K, "nohz=on|off switches dynticks, which nohz_full needs", true},
      {"rcu_nocbs", K, kIsol, true},
      {"rcu_nocb_poll", K, kIsol, true},
      {"irqaffinity", K, kIsol, true},
      {"kthread_cpus", K, kIsol, true},
      {"housekeeping", K, kIsol, true},
      // Timers, tick, watchdogs, clocks.
      {"skew_tick", K, kLatency},
      {"nosoftlockup", K, kLatency},
      {"nowatchdog", K, kLatency},
      {"nmi_watchdog", K, kLatency},
      {"watchdog_thresh", K, kLatency},
      {"softlockup_panic", K, kLatency},
      {"tsc", K, "clocksource watchdog / TSC trust affects the tick and timekeeping"},
      {"clocksource", K, kLatency},
      {"hpet", K, kLatency},
      {"highres", K, kLatency},
      {"lapic", K, kLatency},
      {"nolapic_timer", K, kLatency},
      {"idle", K, kLatency},
      {"cpuidle.", K, kLatency},
      {"threadirqs", K, kLatency},
      {"preempt", K, kLatency},
      {"mce", K, kLatency},
      {"audit", K, "audit adds work to every syscall"},
      {"rcupdate.", K, kRcuWhy},
      {"rcutree.", K, kRcuWhy},
      {"rcu_nocb*", K, kRcuWhy},
      {"workqueue.", K, "workqueue placement affects isolated CPUs"},
      {"sched_", K, kLatency},
      {"psi", K, kLatency},
      {"ftrace", K, "tracing affects latency"},
      {"trace_", K, "tracing affects latency"},
      {"tp_printk", K, "tracing affects latency"},
      // CPU counts.
      {"nr_cpus", K, kCpus},
      {"maxcpus", K, kCpus},
      {"possible_cpus", K, kCpus},
      {"nosmp", K, kCpus},
      {"nosmt", K, kCpus},
      // Mitigations.
      {"mitigations", K, kMitig},
      {"pti", K, kMitig},
      {"nopti", K, kMitig},
      {"spectre_v1", K, kMitig},
      {"spectre_v2", K, kMitig},
      {"nospectre_v1", K, kMitig},
      {"nospectre_v2", K, kMitig},
      {"spec_store_bypass_disable", K, kMitig},
      {"ssbd", K, kMitig},
      {"l1tf", K, kMitig},
      {"mds", K, kMitig},
      {"tsx", K, kMitig},
      {"tsx_async_abort", K, kMitig},
      {"retbleed", K, kMitig},
      {"srbds", K, kMitig},
      {"mmio_stale_data", K, kMitig},
      // Memory.
      {"transparent_hugepage", K, kMem},
      {"hugepages", K, kMem},
      {"hugepagesz", K, kMem},
      {"default_hugepagesz", K, kMem},
      {"numa_balancing", K, kMem},
      {"init_on_alloc", K, kMem},
      {"init_on_free", K, kMem},
      {"slab_nomerge", K, kMem},
      {"page_alloc.", K, kMem},
      {"nokaslr", K, kMem},
      {"mem", D, "guest memory is set by the orchestrator (QEMU -m)"},
      // Host-specific.
      {"BOOT_IMAGE", D, kHostBoot},
      {"root", D, kHostBoot},
      {"ro", D, kHostBoot},
      {"rw", D, kHostBoot},
      {"rootflags", D, kHostBoot},
      {"rootfstype", D, kHostBoot},
      {"rootwait", D, kHostBoot},
      {"rootdelay", D, kHostBoot},
      {"initrd", D, kHostBoot},
      {"boot", D, kHostBoot},
      {"resume", D, "host hibernation device"},
      {"resume_offset", D, "host hibernation device"},
      {"noresume", D, "host hibernation setting"},
      {"crashkernel", D, "host kdump memory reservation"},
      {"rd.", D, kHostDracut},
      {"rd_", D, kHostDracut},
      {"rhgb", D, kHostDisplay},
      {"splash", D, kHostDisplay},
      {"plymouth.", D, kHostDisplay},
      {"nomodeset", D, kHostDisplay},
      {"video", D, kHostDisplay},
      {"vga", D, kHostDisplay},
      {"fbcon", D, kHostDisplay},
      {"i915.", D, kHostDisplay},
      {"amdgpu.", D, kHostDisplay},
      {"nouveau.", D, kHostDisplay},
      {"intel_pstate", D, kHostPower},
      {"amd_pstate", D, kHostPower},
      {"intel_idle.", D, kHostPower},
      {"processor.", D, kHostPower},
      {"cpufreq.", D, kHostPower},
      {"pcie_aspm", D, kHostPower},
      {"intel_iommu", D, kHostIommu},
      {"amd_iommu", D, kHostIommu},
      {"iommu", D, kHostIommu},
      {"iommu.", D, kHostIommu},
      {"selinux", D, kHostLsm},
      {"enforcing", D, kHostLsm},
      {"security", D, kHostLsm},
      {"apparmor", D, kHostLsm},
      {"lsm", D, kHostLsm},
      {"systemd.", D, kHostUserspace},
      {"tuned.", D, kTunedHint},
      {"LANG", D, kInitEnv},
      {"+", D, kLonePlus},
      {"KEYTABLE", D, kHostUserspace},
      {"SYSFONT", D, kHostUserspace},
      {"vconsole.", D, kHostUserspace},
      {"biosdevname", D, "host network device naming"},
      {"net.ifnames", D, "host network device naming"},
      {"fsck.", D, "host file system check setting"},
      {"module_blacklist", D, "host driver selection"},
      {"modprobe.", D, "host driver selection"},
      {"acpi_osi", D, "host firmware workaround"},
      {"acpi_backlight", D, "host firmware workaround"},
      {"kvm.", D, "host hypervisor setting"},
      {"kvm_intel.", D, "host hypervisor setting"},
      {"kvm_amd.", D, "host hypervisor setting"},
      {"quiet", D, "panic detection needs the kernel's messages on the console"},
      // Replaced by the orchestrator's own.
      {"console", R, "the orchestrator sets its own serial console"},
      {"earlycon", R, "the orchestrator sets its own serial console"},
      {"earlyprintk", R, "the orchestrator sets its own serial console"},
      {"loglevel", R, "the orchestrator sets the log level so panics reach the console"},
      {"panic", R, "the orchestrator sets panic=-1 so that QEMU exits at once on a panic"},
      {"init", R, "the orchestrator's initramfs runs its own init"},
      {"rdinit", R, "the orchestrator's initramfs runs its own init"},
  };
  return table;
}

const ParamRule* find_rule(std::string_view name) {
  const ParamRule* best = nullptr;
  for (const ParamRule& r : classification_table()) {
    const std::string_view p = r.pattern;
    const bool prefix = !p.empty() && (p.back() == '.' || p.back() == '*' || p.back() == '_');
    if (!prefix) {
      if (p == name) return &r;
      continue;
    }
    const std::string_view stem = p.back() == '*' ? p.substr(0, p.size() - 1) : p;
    if (name.size() > stem.size() && name.substr(0, stem.size()) == stem &&
        (!best || best->pattern.size() < p.size()))
      best = &r;
  }
  return best;
}

const char* action_name(ParamAction a) {
  switch (a) {
    case ParamAction::kKept:
      return "kept";
    case ParamAction::kDropped:
      return "dropped";
    case ParamAction::kReplaced:
      return "replaced";
  }
  return "?";
}

}  // namespace isolab
