// The libvirt backend: the same boot as QemuBackend, as a transient libvirt domain
// (qemu:///system by default) with direct kernel boot.
#pragma once

#include <string>
#include <string_view>

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

// The transient domain XML for cfg (pure; every value XML-escaped). Shape:
//   <domain type='qemu'|'kvm'> <name/> <memory unit='MiB'/> <vcpu/>
//   <os><type arch='x86_64' machine='q35'>hvm</type><kernel/><initrd/><cmdline/></os>
//   <features><acpi/></features>   (without ACPI the guest sees one CPU and cannot power off;
//                                    case O5)
//   <cpu .../> <on_poweroff|on_reboot|on_crash>destroy</...>
//   <devices> serial 0 (file console_log), serial 1 (file result_channel), no USB, no balloon
// The command line is full_kernel_cmdline(cfg). Throws isolab::Error for an invalid cfg.
std::string libvirt_domain_xml(const VmConfig& cfg);

struct LibvirtReach {
  bool ok = false;
  std::string detail;  // "libvirt 9.0.0, hypervisor 7.2.22" or the wrapped error
};
// Opens and closes a connection to uri. Never throws. Without ISOLAB_HAVE_LIBVIRT: ok=false,
// detail "built without libvirt".
LibvirtReach libvirt_reachability(const std::string& uri = "qemu:///system");

// Runs cfg as a transient domain. run() throws isolab::Error "libvirt <operation>: <message>"
// when the connection cannot be opened; a domain that fails to start is a VmOutcome
// (qemu_failed, or host_cpu_msr_error for case O1). Progress and timeouts as in QemuBackend
// (console file size); a timeout destroys the domain. The domain is destroyed on every exit
// path. Without ISOLAB_HAVE_LIBVIRT, run() throws isolab::Error "built without libvirt".
class LibvirtBackend : public VmBackend {
 public:
  explicit LibvirtBackend(std::string uri = "qemu:///system",
                          std::chrono::milliseconds poll = std::chrono::milliseconds(100))
      : uri_(std::move(uri)), poll_(poll) {}
  VmOutcome run(const VmConfig& cfg) override;
  std::string name() const override { return "libvirt"; }

 private:
  std::string uri_;
  std::chrono::milliseconds poll_;
};

}  // namespace isolab
