#include "vm/libvirt.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/files.h"
#include "base/xml_text.h"
#include "sys/process.h"
#include "vm/libvirt_internal.h"
#include "vm/qemu.h"
#include "vm/watch.h"

#ifdef ISOLAB_HAVE_LIBVIRT
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#endif

namespace isolab {

namespace fs = std::filesystem;

std::string xml_escape(std::string_view v, std::string_view field) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (const std::string_view e = xml_entity(c); !e.empty()) {
      out += e;
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
      throw Error("libvirt XML: " + std::string(field) + ": control byte " +
                  std::to_string(static_cast<int>(c)) + " cannot be written in XML");
    out += c;
  }
  return out;
}

std::string libvirt_cpu_xml(const std::string& model, const VmConfig& cfg) {
  // Every level given (docs/sources.md [q1]), as with QEMU's -smp.
  const std::string topo = "<topology sockets='" + std::to_string(cfg.sockets) +
                           "' dies='1' cores='" + std::to_string(effective_cores(cfg)) +
                           "' threads='" + std::to_string(cfg.threads) + "'/>";
  std::string x = libvirt_cpu_xml(model);
  if (x.size() > 3 && x.compare(x.size() - 2, 2, "/>") == 0)
    return x.substr(0, x.size() - 2) + ">" + topo + "</cpu>";
  return x.substr(0, x.size() - 6) + topo + "</cpu>";
}

std::string libvirt_cpu_xml(const std::string& model) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    auto comma = model.find(',', start);
    parts.push_back(model.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::string features;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& f = parts[i];
    if (f.size() < 2 || (f[0] != '+' && f[0] != '-'))
      throw Error("cpu model '" + model + "': feature '" + f + "' is not +name or -name");
    features += std::string("<feature policy='") + (f[0] == '+' ? "require" : "disable") +
                "' name='" + xml_escape(f.substr(1), "cpu_model") + "'/>";
  }
  const std::string& base = parts[0];
  if (base.empty()) throw Error("cpu model '" + model + "': empty model name");
  if (base == "host") {
    return features.empty() ? "<cpu mode='host-passthrough'/>"
                            : "<cpu mode='host-passthrough'>" + features + "</cpu>";
  }
  if (base == "max")
    return features.empty() ? "<cpu mode='maximum'/>"
                            : "<cpu mode='maximum'>" + features + "</cpu>";
  // QEMU's "<model>-v1" is libvirt's "<model>" (libvirt's CPU map has no version suffixes;
  // QEMU resolves the plain name to v1 on its q35 and pc machines).
  const std::string name = base.size() > 3 && base.compare(base.size() - 3, 3, "-v1") == 0
                               ? base.substr(0, base.size() - 3)
                               : base;
  return "<cpu mode='custom' match='exact'><model fallback='allow'>" +
         xml_escape(name, "cpu_model") + "</model>" + features + "</cpu>";
}

namespace {

// Adds to a <cpu> element (which already holds its <topology>) the NUMA layout: a
// <numa><cell/></numa> per node, which libvirt turns into -numa node,memdev= with a
// memory-backend-ram per cell.
std::string with_numa(const std::string& cpu, const VmConfig& cfg) {
  if (cfg.numa_nodes.empty()) return cpu;
  std::string inner = "<numa>";  // after the <topology> of libvirt_cpu_xml(model, cfg)
  for (std::size_t n = 0; n < cfg.numa_nodes.size(); ++n)
    inner += "<cell id='" + std::to_string(n) + "' cpus='" + vm_cpu_list(cfg.numa_nodes[n].cpus) +
             "' memory='" + std::to_string(cfg.numa_nodes[n].memory_mib) + "' unit='MiB'/>";
  inner += "</numa>";
  if (cpu.size() > 2 && cpu.compare(cpu.size() - 2, 2, "/>") == 0)
    return cpu.substr(0, cpu.size() - 2) + ">" + inner + "</cpu>";
  return cpu.substr(0, cpu.rfind("</cpu>")) + inner + "</cpu>";
}

}  // namespace

std::string libvirt_domain_xml(const VmConfig& cfg) {
  validate_vm_config(cfg);
  std::string x;
  x += std::string("<domain type='") + (cfg.accel == Accel::kvm ? "kvm" : "qemu") + "'" +
       (insn_plugin_active(cfg) ? " xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'" : "") +
       ">\n";
  x += "  <name>" + xml_escape(cfg.name, "name") + "</name>\n";
  x += "  <memory unit='MiB'>" + std::to_string(cfg.memory_mib) + "</memory>\n";
  x += "  <vcpu placement='static'>" + std::to_string(cfg.vcpus) + "</vcpu>\n";
  if (!cfg.vcpu_pin.empty()) {
    // No <iothreads> are defined, so there is no iothreadpin: QEMU's I/O runs in the main loop
    // and its helper threads, which emulatorpin covers.
    x += "  <cputune>\n";
    for (int v = 0; v < cfg.vcpus; ++v)
      x += "    <vcpupin vcpu='" + std::to_string(v) + "' cpuset='" +
           xml_escape(cfg.vcpu_pin[v], "vcpu_pin") + "'/>\n";
    x += "    <emulatorpin cpuset='" + xml_escape(cfg.emulator_pin, "emulator_pin") + "'/>\n";
    x += "  </cputune>\n";
  }
  x += "  <os>\n";
  x += "    <type arch='x86_64' machine='q35'>hvm</type>\n";
  x += "    <kernel>" + xml_escape(cfg.kernel.string(), "kernel") + "</kernel>\n";
  if (!cfg.initrd.empty())
    x += "    <initrd>" + xml_escape(cfg.initrd.string(), "initrd") + "</initrd>\n";
  x += "    <cmdline>" + xml_escape(full_kernel_cmdline(cfg), "cmdline") + "</cmdline>\n";
  x += "  </os>\n";
  // ACPI: the guest enumerates the secondary CPUs and reaches QEMU on power-off
  // (docs/sources.md [o5]).
  x += "  <features><acpi/></features>\n";
  x += "  " + with_numa(libvirt_cpu_xml(effective_cpu_model(cfg), cfg), cfg) + "\n";
  x += "  <clock offset='utc'/>\n";
  // A transient domain disappears when destroyed; reboot (panic=-1) ends it
  // too (docs/sources.md [o3]).
  x += "  <on_poweroff>destroy</on_poweroff>\n";
  x += "  <on_reboot>destroy</on_reboot>\n";
  x += "  <on_crash>destroy</on_crash>\n";
  x += "  <devices>\n";
  x += "    <serial type='file'><source path='" +
       xml_escape(cfg.console_log.string(), "console_log") + "'/><target port='0'/></serial>\n";
  x += "    <serial type='file'><source path='" +
       xml_escape(cfg.result_channel.string(), "result_channel") +
       "'/><target port='1'/></serial>\n";
  x += "    <controller type='usb' model='none'/>\n";
  x += "    <memballoon model='none'/>\n";
  x += "  </devices>\n";
  if (insn_plugin_active(cfg))
    x += "  <qemu:commandline>\n    <qemu:arg value='-plugin'/>\n    <qemu:arg value='" +
         xml_escape(insn_plugin_qemu_option(*cfg.insn_plugin), "insn_plugin") +
         "'/>\n  </qemu:commandline>\n";
  x += "</domain>\n";
  return x;
}

bool host_allows_mount_namespace() {
  pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    // Only async-signal-safe calls here: the parent may have threads.
    if (::unshare(CLONE_NEWNS) != 0) ::_exit(1);
    if (::mount("", "/", nullptr, MS_SLAVE | MS_REC, nullptr) != 0) ::_exit(2);
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string private_qemu_conf(bool mount_namespace) {
  std::string c =
      "# Written by isolab for its private libvirt QEMU driver (qemu:///embed); see\n"
      "# orchestrator/vm/libvirt.h. The system's /etc/libvirt is neither read nor changed.\n";
  if (::geteuid() == 0) c += "user = \"root\"\ngroup = \"root\"\n";
  c += "security_driver = \"none\"\n";
  // No chown and no trusted.libvirt.* attributes on the kernel, initramfs and result files.
  c += "dynamic_ownership = 0\nremember_owner = 0\n";
  c += "stdio_handler = \"file\"\n";
  if (!mount_namespace)
    c += "# this host cannot make / a slave mount in a new namespace (chroot or container)\n"
         "namespaces = []\n";
  return c;
}

std::string prepare_private_libvirt(const fs::path& root) {
  const fs::path abs = fs::absolute(root);
  const fs::path conf = abs / "etc" / "qemu.conf";
  std::error_code ec;
  fs::create_directories(conf.parent_path(), ec);
  if (ec)
    throw Error("private libvirt: cannot create " + conf.parent_path().string() + ": " +
                ec.message());
  const std::string text = private_qemu_conf(host_allows_mount_namespace());
  std::string old;
  try {
    if (fs::exists(conf)) old = read_file(conf, 1 << 20);
  } catch (const std::exception&) {
  }
  if (old != text) write_file_atomic(conf, text);
  return "qemu:///embed?root=" + abs.string();
}

std::string default_libvirt_uri(const fs::path& cache_dir) {
  if (const char* u = std::getenv("ISOLAB_LIBVIRT_URI"); u && *u) return u;
  return prepare_private_libvirt(cache_dir / "libvirt");
}

namespace {
constexpr std::string_view kEmbedPrefix = "qemu:///embed?root=";
}

fs::path libvirt_domain_log_dir(const std::string& uri) {
  if (uri.rfind(kEmbedPrefix, 0) == 0) {
    std::string root = uri.substr(kEmbedPrefix.size());
    root = root.substr(0, root.find('&'));
    return fs::path(root) / "log" / "qemu";
  }
  return "/var/log/libvirt/qemu";
}

#ifdef ISOLAB_HAVE_LIBVIRT

namespace libvirt_detail {

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

std::string last_error() {
  const char* m = virGetLastErrorMessage();
  return m ? m : "unknown libvirt error";
}

[[noreturn]] void throw_libvirt(const std::string& op) {
  throw Error("libvirt " + op + ": " + last_error());
}

ConnHandle open_connection(const std::string& uri) {
  if (uri.rfind(kEmbedPrefix, 0) == 0) {
    // The embedded driver logs warnings to stderr by default; keep them in its log directory
    // (read when libvirt initializes, so before its first call; a user's setting wins).
    const fs::path log = libvirt_domain_log_dir(uri).parent_path() / "libvirt.log";
    std::error_code ec;
    fs::create_directories(log.parent_path(), ec);
    ::setenv("LIBVIRT_LOG_OUTPUTS", ("3:file:" + log.string()).c_str(), 0);
  }
  virSetErrorFunc(nullptr, quiet_libvirt_errors);
  if (uri.rfind(kEmbedPrefix, 0) == 0) ensure_event_loop();
  ConnHandle c(virConnectOpen(uri.c_str()));
  if (!c) throw_libvirt("virConnectOpen(" + uri + ")");
  return c;
}

std::string version_string(unsigned long v) {
  return std::to_string(v / 1000000) + "." + std::to_string(v / 1000 % 1000) + "." +
         std::to_string(v % 1000);
}

}  // namespace libvirt_detail

namespace {

using namespace libvirt_detail;

// The per-domain log libvirtd keeps (QEMU's stderr and libvirt's own lines).
std::string domain_log_tail(const std::string& uri, const std::string& name) {
  try {
    std::string s = read_file(libvirt_domain_log_dir(uri) / (name + ".log"), 4 << 20);
    if (s.size() > 2000) s = s.substr(s.size() - 2000);
    return sanitize_excerpt(s, 2000);
  } catch (const std::exception&) {
    return {};
  }
}

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

}  // namespace

LibvirtReach libvirt_reachability(const std::string& uri) {
  LibvirtReach r;
  try {
    ConnHandle c = open_connection(uri);
    unsigned long lib = 0, hv = 0;
    if (virConnectGetLibVersion(c.get(), &lib) < 0) throw_libvirt("virConnectGetLibVersion");
    if (virConnectGetVersion(c.get(), &hv) < 0) throw_libvirt("virConnectGetVersion");
    r.ok = true;
    r.detail = "libvirt " + version_string(lib) + ", hypervisor " + version_string(hv);
  } catch (const std::exception& e) {
    r.detail = e.what();
  }
  return r;
}

VmOutcome LibvirtBackend::run(const VmConfig& cfg) {
  const std::string xml = libvirt_domain_xml(cfg);  // validates
  prepare_output_files(cfg);
  ConnHandle conn = open_connection(uri_);
  DomainWatch w;
  w.console_bytes = [&] { return file_size_or_zero(cfg.console_log); };
  w.log_tail = [&] { return domain_log_tail(uri_, cfg.name); };
  w.poll = poll_;
  return run_domain(conn.get(), xml, cfg, w);
}

namespace libvirt_detail {

namespace {

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
  const auto t0 = std::chrono::steady_clock::now();
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

}  // namespace libvirt_detail

#else  // !ISOLAB_HAVE_LIBVIRT

LibvirtReach libvirt_reachability(const std::string&) { return {false, "built without libvirt"}; }

VmOutcome LibvirtBackend::run(const VmConfig&) {
  throw Error("libvirt backend: isolab was built without libvirt (libvirt-dev not found)");
}

#endif

}  // namespace isolab
