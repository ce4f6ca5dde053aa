// The libvirt backend: the same boot as QemuBackend, as a transient libvirt domain with direct
// kernel boot. By default on isolab's private libvirt: the QEMU driver embedded in this process
// (URI qemu:///embed?root=DIR, libvirt >= 6.1) with its own configuration, state, logs and
// sockets under DIR, so nothing under /etc/libvirt is read or changed. Any other URI
// (qemu:///system, qemu+ssh://...) works too and then uses that daemon's configuration.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "vm/libvirt_paths.h"
#include "vm/vm.h"

namespace isolab {

// Escapes &, <, >, ' and " as XML entities (so "]]>" becomes "]]&gt;"). Bytes below 0x20
// other than tab/newline/CR cannot appear in XML 1.0 at all: they throw isolab::Error naming
// the field. field is used only in that message.
std::string xml_escape(std::string_view value, std::string_view field);

// The <cpu> element for a QEMU -cpu string (pure): "host" -> host-passthrough, "max" ->
// mode='maximum', "host,-arch-capabilities" -> host-passthrough with that feature disabled,
// "<model>[,+f|,-f...]" -> custom model (fallback allow) with required/disabled features.
std::string libvirt_cpu_xml(const std::string& qemu_cpu_model);
// The same with cfg's topology inside: <topology sockets='S' dies='1' cores='C' threads='T'/>.
std::string libvirt_cpu_xml(const std::string& qemu_cpu_model, const VmConfig& cfg);

// The transient domain XML for cfg (pure; every value XML-escaped). Shape:
//   <domain type='qemu'|'kvm'> <name/> <memory unit='MiB'/> <vcpu/>
//   [<cputune><vcpupin vcpu='i' cpuset='...'/>... <emulatorpin cpuset='...'/></cputune>]
//                                   (with cfg.vcpu_pin)
//   <os><type arch='x86_64' machine='q35'>hvm</type><kernel/><initrd/><cmdline/></os>
//   <features><acpi/></features>   (without ACPI the guest sees one CPU and cannot power off;
//                                    docs/sources.md [o5])
//   <cpu ...><topology sockets= dies='1' cores= threads=/>
//            [NUMA: <numa><cell id='<i>' cpus='<list>' memory='<MiB>' unit='MiB'/>...</numa>]</cpu>
//   <on_poweroff|on_reboot|on_crash>destroy</...>
//   <devices> serial 0 (file console_log), serial 1 (file result_channel), no USB, no balloon
//   [with insn_plugin_active(cfg): the domain element declares
//    xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0' and ends with
//    <qemu:commandline><qemu:arg value='-plugin'/><qemu:arg value='<insn_plugin_qemu_option>'/>
//    </qemu:commandline> (libvirt passes the arguments to QEMU as they are)]
// The command line is full_kernel_cmdline(cfg). Throws isolab::Error for an invalid cfg.
std::string libvirt_domain_xml(const VmConfig& cfg);

// Whether this host lets a process make "/" a slave mount in a new mount namespace, which is
// what libvirt's QEMU driver does for each domain's private /dev (namespaces = ["mount"]). False
// in a chroot (where "/" is no mount point) and in containers that forbid it; libvirt then fails
// with "Failed disable mount propagation out of the root filesystem". Runs the check in a forked
// child (unshare(CLONE_NEWNS), mount(MS_SLAVE|MS_REC) of "/"); never throws.
bool host_allows_mount_namespace();

// The qemu.conf of the private driver (pure): QEMU runs as the calling user (root: user/group
// "root"), no security driver and no relabelling (dynamic_ownership = 0, remember_owner = 0:
// the domain's files are isolab's own and keep their owner and xattrs), QEMU's stdio to a plain
// file (no virtlogd), and namespaces = [] unless mount_namespace. Format: libvirt's
// src/qemu/qemu.conf.in (key = value lines).
std::string private_qemu_conf(bool mount_namespace);

// Creates root/etc/qemu.conf (private_qemu_conf(host_allows_mount_namespace())), rewriting it
// only when its content differs, and returns "qemu:///embed?root=<absolute root>". One process
// at a time may use a root (libvirt locks root/run/qemu/driver.pid). Throws isolab::Error naming
// the path when root cannot be created or written.
std::string prepare_private_libvirt(const std::filesystem::path& root);

// $ISOLAB_LIBVIRT_URI when set and non-empty, else prepare_private_libvirt(cache_dir/"libvirt").
std::string default_libvirt_uri(const std::filesystem::path& cache_dir);

struct LibvirtReach {
  bool ok = false;
  std::string detail;  // "libvirt 9.0.0, hypervisor 7.2.22" or the wrapped error
};
// Opens and closes a connection to uri (an embed URI starts libvirt's event loop thread in this
// process first, once, and sends libvirt's own log to <root>/log/libvirt.log unless
// $LIBVIRT_LOG_OUTPUTS is set). Never throws. Without ISOLAB_HAVE_LIBVIRT: ok=false,
// detail "built without libvirt".
LibvirtReach libvirt_reachability(const std::string& uri);

// Runs cfg as a transient domain. run() throws isolab::Error "libvirt <operation>: <message>"
// when the connection cannot be opened; a domain that fails to start is a VmOutcome
// (qemu_failed, or accelerator_failed when vm/qemu.h accelerator_failure finds its line). Progress
// and timeouts as in QemuBackend (console file size); a timeout destroys the domain. The domain is
// destroyed on every exit path, and also when interrupt_requested() (sys/process.h) turns true:
// run() then returns VmOutcome::qemu_failed with detail "interrupted". Without ISOLAB_HAVE_LIBVIRT,
// run() throws isolab::Error "built without libvirt".
class LibvirtBackend : public VmBackend {
 public:
  explicit LibvirtBackend(std::string uri,
                          std::chrono::milliseconds poll = std::chrono::milliseconds(100))
      : uri_(std::move(uri)), poll_(poll) {}
  VmOutcome run(const VmConfig& cfg) override;
  std::string name() const override { return "libvirt"; }

 private:
  std::string uri_;
  std::chrono::milliseconds poll_;
};

}  // namespace isolab
