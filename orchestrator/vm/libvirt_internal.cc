#include "vm/libvirt_internal.h"

#ifdef ISOLAB_HAVE_LIBVIRT

#include <libvirt/virterror.h>

#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/files.h"
#include "sys/process.h"
#include "vm/libvirt_paths.h"
#include "vm/qemu.h"
#include "vm/watch.h"

namespace isolab::libvirt_detail {

namespace fs = std::filesystem;

// The embedded driver needs an event loop in this process (QEMU monitor, process exits):
// libvirt's default implementation, run by one detached thread for the process's lifetime.
void ensure_event_loop() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (virEventRegisterDefaultImpl() < 0) return;
    std::thread([] {
      for (;;) virEventRunDefaultImpl();
    }).detach();
  });
}

// libvirt prints every error to stderr by default; we report them ourselves.
void quiet_libvirt_errors(void*, virErrorPtr) {}

void write_domain_files(virConnectPtr conn, const std::string& xml, const VmConfig& cfg) {
  write_file_atomic(cfg.console_log.parent_path() / "domain.xml", xml);
  char* native = virConnectDomainXMLToNative(conn, "qemu-argv", xml.c_str(), 0);
  if (native == nullptr) return;
  const std::string argv = native;
  std::free(native);  // NOLINT(cppcoreguidelines-no-malloc): libvirt's string, freed as it says
  write_file_atomic(qemu_command_file(cfg),
                    "#!/bin/sh\n# The QEMU command libvirt derives from domain.xml "
                    "(virConnectDomainXMLToNative, qemu-argv). libvirt\n# runs it with its own "
                    "monitor socket and private directories: `virsh create domain.xml`\n# on the "
                    "same host boots this guest again through libvirt.\n" +
                        argv + "\n");
}

std::string last_error() {
  const char* m = virGetLastErrorMessage();
  return m ? m : "unknown libvirt error";
}

[[noreturn]] void throw_libvirt(const std::string& op) {
  throw Error("libvirt " + op + ": " + last_error());
}

ConnHandle open_connection(const std::string& uri) {
  if (uri.rfind(kEmbedUriPrefix, 0) == 0) {
    // The embedded driver logs warnings to stderr by default; keep them in its log directory
    // (read when libvirt initializes, so before its first call; a user's setting wins).
    const fs::path log = libvirt_domain_log_dir(uri).parent_path() / "libvirt.log";
    std::error_code ec;
    fs::create_directories(log.parent_path(), ec);
    ::setenv("LIBVIRT_LOG_OUTPUTS", ("3:file:" + log.string()).c_str(), 0);
  }
  virSetErrorFunc(nullptr, quiet_libvirt_errors);
  if (uri.rfind(kEmbedUriPrefix, 0) == 0) ensure_event_loop();
  ConnHandle c(virConnectOpen(uri.c_str()));
  if (!c) throw_libvirt("virConnectOpen(" + uri + ")");
  return c;
}

std::string version_string(unsigned long v) {
  return std::to_string(v / 1000000) + "." + std::to_string(v / 1000 % 1000) + "." +
         std::to_string(v % 1000);
}

namespace {

// One CPU map of libvirt's (a bit per host CPU, CPU 0 in bit 0 of byte 0) as a CPU list.
std::string cpumap_list(const unsigned char* map, int maplen) {
  std::vector<unsigned> cpus;
  for (int b = 0; b < maplen * 8; ++b)
    if (map[b / 8] & (1u << (b % 8))) cpus.push_back(static_cast<unsigned>(b));
  return vm_cpu_list(cpus);
}

// What libvirt reports of the pinning it applied (cfg.vcpu_pin set): per vCPU the thread's
// real affinity (virDomainGetVcpus reads it from the running thread, its tid is not given)
// and the emulator threads' live pinning (virDomainGetEmulatorPinInfo, AFFECT_LIVE). Works on
// remote connections too. An API failure returns nothing and says why in `error`.
std::vector<ThreadAffinity> libvirt_affinity(virDomainPtr dom, const VmConfig& cfg,
                                             std::string& error) {
  std::vector<ThreadAffinity> out;
  const int ncpus = virNodeGetCPUMap(virDomainGetConnect(dom), nullptr, nullptr, 0);
  if (ncpus <= 0) {
    error = "libvirt virNodeGetCPUMap: " + last_error();
    return out;
  }
  const int maplen = VIR_CPU_MAPLEN(ncpus);
  std::vector<virVcpuInfo> info(static_cast<std::size_t>(cfg.vcpus));
  std::vector<unsigned char> maps(static_cast<std::size_t>(maplen) * cfg.vcpus);
  const int n = virDomainGetVcpus(dom, info.data(), cfg.vcpus, maps.data(), maplen);
  std::vector<unsigned char> emu(static_cast<std::size_t>(maplen));
  if (n != cfg.vcpus) {
    error = "libvirt virDomainGetVcpus: " + (n < 0 ? last_error() : std::to_string(n) + " vCPUs");
    return out;
  }
  if (virDomainGetEmulatorPinInfo(dom, emu.data(), maplen, VIR_DOMAIN_AFFECT_LIVE) < 0) {
    error = "libvirt virDomainGetEmulatorPinInfo: " + last_error();
    return out;
  }
  for (int v = 0; v < cfg.vcpus; ++v)
    out.push_back({"vcpu", v, 0, cfg.vcpu_pin[v],
                   cpumap_list(VIR_GET_CPUMAP(maps.data(), maplen, v), maplen)});
  out.push_back({"emulator", -1, 0, cfg.emulator_pin, cpumap_list(emu.data(), maplen)});
  return out;
}

// A paused domain never goes on by itself (isolab pauses none): QEMU stops the VM on a KVM entry
// failure (docs/sources.md [o8]) or an I/O error and keeps running. Such a domain is destroyed
// and out says why: an accelerator failure quoting QEMU's line when its log has one, else a QEMU
// failure naming libvirt's pause reason. False while the domain is not paused.
bool ended_paused(virDomainPtr dom, const DomainWatch& w, VmOutcome& out) {
  int state = 0, reason = 0;
  if (virDomainGetState(dom, &state, &reason, 0) < 0 || state != VIR_DOMAIN_PAUSED) return false;
  virDomainDestroy(dom);
  out.qemu_stderr_excerpt = w.log_tail();
  if (auto line = accelerator_failure(out.qemu_stderr_excerpt)) {
    out.end = VmOutcome::accelerator_failed;
    out.detail = "the accelerator could not run the guest: " + *line +
                 " (libvirt: domain paused; destroyed)";
  } else {
    out.end = VmOutcome::qemu_failed;
    out.detail =
        "libvirt: domain paused (virDomainPausedReason " + std::to_string(reason) + "); destroyed";
  }
  return true;
}

}  // namespace

VmOutcome run_domain(virConnectPtr conn, const std::string& xml, const VmConfig& cfg,
                     const DomainWatch& w) {
  VmOutcome out;
  out.accel = cfg.accel;
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  DomainHandle dom(virDomainCreateXML(conn, xml.c_str(), w.create_flags));
  if (!dom) {
    std::string msg = last_error();
    if (w.check_alive) w.check_alive(msg);
    out.seconds = elapsed();
    out.qemu_stderr_excerpt = sanitize_excerpt(msg, 2000);
    out.end = accelerator_failure(msg) ? VmOutcome::accelerator_failed : VmOutcome::qemu_failed;
    out.detail = "libvirt virDomainCreateXML: " + sanitize_excerpt(msg, 500);
    return out;
  }
  // The timeouts count from the guest's start: libvirt's own start of the domain (an embedded
  // driver probes QEMU's capabilities before its first one, tens of seconds under TCG) is not
  // the guest's time.
  t0 = std::chrono::steady_clock::now();
  if (!cfg.vcpu_pin.empty()) out.affinity = libvirt_affinity(dom.get(), cfg, out.affinity_error);
  ConsoleProgress progress;
  for (;;) {
    std::this_thread::sleep_for(w.poll);
    double now = elapsed();
    observe_console(progress, w.console_bytes(), now);
    // A transient domain that ended is gone: IsActive returns 0, or -1 with "no domain".
    int active = virDomainIsActive(dom.get());
    if (active < 0 && w.check_alive) w.check_alive(last_error());
    if (active != 1) {
      out.seconds = now;
      out.seconds_to_first_output = progress.first_output;
      out.qemu_stderr_excerpt = w.log_tail();
      // libvirt logs "shutting down, reason=shutdown" for a guest power-off; "crashed" or
      // "failed" mean QEMU itself died.
      const std::string& log = out.qemu_stderr_excerpt;
      auto last = log.rfind("reason=");
      std::string reason = last == std::string::npos
                               ? ""
                               : log.substr(last + 7, log.find_first_of(" \n", last) - last - 7);
      if (reason == "crashed" || reason == "failed") {
        out.end = accelerator_failure(log) ? VmOutcome::accelerator_failed : VmOutcome::qemu_failed;
        out.detail = "libvirt: domain ended, reason=" + reason;
      } else {
        out.end = VmOutcome::powered_off;
        out.qemu_exit_code = 0;
        out.detail = "libvirt: domain ended" + (reason.empty() ? "" : ", reason=" + reason);
      }
      return out;
    }
    if (ended_paused(dom.get(), w, out)) {
      out.seconds = now;
      out.seconds_to_first_output = progress.first_output;
      return out;
    }
    if (interrupt_requested()) {
      virDomainDestroy(dom.get());
      out.end = VmOutcome::qemu_failed;
      out.seconds = elapsed();
      out.seconds_to_first_output = progress.first_output;
      out.detail = "interrupted";
      return out;
    }
    if (auto e = expired_timeout(cfg, progress, now)) {
      if (virDomainDestroy(dom.get()) < 0 && virDomainIsActive(dom.get()) == 1)
        throw_libvirt("virDomainDestroy(" + cfg.name + ")");
      out.end = *e;
      out.seconds = elapsed();
      out.seconds_to_first_output = progress.first_output;
      out.qemu_stderr_excerpt = w.log_tail();
      out.detail = describe_timeout(*e, cfg, progress);
      return out;
    }
  }
}

}  // namespace isolab::libvirt_detail

#endif  // ISOLAB_HAVE_LIBVIRT
