// QEMU direct kernel boot: the argv (pure), the per-architecture quirks, and the QEMU backend.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/process.h"
#include "vm/vm.h"

namespace isolab {

// Everything that differs per guest architecture lives here (only x86_64 so far).
struct QemuArchQuirks {
  std::string binary;  // "qemu-system-x86_64"
  // -machine value. q35 with ACPI on: without ACPI (or an MP table) a guest sees only the boot
  // CPU and "poweroff -f" halts instead of ending QEMU (docs/sources.md [o5]).
  std::string machine;
  std::string kvm_cpu;    // default -cpu under KVM: "host"
  std::string tcg_cpu;    // default -cpu under TCG: kTcgCpuModel (vm/vm.h)
  std::string tcg_accel;  // -accel value for TCG: "tcg,thread=multi" (one host thread per vCPU)
  // -cpu models to try in order under KVM when the accelerator fails (accelerator_failure:
  // "failed to set MSR", docs/sources.md [o1]; a KVM entry failure, [o8]): host, host without the
  // IA32_ARCH_CAPABILITIES MSR (0x10a), then a named model that exposes no such MSR.
  std::vector<std::string> kvm_cpu_fallbacks;
  // The guest devices of the two serial ports, in order: console, result channel.
  std::string console_tty;  // "ttyS0"
  std::string result_tty;   // "ttyS1"
};

const QemuArchQuirks& x86_64_quirks();

// QEMU's option parser splits values at ',' and reads ",," as a literal comma; paths inside
// -chardev path=... go through this. "a,b" -> "a,,b".
std::string qemu_escape_option_value(std::string_view v);

// The options that give QEMU no default devices, no user configuration, no display and no
// monitor (pure): -nodefaults -no-user-config -display none -monitor none. -nodefaults drops the
// default NIC, VGA, serial/parallel ports and monitor (q35 keeps its built-in LPC/AHCI).
std::vector<std::string> qemu_bare_options();

// The value of QEMU's -plugin option for p (pure):
//   file=<plugin>,out=<output>[,profile_cpus=<vm_cpu_list>][,symbols=<System.map>][,count=steps]
// with every comma inside a value doubled (qemu_escape_option_value); QEMU hands the plugin
// "out=<output>", "profile_cpus=<list>", ... as its arguments.
std::string insn_plugin_qemu_option(const InsnPluginConfig& p);

// The QEMU command line for cfg, as an argv vector (never a shell string). Pure. Shape:
//   qemu-system-x86_64 -name <name> -machine q35,acpi=on -accel kvm | -accel tcg,thread=multi
//   -cpu <effective_cpu_model> -smp <vcpus>,sockets=S,cores=C,threads=T -m <memory_mib>
//   -nodefaults -no-user-config -display none -monitor none
//   -chardev file,id=con,path=<console_log> -serial chardev:con        (guest ttyS0)
//   -chardev file,id=res,path=<result_channel> -serial chardev:res     (guest ttyS1)
//   -kernel <kernel>
//   [NUMA, when cfg.numa_nodes is set:
//    per node i: -object memory-backend-ram,id=numa-mem<i>,size=<MiB>M
//                -numa node,nodeid=<i>,memdev=numa-mem<i>
//    per vCPU c on node i: -numa cpu,node-id=<i>,socket-id=S,core-id=C,thread-id=T
//    (c's place in the topology, threads innermost: vcpu_topology_ids)]
//   [-initrd <initrd>] -append <full_kernel_cmdline> -no-reboot
//   [-qmp unix:<qmp_socket_path>,server=on,wait=off -S]   (only with cfg.vcpu_pin)
//   [-plugin <insn_plugin_qemu_option>]                     (only with insn_plugin_active)
// -no-reboot turns the guest's reboot (and panic=-1) into QEMU exiting with status 0. Every
// -smp level is given (docs/sources.md [q1]: "-smp 8" alone means 8 sockets on old machine types
// and 8 cores on new ones). With pinning QEMU starts paused (-S) until its threads are pinned.
// Throws isolab::Error via validate_vm_config for an invalid cfg.
std::vector<std::string> qemu_argv(const VmConfig& cfg,
                                   const QemuArchQuirks& arch = x86_64_quirks());

// The QMP socket of a pinned boot: <temp dir>/isolab-qmp-<cfg.name>.sock (short enough for
// sun_path). Pure.
std::filesystem::path qmp_socket_path(const VmConfig& cfg);

// True when QEMU's stderr shows one of its CPU topology errors (docs/sources.md [q1]: "Invalid CPU
// topology: product of the hierarchy must match maxcpus ...", "maxcpus must be equal to or
// greater than smp", "CPU topology parameters must be greater than zero"): a configuration
// error, not the kernel's and not worth a retry.
bool is_qemu_topology_error(std::string_view qemu_stderr);

// The line of QEMU's or libvirt's error output that says the host could not place the guest's
// threads on the CPUs asked for (docs/sources.md [q2]): "cannot set CPU affinity on process",
// or a write to a cgroup's "cpuset.cpus" refused ("Permission denied", "Invalid argument"). A
// host CPU offline or outside the parent cgroup's cpuset: host configuration, not the guest's
// failure. Trimmed and sanitized to at most 300 bytes; nullopt when there is none.
std::optional<std::string> host_cpu_placement_error(std::string_view output);

// The line of QEMU's output (stderr, or libvirt's domain log) that shows the accelerator could
// not run the guest's vCPUs, trimmed and sanitized to at most 300 bytes; nullopt when there is
// none. A host or accelerator failure, never the guest kernel's (docs/sources.md [o1], [o8]):
//   "failed to set MSR" / "kvm_buf_set_msrs"  KVM's MSR abort: a host CPU-model problem
//   "KVM: entry failed, hardware error"      KVM refused to enter the guest (0x80000021: an
//                                              invalid guest state under nested VMX); QEMU
//                                              pauses the VM and prints a register dump
//   "enabling virtualization on CPU"         the host kernel could not enable VT-x/AMD-V
//   "failed to initialize kvm" / "KVM"       QEMU could not open or set up KVM at all
//   "Could not access KVM kernel module"
// The first matching line wins.
std::optional<std::string> accelerator_failure(std::string_view qemu_output);

// qemu-command.sh beside cfg.console_log (the cell's directory).
std::filesystem::path qemu_command_file(const VmConfig& cfg);

// Writes qemu_command_file(cfg): "#!/bin/sh", a comment, then "exec " and argv as one shell
// command (base/shell_words.h), kernel, initramfs and plugin paths included, so that a person
// can boot the same guest again by hand. QemuBackend::run calls it before starting QEMU.
// Throws isolab::Error when the file cannot be written.
void write_qemu_command(const VmConfig& cfg, const std::vector<std::string>& argv);

// Runs QEMU as a child of the ProcessRunner (own process group). With cfg.vcpu_pin it pins
// first: QMP query-cpus-fast gives the vCPU thread ids, sched_setaffinity pins them and every
// other thread (vm/qmp.h), the affinity read back goes to VmOutcome::affinity, then QMP "cont";
// a pinning failure ends QEMU and is a qemu_failed outcome "host CPU pinning: ...". It polls
// the console size every
// poll interval, enforces the VmConfig timeouts by terminating the group, and reports. The
// result channel and the console are left in their files for the caller. On every exit path
// (return, exception, destruction of the runner's Process) the QEMU group is killed.
class QemuBackend : public VmBackend {
 public:
  explicit QemuBackend(ProcessRunner& runner,
                       std::chrono::milliseconds poll = std::chrono::milliseconds(100))
      : runner_(runner), poll_(poll) {}
  VmOutcome run(const VmConfig& cfg) override;
  std::string name() const override { return "qemu"; }

 private:
  ProcessRunner& runner_;
  std::chrono::milliseconds poll_;
};

}  // namespace isolab
