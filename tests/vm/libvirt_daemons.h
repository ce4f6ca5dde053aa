// vm tier fixture: stand-in measurement hosts. Each is a libvirtd of its own, run in session
// mode as the unprivileged user `nobody` with its own HOME, XDG_RUNTIME_DIR, XDG_CONFIG_HOME,
// XDG_CACHE_HOME and XDG_DATA_HOME under a test directory, so two of them share nothing (as
// root, libvirtd's state directories are fixed). Clients connect with
// qemu+unix:///session?socket=<dir>/run/libvirt/libvirt-sock (root may use nobody's socket).
// Their qemu.conf sets stdio_handler = "file" (no virtlogd: serial files are written whole and
// no helper daemon is left behind). Guests run under TCG (nobody cannot open /dev/kvm).
// Keep dir short: the daemon puts each domain's QEMU monitor socket at
// <dir>/config/libvirt/qemu/lib/domain-<id>-<name>/monitor.sock, and a UNIX socket path has at
// most 107 bytes ("UNIX socket path ... too long" from virDomainCreateXML otherwise).
#pragma once

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/files.h"
#include "sys/process.h"

namespace isolab::vmtest {

class LibvirtDaemon {
 public:
  static constexpr uid_t kUid = 65534;  // nobody
  static constexpr gid_t kGid = 65534;  // nogroup

  // Starts the daemon under dir (created, owned by nobody) and waits up to 30 s for its socket.
  // Throws isolab::Error with libvirtd's output when it does not come up.
  explicit LibvirtDaemon(std::filesystem::path dir) : dir_(std::move(dir)) {
    namespace fs = std::filesystem;
    for (const char* sub : {"home", "run", "config/libvirt", "cache", "data"})
      fs::create_directories(dir_ / sub);
    write_file_atomic(dir_ / "config/libvirt/qemu.conf", "stdio_handler = \"file\"\n");
    for (auto& e : fs::recursive_directory_iterator(dir_))
      (void)::chown(e.path().c_str(), kUid, kGid);
    (void)::chown(dir_.c_str(), kUid, kGid);
    ::chmod((dir_ / "run").c_str(), 0700);
    ProcessSpec ps;
    ps.argv = {"setpriv",
               "--reuid=65534",
               "--regid=65534",
               "--clear-groups",
               "env",
               "-i",
               "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
               "HOME=" + (dir_ / "home").string(),
               "XDG_RUNTIME_DIR=" + (dir_ / "run").string(),
               "XDG_CONFIG_HOME=" + (dir_ / "config").string(),
               "XDG_CACHE_HOME=" + (dir_ / "cache").string(),
               "XDG_DATA_HOME=" + (dir_ / "data").string(),
               "libvirtd",
               "--daemon"};
    ps.stderr_path = dir_ / "libvirtd.start.log";
    ps.timeout = std::chrono::seconds(60);
    ProcessResult r = make_real_runner()->run(ps);
    for (int i = 0; i < 300 && !std::filesystem::exists(socket()); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!std::filesystem::exists(socket()) || read_pid() <= 0) {
      stop();
      throw Error("libvirtd in " + dir_.string() + " did not start (exit " +
                  std::to_string(r.exit_code) + "): " + r.out);
    }
  }
  ~LibvirtDaemon() { stop(); }
  LibvirtDaemon(const LibvirtDaemon&) = delete;
  LibvirtDaemon& operator=(const LibvirtDaemon&) = delete;

  std::filesystem::path socket() const { return dir_ / "run/libvirt/libvirt-sock"; }
  std::string uri() const { return "qemu+unix:///session?socket=" + socket().string(); }
  // Where the test lets isolab define the pool "isolab" (inside nobody's data dir).
  std::string pool_dir() const { return (dir_ / "data/isolab-pool").string(); }
  pid_t pid() const { return read_pid(); }

  // SIGTERM to the daemon (the pid it wrote), SIGKILL after 15 s; waits until it is gone.
  void stop() {
    const pid_t pid = read_pid();
    if (pid <= 0 || ::kill(pid, 0) != 0) return;
    ::kill(pid, SIGTERM);
    for (int i = 0; i < 150 && ::kill(pid, 0) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (::kill(pid, 0) == 0) ::kill(pid, SIGKILL);
    for (int i = 0; i < 50 && ::kill(pid, 0) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

 private:
  pid_t read_pid() const {
    try {
      return static_cast<pid_t>(std::stol(read_file(dir_ / "run/libvirt/libvirtd.pid", 64)));
    } catch (const std::exception&) {
      return -1;
    }
  }
  std::filesystem::path dir_;
};

}  // namespace isolab::vmtest
