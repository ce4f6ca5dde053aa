#include "vm/libvirt.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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

#ifdef ISOLAB_HAVE_LIBVIRT

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
  write_domain_files(conn.get(), xml, cfg);
  DomainWatch w;
  w.console_bytes = [&] { return file_size_or_zero(cfg.console_log); };
  w.log_tail = [&] { return domain_log_tail(uri_, cfg.name); };
  w.poll = poll_;
  return run_domain(conn.get(), xml, cfg, w);
}

#else  // !ISOLAB_HAVE_LIBVIRT

LibvirtReach libvirt_reachability(const std::string&) { return {false, "built without libvirt"}; }

VmOutcome LibvirtBackend::run(const VmConfig&) {
  throw Error("libvirt backend: isolab was built without libvirt (libvirt-dev not found)");
}

#endif

}  // namespace isolab
