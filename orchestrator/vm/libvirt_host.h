// Several measurement hosts through libvirt: one libvirt connection per host (any URI:
// qemu+ssh://host/system, qemu+tcp://..., qemu:///system, qemu+unix:///session?socket=...),
// a directory storage pool "isolab" on each host that receives the kernel and initramfs by
// libvirt's own volume upload (virStorageVolCreateXML + virStorageVolUpload over a virStream:
// no scp of ours), and a backend that boots a cell there and brings its console and result
// channel back by volume download.
//
// Why volumes for the guest's output: the guest's two serial ports are type='file' devices, and
// on a remote host those files are on that host. They are created as (empty) volumes of the
// pool, so that the console's growth can be watched with virStorageVolGetInfo (the timeouts of
// vm/watch.h work unchanged) and both files are fetched whole with virStorageVolDownload after
// the domain ended. The bytes stay on the host until fetched, so a connection that drops for a
// moment loses nothing, unlike a live virDomainOpenConsole stream (which also needs a pty
// serial and only carries one port per stream). The host's qemu.conf should say
// stdio_handler = "file": with virtlogd, libvirt sends file serial ports through virtlogd,
// which rolls them over at its max_size (2 MiB by default).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "vm/vm.h"

namespace isolab {

// One host as the spec or the command line names it.
struct LibvirtHostSpec {
  std::string uri;
  // Target directory of the pool "isolab" when the host has none yet; "" = the host's existing
  // pool "isolab", else /var/lib/libvirt/isolab for a ".../system" URI (other URIs then throw).
  std::string pool_dir;
};

// The name of the storage pool isolab uses (and defines when absent) on every host.
inline constexpr const char* kIsolabPoolName = "isolab";

// What identifies a host's measurement conditions (virConnectGetHostname, GetLibVersion,
// GetVersion, GetType, virNodeGetInfo and the <host><cpu> of virConnectGetCapabilities).
struct HostFingerprint {
  std::string uri;
  std::string hostname;
  std::string arch;                // "x86_64"
  std::string cpu_vendor;          // "Intel", "AMD" ("" when the capabilities name none)
  std::string cpu_model;           // libvirt's name for the host CPU model ("Skylake-Client-IBRS")
  unsigned cpus = 0;               // logical CPUs of the host (virNodeInfo.cpus)
  std::string libvirt_version;     // "9.0.0"
  std::string hypervisor;          // "QEMU"
  std::string hypervisor_version;  // "7.2.22"
  bool kvm = false;                // the capabilities offer <domain type='kvm'> (else TCG only)
};

// The fields of a fingerprint that decide whether two hosts measure alike: everything but the
// URI and the hostname (kvm included) (two identical machines have different names). Pure.
nlohmann::json fingerprint_comparable(const HostFingerprint& f);

// sha256 (hex) of json_text(fingerprint_comparable(f)).
std::string fingerprint_sha256(const HostFingerprint& f);

// {"uri","hostname","arch","cpu_vendor","cpu_model","cpus","libvirt_version","hypervisor",
//  "hypervisor_version","kvm","fingerprint_sha256"}.
nlohmann::json to_json(const HostFingerprint& f);

// The arch, vendor and model of the <host><cpu> element of a capabilities document (pure; a
// substring scan of libvirt's own well-formed output, not a general XML parser). Missing
// elements give "". Throws isolab::Error when there is no <host> element with a <cpu>.
struct CapabilitiesCpu {
  std::string arch, vendor, model;
  bool kvm = false;  // some <guest> offers <domain type='kvm'>
};
CapabilitiesCpu parse_capabilities_host_cpu(const std::string& capabilities_xml);

// The pool definition isolab creates: <pool type='dir'><name>isolab</name><target><path>DIR
// </path></target></pool> (pure, escaped). Throws isolab::Error for a relative dir.
std::string isolab_pool_xml(const std::string& dir);

// The <volume> for a raw file volume of `bytes` bytes, mode 0644 (pure, escaped).
std::string raw_volume_xml(const std::string& name, std::uint64_t bytes);

// The connection to a host was lost (the daemon or the network went away): the pipeline
// re-plans the host's cells elsewhere. what(): "host <uri> lost: <libvirt message>".
class LibvirtHostLost : public Error {
 public:
  LibvirtHostLost(std::string uri, const std::string& message)
      : Error("host " + uri + " lost: " + message), uri_(std::move(uri)) {}
  const std::string& uri() const { return uri_; }

 private:
  std::string uri_;
};

// An open connection to one host and its pool "isolab". Every method throws LibvirtHostLost
// when the connection is gone, isolab::Error "libvirt <operation>: <message>" for any other
// failure. Not thread-safe. Without ISOLAB_HAVE_LIBVIRT the constructor throws.
class LibvirtHost {
 public:
  // Connects (remote URIs with keepalive 5 s x 3), reads the fingerprint and makes sure the
  // pool exists, is built, active and autostarted (defining it at spec.pool_dir when absent).
  // Sets SIGPIPE to ignored for the process (a lost daemon must fail a call, not end isolab).
  explicit LibvirtHost(LibvirtHostSpec spec);
  ~LibvirtHost();
  LibvirtHost(const LibvirtHost&) = delete;
  LibvirtHost& operator=(const LibvirtHost&) = delete;

  const LibvirtHostSpec& spec() const { return spec_; }
  const HostFingerprint& fingerprint() const { return fp_; }
  const std::string& pool_dir() const { return pool_dir_; }  // the pool's target path

  // Creates volume `name` with the size of `local` and uploads the file into it; with
  // keep_existing, a volume of that name and size is reused as is. Returns its path on the host.
  std::string upload(const std::filesystem::path& local, const std::string& name,
                     bool keep_existing);
  // Creates an empty volume (removing an old one of that name); returns its path on the host.
  std::string create_empty(const std::string& name);
  // The volume's current size in bytes (its capacity as the pool's backend re-reads it).
  std::uint64_t volume_bytes(const std::string& name);
  // Copies the whole volume into `local` (replaced), at most max_bytes (more throws).
  void download(const std::string& name, const std::filesystem::path& local,
                std::uint64_t max_bytes);
  // Deletes the volume; never throws (a missing volume is fine).
  void remove(const std::string& name) noexcept;
  // Names of the pool's volumes (after a refresh), sorted.
  std::vector<std::string> volumes();
  // Throws LibvirtHostLost (with `message`, libvirt's last error) when virConnectIsAlive says
  // the connection is gone.
  void check_alive(const std::string& message = "connection closed");

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  LibvirtHostSpec spec_;
  HostFingerprint fp_;
  std::string pool_dir_;
  std::unique_ptr<Impl> impl_;
};

// Boots cells on one LibvirtHost (which must outlive it): uploads cfg.kernel (volume
// "kernel-<16 hex of sha256(path, size, mtime)>", kept for later cells) and cfg.initrd (volume
// "<name>.initrd"), creates "<name>.console" and "<name>.results", runs the domain (with
// VIR_DOMAIN_START_AUTODESTROY: it dies with isolab's connection) with those
// host paths (libvirt_domain_xml) and the timeouts of cfg against the console volume's size,
// then downloads both into cfg.console_log and cfg.result_channel and deletes the cell's
// volumes. The outcome is LibvirtBackend's, except that the QEMU log of a remote host is not
// read (qemu_stderr_excerpt holds libvirt's error only). Throws LibvirtHostLost when the host
// goes away during the cell, and isolab::Error for a cfg with insn_plugin_active (not supported
// on remote hosts).
class LibvirtHostBackend : public VmBackend {
 public:
  explicit LibvirtHostBackend(LibvirtHost& host,
                              std::chrono::milliseconds poll = std::chrono::milliseconds(250))
      : host_(host), poll_(poll) {}
  VmOutcome run(const VmConfig& cfg) override;
  std::string name() const override { return "libvirt"; }

 private:
  LibvirtHost& host_;
  std::chrono::milliseconds poll_;
};

}  // namespace isolab
