// Internal to the libvirt backends (vm/libvirt.cc, vm/libvirt_host.cc): connection handles and
// the domain watch loop they share. Only with ISOLAB_HAVE_LIBVIRT.
#pragma once

#ifdef ISOLAB_HAVE_LIBVIRT

#include <libvirt/libvirt.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "vm/vm.h"

namespace isolab::libvirt_detail {

struct ConnDeleter {
  void operator()(virConnectPtr c) const { virConnectClose(c); }
};
using ConnHandle = std::unique_ptr<virConnect, ConnDeleter>;

// Destroys the domain if it still runs, then frees the handle.
struct DomainDeleter {
  void operator()(virDomainPtr d) const {
    if (virDomainIsActive(d) == 1) virDomainDestroy(d);
    virDomainFree(d);
  }
};
using DomainHandle = std::unique_ptr<virDomain, DomainDeleter>;

// libvirt's last error message of this thread ("unknown libvirt error" when none).
std::string last_error();

// Throws isolab::Error "libvirt <op>: <last_error()>".
[[noreturn]] void throw_libvirt(const std::string& op);

// Opens uri (embed URIs: the in-process event loop and log file first, see
// libvirt_reachability). Throws isolab::Error "libvirt virConnectOpen(<uri>): ...".
ConnHandle open_connection(const std::string& uri);

// Starts libvirt's default event loop in a detached thread, once per process (needed by the
// embedded driver and by keepalive on remote connections; call before virConnectOpen).
void ensure_event_loop();

// "9.0.0" for libvirt's encoded version 9000000.
std::string version_string(unsigned long v);

// Writes what a person needs to boot the domain again by hand beside cfg.console_log:
// domain.xml (xml as given, which `virsh create domain.xml` on the connection's host starts) and
// qemu-command.sh (libvirt's own rendering of it as a QEMU command line,
// virConnectDomainXMLToNative "qemu-argv", with a comment saying that libvirt adds its monitor
// socket and private directories when it runs it). qemu-command.sh is left out when libvirt
// cannot render the domain. Throws isolab::Error when a file cannot be written.
void write_domain_files(virConnectPtr conn, const std::string& xml, const VmConfig& cfg);

// What run_domain watches besides the domain itself.
struct DomainWatch {
  std::function<std::uint64_t()> console_bytes;  // current size of the guest console, bytes
  std::function<std::string()> log_tail;         // sanitized end of the domain's QEMU log
  // Called with libvirt's message when a call on the domain failed: throws when the connection
  // is gone (LibvirtHostLost, vm/libvirt_host.h); empty: no check.
  std::function<void(const std::string&)> check_alive;
  std::chrono::milliseconds poll{100};
  unsigned create_flags = 0;  // virDomainCreateXML flags (VIR_DOMAIN_START_AUTODESTROY)
};

// Starts the transient domain xml on conn and waits for its end, applying cfg's timeouts to
// w.console_bytes() (vm/watch.h) and destroying the domain on timeout, interrupt and every exit
// path. A domain that is paused (QEMU stops the VM on a KVM entry failure) is destroyed at the
// next poll: accelerator_failed when w.log_tail() holds QEMU's accelerator line
// (vm/qemu.h accelerator_failure), else qemu_failed naming the pause. Returns the outcome as
// LibvirtBackend::run documents it.
VmOutcome run_domain(virConnectPtr conn, const std::string& xml, const VmConfig& cfg,
                     const DomainWatch& w);

}  // namespace isolab::libvirt_detail

#endif
