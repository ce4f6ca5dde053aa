// The VM-backend interface: one boot of a kernel + initramfs (direct kernel boot) with the
// console and a separate result channel going to host files, ended by the guest powering off or
// by a timeout. Backends: QemuBackend (vm/qemu.h) and LibvirtBackend (vm/libvirt.h).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

// How the guest's vCPUs execute: hardware virtualization or QEMU's software emulator.
enum class Accel { kvm, tcg };
// What the user asked for: auto_ probes KVM and falls back to TCG (vm/accel.h).
enum class AccelMode { auto_, kvm, tcg, automatic = auto_ };

// "kvm" / "tcg"; "auto" / "kvm" / "tcg".
std::string_view to_string(Accel a);
std::string_view to_string(AccelMode m);
std::string accel_name(Accel a);  // the same as std::string
// Parses "auto", "kvm" or "tcg"; throws isolab::Error naming the bad value otherwise.
AccelMode parse_accel_mode(std::string_view s);

// One guest NUMA node: NUMA node i of the guest is VmConfig::numa_nodes[i].
struct VmNumaNode {
  std::vector<unsigned> cpus;  // vCPU indexes on the node, ascending
  int memory_mib = 0;          // the node's RAM (a memory-backend-ram object of this size)
};

// "0-1,3" for {0, 1, 3}: the cpulist QEMU's -numa and libvirt's <cell cpus=...> take. Pure.
std::string vm_cpu_list(const std::vector<unsigned>& cpus);

// QEMU's TCG plugin that counts guest instructions per vCPU, user/kernel, between the marker
// NOPs of guest-tools/insn-marker.h (tcg-plugin/insn-count.c; its output is read by
// parse/insn_count.h). Host paths.
struct InsnPluginConfig {
  std::filesystem::path
      plugin;  // libisolab-insn-count.so (find_insn_plugin_files, vm/insn_plugin.h)
  std::filesystem::path output;  // the file the plugin writes (created by the backend, mode 0666)
  std::vector<unsigned> profile_cpus;  // vCPUs whose kernel code is profiled; empty = none
  // The guest kernel's System.map ("" = none: no function names, no fault correction and no
  // wakeup paths in the plugin).
  std::filesystem::path symbols;
  // Count only inside workload steps (the plugin's count=steps; the guest arms each step with
  // "isolab-mark step-arm"); false counts everything, boot code included.
  bool steps_only = false;
};

// One boot. Paths are host paths; the output files are created (truncated) by the backend.
struct VmConfig {
  std::string name;              // unique per boot; becomes QEMU -name / libvirt domain name
  std::filesystem::path kernel;  // bzImage
  std::filesystem::path initrd;  // cpio (may be empty: no -initrd)
  // The isolation part of the kernel command line. The backends append the orchestrator's own
  // "console=ttyS0 panic=-1" (see full_kernel_cmdline), so the caller must not pass console=.
  std::string cmdline;
  int vcpus = 2;  // >= 1
  // Guest CPU topology (QEMU -smp sockets=,cores=,threads=; libvirt <topology>): each >= 1 and
  // sockets * cores * threads == vcpus (docs/sources.md [q1]).
  // cores 0 = vcpus (1 socket, 1 thread).
  int sockets = 1, cores = 0, threads = 1;
  // Host CPU pinning (pipeline/host_cpu_plan.h), as CPU lists; empty vcpu_pin = no pinning. Else
  // one list per vCPU for its thread, and emulator_pin for QEMU's main loop and other threads.
  std::vector<std::string> vcpu_pin;
  std::string emulator_pin;
  int memory_mib = 512;  // >= 64
  // Guest NUMA topology; empty = none. When set: each vCPU on exactly one node and the nodes'
  // memory adds up to memory_mib. Keep a socket on one node (pipeline/run_plan.h gives a NUMA guest
  // one socket per vCPU by default): a socket split across nodes makes the guest kernel warn
  // in topology_sane().
  std::vector<VmNumaNode> numa_nodes;
  Accel accel = Accel::tcg;
  // "" = the default per accelerator (kvm: "host", tcg: kTcgCpuModel); otherwise passed to -cpu
  // as is
  // (e.g. "host,-arch-capabilities" after a KVM MSR abort, docs/sources.md [o1], or a named model
  // such as "qemu64").
  std::string cpu_model;
  std::filesystem::path console_log;     // receives the guest's ttyS0 (kernel console)
  std::filesystem::path result_channel;  // receives the guest's ttyS1 (results, raw bytes)
  std::filesystem::path qemu_log;        // QEMU's stdout+stderr ("" = console_log + ".qemu.log")
  // The timeouts count from the guest's start (QEMU spawned; with libvirt, the domain created).
  std::chrono::seconds wall_timeout{600};     // whole boot; 0 = none
  std::chrono::seconds silence_timeout{120};  // console did not grow this long -> stop; 0 = none
  std::chrono::seconds boot_timeout{60};  // no console byte at all within this -> stop; 0 = none
  // Instruction counting. With accel tcg QEMU loads the plugin: QemuBackend through -plugin,
  // LibvirtBackend through the domain's <qemu:commandline> (the plugin .so and the output's
  // directory must then be reachable by the user libvirt runs QEMU as; the output file itself
  // is created writable by every user). Ignored under KVM (no TCG to instrument: no plugin, no
  // output file). LibvirtHostBackend (remote hosts) refuses it.
  std::optional<InsnPluginConfig> insn_plugin;
};

// True when cfg.insn_plugin is set and the guest runs under TCG (so QEMU loads the plugin).
bool insn_plugin_active(const VmConfig& cfg);

// The cores level actually used: cfg.cores, or vcpus / (sockets * threads) when 0.
int effective_cores(const VmConfig& cfg);

// Where vCPU index `vcpu` sits in cfg's topology, as QEMU numbers x86 CPUs (threads innermost,
// then cores, then sockets; one die): thread = i % T, core = (i / T) % C, socket = i / (T * C).
// Source: QEMU include/hw/i386/topology.h, x86_topo_ids_from_idx. Pure; cfg must be valid.
struct VcpuTopologyIds {
  int socket = 0, core = 0, thread = 0;
};
VcpuTopologyIds vcpu_topology_ids(const VmConfig& cfg, int vcpu);

// Throws isolab::Error naming the field when cfg cannot describe a boot (empty name or kernel,
// vcpus < 1 or > 255, a topology level < 1 or sockets*cores*threads != vcpus (QEMU's words,
// docs/sources.md [q1]), vcpu_pin not empty and not one CPU list per vCPU, memory_mib < 64, empty
// console_log/result_channel, name with characters outside [A-Za-z0-9._-], a NUMA layout that
// does not place each vCPU on exactly one node or whose memory does not add up to memory_mib,
// an insn_plugin with an empty plugin or output path or a profile vCPU >= vcpus).
void validate_vm_config(const VmConfig& cfg);

// cfg.cmdline followed by " console=ttyS0 panic=-1" (panic=-1: reboot at once on panic, which
// -no-reboot / on_crash=destroy turn into the end of the VM; docs/sources.md [o3]), under TCG
// " no_timer_check" (what a KVM guest kernel sets by itself, Linux arch/x86/kernel/kvm.c
// paravirt_ops_setup: under slow emulation the IO-APIC timer check can miss its ticks and
// panic the boot), then insn_count_cmdline(cfg). Leading/trailing blanks of cfg.cmdline are
// trimmed.
std::string full_kernel_cmdline(const VmConfig& cfg);

// What every boot's backend adds to the line, and what a TCG boot adds after it
// (full_kernel_cmdline, below it says why).
inline constexpr const char* kEveryBootParams = "console=ttyS0 panic=-1";
inline constexpr const char* kTcgBootParams = "no_timer_check";

// What a boot the instruction-counting plugin counts adds to the line ("" otherwise, pure):
// " nokaslr" (the plugin names functions from the kernel's System.map, which a relocated kernel
// no longer matches), " clocksource=tsc" unless cfg.cmdline has a clocksource= of its own, and
// " tsc=reliable" (the kernel skips the TSC synchronization check between CPUs, whose outcome
// under emulation follows the host's timing, and the TSC watchdog; the boot's clocksource is
// then the same in every boot of a kernel, and each cell records it).
std::string insn_count_cmdline(const VmConfig& cfg);

// A kernel parameter isolab adds to the guest's line, with why (for the dry run's plan).
struct AddedParam {
  const char* param;   // "nokaslr"
  const char* reason;  // one clause, no final period
};

// The parameters insn_count_cmdline() adds, in its order, each with its reason.
const std::vector<AddedParam>& insn_count_params();

// The -cpu model of TCG boots: a named model, so that the CPUID bits the kernel picks its
// string routines by (ERMS, FSRM, REP_GOOD through the vendor and family) and its clocksource
// by (constant TSC) do not change with the QEMU version, as "max" does. IvyBridge-v1: Intel
// family 6 with ERMS (clear_page_erms, memcpy and copy_user with rep movsb) and no FSRM;
// without x2apic and tsc-deadline, which QEMU 7.2's TCG does not emulate (it warns and drops
// them), so that a QEMU that does emulate them gives the guest the same CPU.
inline constexpr const char* kTcgCpuModel = "IvyBridge-v1,-x2apic,-tsc-deadline";

// The -cpu model actually used: cfg.cpu_model, or "host" (kvm) / kTcgCpuModel (tcg) when empty.
std::string effective_cpu_model(const VmConfig& cfg);

// One QEMU thread's host CPU affinity after pinning, read back: QEMU backend from
// /proc/<pid>/task/<tid>/status Cpus_allowed_list; libvirt backend from virDomainGetVcpus
// (the vCPU thread's real affinity) and virDomainGetEmulatorPinInfo (live emulator pinning).
struct ThreadAffinity {
  std::string role;     // "vcpu" or "emulator" (main loop, I/O and worker threads)
  int vcpu = -1;        // role vcpu: the vCPU index (QMP query-cpus-fast cpu-index)
  int tid = 0;          // 0 when not known (libvirt does not report thread ids)
  std::string planned;  // the CPU list asked for
  std::string applied;  // the CPU list as read back ("" when the thread was gone)
};

// How a boot ended. The backend does not read the console: a guest panic with panic=-1 ends in
// powered_off too (QEMU exits 0; docs/sources.md [o3]); the caller classifies the console log.
struct VmOutcome {
  enum End {
    powered_off,        // the VM ended by itself with status 0 (poweroff, reboot, panic)
    wall_timeout,       // still running at wall_timeout; stopped
    silence_timeout,    // console silent for silence_timeout after first output; stopped
    boot_timeout,       // no console output within boot_timeout; stopped
    qemu_failed,        // QEMU could not start or exited non-zero / by signal on its own
    accelerator_failed  // QEMU's output shows the accelerator could not run the vCPUs
                        // (vm/qemu.h accelerator_failure: KVM MSR abort [o1], KVM entry
                        // failure [o8], ...): a host problem; detail quotes the line
  };
  End end = qemu_failed;
  int qemu_exit_code = -1;              // -1 when QEMU was stopped by us or did not start
  std::string qemu_stderr_excerpt;      // sanitized tail of the QEMU log (<= 2000 bytes)
  double seconds = 0;                   // wall time from start to end
  double seconds_to_first_output = -1;  // first console byte; -1 = never
  Accel accel = Accel::tcg;
  std::string detail;  // one line for humans: why it ended, which timeout, ...
  // With cfg.vcpu_pin: every QEMU thread's affinity once pinned (QEMU: before the guest ran;
  // libvirt: right after the domain started). Empty when pinning failed (QEMU: end is
  // qemu_failed and detail says why) or could not be read back (affinity_error says why).
  std::vector<ThreadAffinity> affinity;
  // Why `affinity` is empty although cfg.vcpu_pin was set and the VM started ("" otherwise):
  // e.g. a libvirt API that could not report the pinning.
  std::string affinity_error;
};

// "powered_off", "wall_timeout", ... (the names above).
std::string_view to_string(VmOutcome::End e);
std::string vm_end_name(VmOutcome::End e);  // the same as std::string

class VmBackend {
 public:
  virtual ~VmBackend() = default;
  // Boots cfg and returns when the VM has ended; never leaves the VM running, also when it
  // throws. Throws isolab::Error for an invalid cfg (validate_vm_config) or a backend that is
  // unusable as a whole (libvirt unreachable); a guest or QEMU failure is a VmOutcome.
  virtual VmOutcome run(const VmConfig& cfg) = 0;
  virtual std::string name() const = 0;  // "qemu" / "libvirt"
};

}  // namespace isolab
