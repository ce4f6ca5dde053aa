#include "pipeline/doctor.h"

#include <unistd.h>

#include <sstream>

#include "kernel/kernel.h"
#include "results/host.h"
#include "vm/accel.h"
#include "vm/libvirt.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {

namespace {

std::string which(const std::string& prog) {
  const char* path = std::getenv("PATH");
  std::istringstream in(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(in, dir, ':')) {
    fs::path p = fs::path(dir) / prog;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

}  // namespace

json insn_plugin_facts(ProcessRunner& runner, const InsnPluginFiles& files,
                       const fs::path& work_dir) {
  InsnPluginPreflight p = preflight_insn_plugin(runner, files, work_dir);
  return {{"plugin", files.plugin.string()},
          {"test_guest", files.test_guest.string()},
          {"ok", p.ok},
          {"error", p.error},
          {"seconds", p.seconds},
          {"plugin_api", p.plugin_api},
          {"qemu_api", std::to_string(p.qemu_api_min) + "-" + std::to_string(p.qemu_api_max)}};
}

std::string insn_plugin_text(const json& f) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f", f.value("seconds", 0.0));
  if (!f.value("ok", false)) return "FAILED   " + f.value("error", "") + "\n";
  return "ok       QEMU insn-count plugin: " + f.value("plugin", "") + " (preflight " + secs +
         " s, QEMU plugin API " + f.value("qemu_api", "") + ")\n";
}

json doctor(ProcessRunner& runner, const fs::path& vmstat_overhead,
            const InsnPluginFiles& insn_plugin) {
  json j;
  fs::path work = fs::temp_directory_path() / ("isolab-doctor-" + std::to_string(::getpid()));
  fs::create_directories(work);
  std::string libvirt_uri;
  try {
    libvirt_uri = default_libvirt_uri(default_cache_dir());
  } catch (const std::exception& e) {
    libvirt_uri = std::string("isolab-private-libvirt-unavailable: ") + e.what();
  }
  VmDoctorFacts v = vm_doctor_facts(runner, work, true, libvirt_uri);
  j["insn_plugin"] = insn_plugin_facts(runner, insn_plugin, work / "insn-plugin");
  std::error_code ec;
  fs::remove_all(work, ec);
  j["qemu"] = {{"path", v.qemu_path}, {"version", v.qemu_version}, {"error", v.qemu_error}};
  json kvm = {{"dev_present", v.dev_kvm_present}, {"dev_openable", v.dev_kvm_openable}};
  if (v.kvm_probe) {
    kvm["works"] = v.kvm_probe->works;
    kvm["cpu_model"] = v.kvm_probe->cpu_model;
    kvm["reason"] = v.kvm_probe->reason;
    kvm["probe_seconds"] = v.kvm_probe->seconds;
    kvm["attempts"] = v.kvm_probe->attempts;
  } else {
    kvm["works"] = false;
    kvm["reason"] = v.dev_kvm_present ? "/dev/kvm cannot be opened" : "/dev/kvm does not exist";
  }
  j["kvm"] = kvm;
  j["libvirt"] = {{"reachable", v.libvirt_reachable}, {"detail", v.libvirt_detail}};
  for (const char* tool : {"gcc", "make", "git", "ccache", "flex", "bison", "bc"})
    j["build_tools"][tool] = which(tool).empty() ? "" : tool_version_line(runner, tool);
  fs::path src = "/usr/src/linux-source-6.1.tar.xz";
  j["kernel_source"] = {
      {"path", src.string()},
      {"present", fs::exists(src, ec)},
      {"bytes", fs::exists(src, ec) ? static_cast<long>(fs::file_size(src, ec)) : 0}};
  j["guest_tools"] = {
      {"busybox", fs::exists("/bin/busybox", ec) ? "/bin/busybox" : ""},
      {"cyclictest", which("cyclictest")},
      {"stress-ng", which("stress-ng")},
      {"vmstat-overhead", fs::exists(vmstat_overhead, ec) ? vmstat_overhead.string() : ""}};
  j["cache_dir"] = default_cache_dir().string();
  j["nproc"] = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  return j;
}

std::string doctor_text(const json& f) {
  std::ostringstream o;
  auto line = [&](bool ok, const std::string& what, const std::string& detail) {
    o << (ok ? "ok       " : "MISSING  ") << what << (detail.empty() ? "" : ": " + detail) << "\n";
  };
  line(!f["qemu"]["version"].get<std::string>().empty(), "QEMU",
       f["qemu"]["path"].get<std::string>() + " " + f["qemu"]["version"].get<std::string>() +
           f["qemu"]["error"].get<std::string>());
  bool kvm = f["kvm"].value("works", false);
  o << (kvm ? "ok       " : "no       ") << "KVM: " << f["kvm"].value("reason", "") << "\n";
  if (!kvm)
    o << "         runs will use TCG (software emulation); every result records the accelerator\n";
  line(f["libvirt"].value("reachable", false), "libvirt", f["libvirt"].value("detail", ""));
  if (f.contains("insn_plugin")) o << insn_plugin_text(f["insn_plugin"]);
  for (auto it = f["build_tools"].begin(); it != f["build_tools"].end(); ++it)
    line(!it->get<std::string>().empty(), it.key(), it->get<std::string>());
  line(f["kernel_source"].value("present", false), "kernel source",
       f["kernel_source"].value("path", ""));
  for (auto it = f["guest_tools"].begin(); it != f["guest_tools"].end(); ++it)
    line(!it->get<std::string>().empty(), "guest " + it.key(), it->get<std::string>());
  o << "         cache: " << f.value("cache_dir", "") << ", host CPUs: " << f.value("nproc", 0)
    << "\n";
  return o.str();
}

}  // namespace isolab
