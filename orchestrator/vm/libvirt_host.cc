#include "vm/libvirt_host.h"

#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <vector>

#include "base/files.h"
#include "base/json_text.h"
#include "vm/libvirt.h"
#include "vm/libvirt_internal.h"
#include "vm/watch.h"

namespace isolab {

namespace fs = std::filesystem;

nlohmann::json fingerprint_comparable(const HostFingerprint& f) {
  return {{"arch", f.arch},
          {"cpu_vendor", f.cpu_vendor},
          {"cpu_model", f.cpu_model},
          {"cpus", f.cpus},
          {"libvirt_version", f.libvirt_version},
          {"hypervisor", f.hypervisor},
          {"hypervisor_version", f.hypervisor_version},
          {"kvm", f.kvm}};
}

std::string fingerprint_sha256(const HostFingerprint& f) {
  return sha256_hex(json_text(fingerprint_comparable(f)));
}

nlohmann::json to_json(const HostFingerprint& f) {
  nlohmann::json j = fingerprint_comparable(f);
  j["uri"] = f.uri;
  j["hostname"] = f.hostname;
  j["fingerprint_sha256"] = fingerprint_sha256(f);
  return j;
}

namespace {

// The text between <tag> (or <tag attr...>) and </tag> within [from, to), or "".
std::string element_text(const std::string& x, const std::string& tag, std::size_t from,
                         std::size_t to) {
  for (std::size_t p = x.find("<" + tag, from); p != std::string::npos && p < to;
       p = x.find("<" + tag, p + 1)) {
    const char after = p + tag.size() + 1 < x.size() ? x[p + tag.size() + 1] : '\0';
    if (after != '>' && after != ' ') continue;  // <model> but not <modelx>
    const auto open_end = x.find('>', p);
    const auto close = x.find("</" + tag + ">", open_end);
    if (open_end == std::string::npos || close == std::string::npos || close > to) return "";
    return x.substr(open_end + 1, close - open_end - 1);
  }
  return "";
}

}  // namespace

CapabilitiesCpu parse_capabilities_host_cpu(const std::string& x) {
  const auto host = x.find("<host>");
  const auto host_end = x.find("</host>", host == std::string::npos ? 0 : host);
  const auto cpu = host == std::string::npos ? host : x.find("<cpu>", host);
  const auto cpu_end = cpu == std::string::npos ? cpu : x.find("</cpu>", cpu);
  if (host == std::string::npos || host_end == std::string::npos || cpu == std::string::npos ||
      cpu_end == std::string::npos || cpu_end > host_end)
    throw Error("libvirt capabilities: no <host><cpu> element");
  return {element_text(x, "arch", cpu, cpu_end), element_text(x, "vendor", cpu, cpu_end),
          element_text(x, "model", cpu, cpu_end),
          x.find("<domain type='kvm'") != std::string::npos};
}

std::string isolab_pool_xml(const std::string& dir) {
  if (dir.empty() || dir.front() != '/')
    throw Error("libvirt pool " + std::string(kIsolabPoolName) + ": pool_dir '" + dir +
                "' must be an absolute path");
  return std::string("<pool type='dir'><name>") + kIsolabPoolName + "</name><target><path>" +
         xml_escape(dir, "pool_dir") + "</path></target></pool>";
}

std::string raw_volume_xml(const std::string& name, std::uint64_t bytes) {
  return "<volume><name>" + xml_escape(name, "volume name") + "</name><capacity unit='bytes'>" +
         std::to_string(bytes) +
         "</capacity><target><format type='raw'/><permissions><mode>0644</mode></permissions>"
         "</target></volume>";
}

#ifdef ISOLAB_HAVE_LIBVIRT

using namespace libvirt_detail;

struct LibvirtHost::Impl {
  ConnHandle conn;
  virStoragePoolPtr pool = nullptr;
  std::string uri;

  ~Impl() {
    if (pool) virStoragePoolFree(pool);
  }
  // Throws LibvirtHostLost when the connection died, else Error for op.
  [[noreturn]] void fail(const std::string& op) {
    const std::string msg = last_error();
    if (virConnectIsAlive(conn.get()) != 1) throw LibvirtHostLost(uri, op + ": " + msg);
    throw Error("libvirt " + op + " on " + uri + ": " + msg);
  }

  // The volume's path on the host; fail() when libvirt gives none (a daemon that went away
  // between creating the volume and this call: the host is lost, not the path empty).
  std::string volume_path(virStorageVolPtr vol, const std::string& name) {
    char* path = virStorageVolGetPath(vol);
    if (!path) fail("virStorageVolGetPath(" + name + ")");
    std::string r = path;
    free(path);
    return r;
  }
};

namespace {

struct VolDeleter {
  void operator()(virStorageVolPtr v) const { virStorageVolFree(v); }
};
using VolHandle = std::unique_ptr<virStorageVol, VolDeleter>;

struct StreamDeleter {
  void operator()(virStreamPtr s) const { virStreamFree(s); }
};
using StreamHandle = std::unique_ptr<virStream, StreamDeleter>;

std::string owned_string(char* s) {
  std::string r = s ? s : "";
  free(s);
  return r;
}

bool is_system_uri(const std::string& uri) {
  const auto q = uri.find('?');
  const std::string base = uri.substr(0, q);
  return base.size() >= 7 && base.compare(base.size() - 7, 7, "/system") == 0;
}

}  // namespace

LibvirtHost::LibvirtHost(LibvirtHostSpec spec) : spec_(std::move(spec)), impl_(new Impl) {
  // A daemon that goes away makes the next write on its socket raise SIGPIPE, which would end
  // isolab instead of failing the call; libvirt leaves ignoring it to the application. Child
  // processes get the default back (sys/process.cc).
  ::signal(SIGPIPE, SIG_IGN);
  Impl& m = *impl_;
  m.uri = spec_.uri;
  // Keepalive needs the client's event loop; the embedded driver starts it itself.
  const bool embedded = spec_.uri.rfind("qemu:///embed", 0) == 0;
  if (!embedded) ensure_event_loop();
  m.conn = open_connection(spec_.uri);
  if (!embedded) virConnectSetKeepAlive(m.conn.get(), 5, 3);  // fails harmlessly if unsupported

  fp_.uri = spec_.uri;
  fp_.hostname = owned_string(virConnectGetHostname(m.conn.get()));
  unsigned long lib = 0, hv = 0;
  if (virConnectGetLibVersion(m.conn.get(), &lib) < 0) m.fail("virConnectGetLibVersion");
  if (virConnectGetVersion(m.conn.get(), &hv) < 0) m.fail("virConnectGetVersion");
  fp_.libvirt_version = version_string(lib);
  fp_.hypervisor_version = version_string(hv);
  if (const char* t = virConnectGetType(m.conn.get())) fp_.hypervisor = t;
  virNodeInfo ni{};
  if (virNodeGetInfo(m.conn.get(), &ni) == 0) fp_.cpus = ni.cpus;
  const std::string caps = owned_string(virConnectGetCapabilities(m.conn.get()));
  if (caps.empty()) m.fail("virConnectGetCapabilities");
  CapabilitiesCpu cpu = parse_capabilities_host_cpu(caps);
  fp_.arch = cpu.arch;
  fp_.cpu_vendor = cpu.vendor;
  fp_.cpu_model = cpu.model;
  fp_.kvm = cpu.kvm;

  // The pool: reuse, or define at pool_dir.
  m.pool = virStoragePoolLookupByName(m.conn.get(), kIsolabPoolName);
  if (!m.pool) {
    std::string dir = spec_.pool_dir;
    if (dir.empty() && is_system_uri(spec_.uri)) dir = "/var/lib/libvirt/isolab";
    if (dir.empty())
      throw Error("host " + spec_.uri + ": it has no storage pool '" + kIsolabPoolName +
                  "' and no pool_dir was given for it (spec /hosts/N/pool_dir)");
    m.pool = virStoragePoolDefineXML(m.conn.get(), isolab_pool_xml(dir).c_str(), 0);
    if (!m.pool) m.fail("virStoragePoolDefineXML(" + dir + ")");
    if (virStoragePoolBuild(m.pool, 0) < 0) m.fail("virStoragePoolBuild(" + dir + ")");
    virStoragePoolSetAutostart(m.pool, 1);
  }
  if (virStoragePoolIsActive(m.pool) != 1 && virStoragePoolCreate(m.pool, 0) < 0)
    m.fail("virStoragePoolCreate(isolab)");
  if (virStoragePoolRefresh(m.pool, 0) < 0) m.fail("virStoragePoolRefresh(isolab)");
  const std::string xml = owned_string(virStoragePoolGetXMLDesc(m.pool, 0));
  const auto t = xml.find("<target>");
  pool_dir_ = element_text(xml, "path", t == std::string::npos ? 0 : t, xml.size());
}

LibvirtHost::~LibvirtHost() = default;

void LibvirtHost::check_alive(const std::string& message) {
  if (virConnectIsAlive(impl_->conn.get()) != 1) throw LibvirtHostLost(spec_.uri, message);
}

std::string LibvirtHost::upload(const fs::path& local, const std::string& name,
                                bool keep_existing) {
  Impl& m = *impl_;
  const std::uint64_t size = fs::file_size(local);
  VolHandle vol(virStorageVolLookupByName(m.pool, name.c_str()));
  if (vol && keep_existing) {
    virStorageVolInfo info{};
    if (virStorageVolGetInfo(vol.get(), &info) == 0 && info.capacity == size)
      return m.volume_path(vol.get(), name);
  }
  if (vol) {
    virStorageVolDelete(vol.get(), 0);
    vol.reset();
  }
  vol.reset(virStorageVolCreateXML(m.pool, raw_volume_xml(name, size).c_str(), 0));
  if (!vol) m.fail("virStorageVolCreateXML(" + name + ")");
  StreamHandle st(virStreamNew(m.conn.get(), 0));
  if (!st) m.fail("virStreamNew");
  if (virStorageVolUpload(vol.get(), st.get(), 0, size, 0) < 0)
    m.fail("virStorageVolUpload(" + name + ")");
  std::ifstream in(local, std::ios::binary);
  if (!in) throw Error("upload to " + spec_.uri + ": cannot read " + local.string());
  std::vector<char> buf(1 << 18);
  std::uint64_t sent = 0;
  while (sent < size) {
    in.read(buf.data(),
            static_cast<std::streamsize>(std::min<std::uint64_t>(buf.size(), size - sent)));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) {
      virStreamAbort(st.get());
      throw Error("upload to " + spec_.uri + ": " + local.string() + " shrank while reading");
    }
    for (std::size_t off = 0; off < got;) {
      const int n = virStreamSend(st.get(), buf.data() + off, got - off);
      if (n < 0) {
        virStreamAbort(st.get());
        m.fail("virStreamSend(" + name + ")");
      }
      off += static_cast<std::size_t>(n);
    }
    sent += got;
  }
  if (virStreamFinish(st.get()) < 0) m.fail("virStreamFinish(" + name + ")");
  return m.volume_path(vol.get(), name);
}

std::string LibvirtHost::create_empty(const std::string& name) {
  Impl& m = *impl_;
  remove(name);
  VolHandle vol(virStorageVolCreateXML(m.pool, raw_volume_xml(name, 0).c_str(), 0));
  if (!vol) m.fail("virStorageVolCreateXML(" + name + ")");
  return m.volume_path(vol.get(), name);
}

std::uint64_t LibvirtHost::volume_bytes(const std::string& name) {
  Impl& m = *impl_;
  VolHandle vol(virStorageVolLookupByName(m.pool, name.c_str()));
  if (!vol) m.fail("virStorageVolLookupByName(" + name + ")");
  virStorageVolInfo info{};
  if (virStorageVolGetInfo(vol.get(), &info) < 0) m.fail("virStorageVolGetInfo(" + name + ")");
  return info.capacity;
}

void LibvirtHost::download(const std::string& name, const fs::path& local,
                           std::uint64_t max_bytes) {
  Impl& m = *impl_;
  VolHandle vol(virStorageVolLookupByName(m.pool, name.c_str()));
  if (!vol) m.fail("virStorageVolLookupByName(" + name + ")");
  StreamHandle st(virStreamNew(m.conn.get(), 0));
  if (!st) m.fail("virStreamNew");
  if (virStorageVolDownload(vol.get(), st.get(), 0, 0, 0) < 0)
    m.fail("virStorageVolDownload(" + name + ")");
  std::ofstream out(local, std::ios::binary | std::ios::trunc);
  if (!out) {
    virStreamAbort(st.get());
    throw Error("download from " + spec_.uri + ": cannot write " + local.string());
  }
  std::vector<char> buf(1 << 18);
  std::uint64_t total = 0;
  for (;;) {
    const int n = virStreamRecv(st.get(), buf.data(), buf.size());
    if (n < 0) {
      virStreamAbort(st.get());
      m.fail("virStreamRecv(" + name + ")");
    }
    if (n == 0) break;
    total += static_cast<std::uint64_t>(n);
    if (total > max_bytes) {
      virStreamAbort(st.get());
      throw Error("download from " + spec_.uri + ": volume " + name + " is larger than " +
                  std::to_string(max_bytes) + " bytes");
    }
    out.write(buf.data(), n);
  }
  if (virStreamFinish(st.get()) < 0) m.fail("virStreamFinish(" + name + ")");
  if (!out.flush()) throw Error("download from " + spec_.uri + ": cannot write " + local.string());
}

void LibvirtHost::remove(const std::string& name) noexcept {
  VolHandle vol(virStorageVolLookupByName(impl_->pool, name.c_str()));
  if (vol) virStorageVolDelete(vol.get(), 0);
}

std::vector<std::string> LibvirtHost::volumes() {
  Impl& m = *impl_;
  if (virStoragePoolRefresh(m.pool, 0) < 0) m.fail("virStoragePoolRefresh(isolab)");
  virStorageVolPtr* vols = nullptr;
  const int n = virStoragePoolListAllVolumes(m.pool, &vols, 0);
  if (n < 0) m.fail("virStoragePoolListAllVolumes(isolab)");
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    if (const char* s = virStorageVolGetName(vols[i])) names.emplace_back(s);
    virStorageVolFree(vols[i]);
  }
  free(vols);
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// "kernel-<16 hex>": the same file (path, size, mtime) maps to the same volume.
std::string kernel_volume_name(const fs::path& kernel) {
  struct stat st {};
  if (::stat(kernel.c_str(), &st) != 0) throw Error("kernel " + kernel.string() + ": missing");
  const std::string id = fs::absolute(kernel).string() + "\n" + std::to_string(st.st_size) + "\n" +
                         std::to_string(st.st_mtim.tv_sec) + "." +
                         std::to_string(st.st_mtim.tv_nsec);
  return "kernel-" + sha256_hex(id).substr(0, 16);
}

}  // namespace

VmOutcome LibvirtHostBackend::run(const VmConfig& cfg) {
  validate_vm_config(cfg);
  if (insn_plugin_active(cfg))
    throw Error("vm '" + cfg.name + "': instruction counting (insn_plugin) is not supported on " +
                "remote libvirt hosts: the plugin and its output would be on " + host_.spec().uri);
  prepare_output_files(cfg);
  const std::string console = cfg.name + ".console", results = cfg.name + ".results",
                    initrd = cfg.name + ".initrd";
  struct Cleanup {
    LibvirtHost& h;
    std::vector<std::string> names;
    ~Cleanup() {
      for (const auto& n : names) h.remove(n);
    }
  } cleanup{host_, {console, results, initrd}};

  VmConfig remote = cfg;
  remote.kernel = host_.upload(cfg.kernel, kernel_volume_name(cfg.kernel), true);
  if (!cfg.initrd.empty()) remote.initrd = host_.upload(cfg.initrd, initrd, false);
  remote.console_log = host_.create_empty(console);
  remote.result_channel = host_.create_empty(results);

  DomainWatch w;
  w.console_bytes = [&] { return host_.volume_bytes(console); };
  w.log_tail = [] { return std::string(); };
  w.check_alive = [&](const std::string& message) { host_.check_alive(message); };
  w.poll = poll_;
  w.create_flags = VIR_DOMAIN_START_AUTODESTROY;
  const std::string xml = libvirt_domain_xml(remote);
  write_domain_files(host_.impl().conn.get(), xml, cfg);
  VmOutcome out = run_domain(host_.impl().conn.get(), xml, remote, w);
  host_.download(console, cfg.console_log, 64u << 20);
  host_.download(results, cfg.result_channel, 512u << 20);
  return out;
}

#else  // !ISOLAB_HAVE_LIBVIRT

struct LibvirtHost::Impl {};
LibvirtHost::LibvirtHost(LibvirtHostSpec spec) : spec_(std::move(spec)) {
  throw Error("libvirt hosts: isolab was built without libvirt (libvirt-dev not found)");
}
LibvirtHost::~LibvirtHost() = default;
void LibvirtHost::check_alive(const std::string&) {}
std::string LibvirtHost::upload(const fs::path&, const std::string&, bool) { return {}; }
std::string LibvirtHost::create_empty(const std::string&) { return {}; }
std::uint64_t LibvirtHost::volume_bytes(const std::string&) { return 0; }
void LibvirtHost::download(const std::string&, const fs::path&, std::uint64_t) {}
void LibvirtHost::remove(const std::string&) noexcept {}
std::vector<std::string> LibvirtHost::volumes() { return {}; }
VmOutcome LibvirtHostBackend::run(const VmConfig&) {
  throw Error("libvirt backend: isolab was built without libvirt (libvirt-dev not found)");
}

#endif

}  // namespace isolab
