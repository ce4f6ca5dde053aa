#include "vm/watch.h"

#include <fstream>
#include <system_error>

#include "base/error.h"

namespace isolab {

namespace fs = std::filesystem;

void observe_console(ConsoleProgress& p, std::uintmax_t size_now, double now) {
  if (size_now > p.size) {
    if (p.first_output < 0) p.first_output = now;
    p.last_growth = now;
    p.size = size_now;
  }
}

std::optional<VmOutcome::End> expired_timeout(const VmConfig& cfg, const ConsoleProgress& p,
                                              double now) {
  auto secs = [](std::chrono::seconds s) { return static_cast<double>(s.count()); };
  if (cfg.wall_timeout.count() > 0 && now >= secs(cfg.wall_timeout)) return VmOutcome::wall_timeout;
  if (p.first_output < 0) {
    if (cfg.boot_timeout.count() > 0 && now >= secs(cfg.boot_timeout))
      return VmOutcome::boot_timeout;
  } else if (cfg.silence_timeout.count() > 0 && now - p.last_growth >= secs(cfg.silence_timeout)) {
    return VmOutcome::silence_timeout;
  }
  return std::nullopt;
}

std::string describe_timeout(VmOutcome::End e, const VmConfig& cfg, const ConsoleProgress& p) {
  auto fmt = [](double d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", d);
    return std::string(buf);
  };
  switch (e) {
    case VmOutcome::wall_timeout:
      return "still running after the wall-clock limit of " +
             std::to_string(cfg.wall_timeout.count()) + " s; stopped";
    case VmOutcome::boot_timeout:
      return "no console output within " + std::to_string(cfg.boot_timeout.count()) + " s; stopped";
    case VmOutcome::silence_timeout:
      return "console silent for " + std::to_string(cfg.silence_timeout.count()) +
             " s (last output at " + fmt(p.last_growth) + " s, " + std::to_string(p.size) +
             " bytes); stopped";
    default:
      return std::string(to_string(e));
  }
}

std::uintmax_t file_size_or_zero(const fs::path& path) {
  std::error_code ec;
  auto n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

fs::path effective_qemu_log(const VmConfig& cfg) {
  if (!cfg.qemu_log.empty()) return cfg.qemu_log;
  fs::path p = cfg.console_log;
  p += ".qemu.log";
  return p;
}

void prepare_output_files(const VmConfig& cfg) {
  std::vector<fs::path> files = {cfg.console_log, cfg.result_channel, effective_qemu_log(cfg)};
  if (insn_plugin_active(cfg)) files.push_back(cfg.insn_plugin->output);
  for (const fs::path& p : files) {
    std::error_code ec;
    if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
    fs::remove(p, ec);
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    if (!f) throw Error("vm '" + cfg.name + "': cannot create output file " + p.string());
  }
  if (!insn_plugin_active(cfg)) return;
  // QEMU opens it itself (the plugin's out=): under libvirt as libvirt's QEMU user, whose
  // dynamic ownership relabels only the devices libvirt knows of.
  std::error_code ec;
  fs::permissions(cfg.insn_plugin->output, fs::perms(0666), fs::perm_options::replace, ec);
  if (ec)
    throw Error("vm '" + cfg.name + "': cannot make " + cfg.insn_plugin->output.string() +
                " writable: " + ec.message());
}

}  // namespace isolab
