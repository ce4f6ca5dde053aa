#include "results/host.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <sstream>

#include "base/files.h"
#include "base/json_text.h"

namespace isolab {

std::string tool_version_line(ProcessRunner& runner, const std::string& prog) {
  ProcessSpec s;
  s.argv = {prog, "--version"};
  s.timeout = std::chrono::seconds(20);
  s.stderr_to_stdout = true;
  ProcessResult r = runner.run(s);
  if (!r.start_error.empty() || r.out.empty()) return "unknown";
  std::string line = r.out.substr(0, r.out.find('\n'));
  return sanitize_excerpt(line, 200);
}

nlohmann::json host_fingerprint(ProcessRunner& runner, const std::string& source_dir) {
  nlohmann::json h;
  std::string model = "unknown";
  try {
    std::istringstream in(read_file("/proc/cpuinfo", 1 << 20));
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("model name", 0) == 0) {
        model = line.substr(line.find(':') + 2);
        break;
      }
  } catch (const std::exception&) {
  }
  h["cpu_model"] = model;
  h["nproc"] = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  struct utsname u {};
  h["host_kernel"] = ::uname(&u) == 0 ? std::string(u.release) : "unknown";
  h["qemu_version"] = tool_version_line(runner, "qemu-system-x86_64");
  h["libvirt_version"] = tool_version_line(runner, "libvirtd");
  h["compiler"] = tool_version_line(runner, "gcc");
  std::string rev = "unknown";
  ProcessSpec s;
  s.argv = {"git", "-C", source_dir, "rev-parse", "HEAD"};
  s.timeout = std::chrono::seconds(20);
  ProcessResult r = runner.run(s);
  if (r.ok() && r.out.size() >= 40) {
    rev = r.out.substr(0, 40);
    ProcessSpec d;
    d.argv = {"git", "-C", source_dir, "status", "--porcelain", "--untracked-files=no"};
    d.timeout = std::chrono::seconds(20);
    ProcessResult dr = runner.run(d);
    if (dr.ok() && !dr.out.empty()) rev += "+dirty";
  }
  h["isolab_revision"] = rev;
  return h;
}

std::string host_fingerprint_sha256(const nlohmann::json& host) {
  std::string s;
  for (const char* k : kHostFingerprintFields)
    s += std::string(k) + "=" + (host.contains(k) ? json_text(host[k]) : "null") + "\n";
  return sha256_hex(s);
}

}  // namespace isolab
