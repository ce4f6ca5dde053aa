#include "vm/vm.h"

#include <cctype>
#include <fstream>
#include <system_error>

#include "base/error.h"

namespace isolab {

namespace fs = std::filesystem;

std::string_view to_string(Accel a) { return a == Accel::kvm ? "kvm" : "tcg"; }

std::string accel_name(Accel a) { return std::string(to_string(a)); }
std::string vm_end_name(VmOutcome::End e) { return std::string(to_string(e)); }

std::string_view to_string(AccelMode m) {
  switch (m) {
    case AccelMode::auto_:
      return "auto";
    case AccelMode::kvm:
      return "kvm";
    case AccelMode::tcg:
      return "tcg";
  }
  return "?";
}

AccelMode parse_accel_mode(std::string_view s) {
  if (s == "auto") return AccelMode::auto_;
  if (s == "kvm") return AccelMode::kvm;
  if (s == "tcg") return AccelMode::tcg;
  throw Error("accelerator: expected auto, kvm or tcg, got '" + std::string(s) + "'");
}

std::string_view to_string(VmOutcome::End e) {
  switch (e) {
    case VmOutcome::powered_off:
      return "powered_off";
    case VmOutcome::wall_timeout:
      return "wall_timeout";
    case VmOutcome::silence_timeout:
      return "silence_timeout";
    case VmOutcome::boot_timeout:
      return "boot_timeout";
    case VmOutcome::qemu_failed:
      return "qemu_failed";
    case VmOutcome::accelerator_failed:
      return "accelerator_failed";
  }
  return "?";
}

bool insn_plugin_active(const VmConfig& cfg) {
  return cfg.insn_plugin.has_value() && cfg.accel == Accel::tcg;
}

int effective_cores(const VmConfig& cfg) {
  if (cfg.cores > 0) return cfg.cores;
  const int per = cfg.sockets * cfg.threads;
  return per > 0 ? cfg.vcpus / per : 0;
}

VcpuTopologyIds vcpu_topology_ids(const VmConfig& cfg, int vcpu) {
  const int threads = std::max(1, cfg.threads);
  const int cores = std::max(1, effective_cores(cfg));
  return {vcpu / (threads * cores), (vcpu / threads) % cores, vcpu % threads};
}

void validate_vm_config(const VmConfig& cfg) {
  auto bad = [&](const std::string& field, const std::string& why) {
    throw Error("vm config '" + cfg.name + "': " + field + ": " + why);
  };
  if (cfg.name.empty()) bad("name", "empty");
  for (char c : cfg.name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) bad("name", "character '" + std::string(1, c) + "' not in [A-Za-z0-9._-]");
  }
  if (cfg.kernel.empty()) bad("kernel", "empty path");
  if (cfg.vcpus < 1 || cfg.vcpus > 255)
    bad("vcpus", std::to_string(cfg.vcpus) + " is outside 1..255");
  if (cfg.sockets < 1 || cfg.cores < 0 || cfg.threads < 1 ||
      (cfg.cores == 0 && cfg.vcpus % (cfg.sockets * cfg.threads) != 0))
    bad("topology", "CPU topology parameters must be greater than zero");
  const long product = static_cast<long>(cfg.sockets) * effective_cores(cfg) * cfg.threads;
  if (product != cfg.vcpus)
    bad("topology", "Invalid CPU topology: product of the hierarchy must match maxcpus: sockets (" +
                        std::to_string(cfg.sockets) + ") * cores (" +
                        std::to_string(effective_cores(cfg)) + ") * threads (" +
                        std::to_string(cfg.threads) + ") != maxcpus (" + std::to_string(cfg.vcpus) +
                        ")");
  if (!cfg.vcpu_pin.empty() && static_cast<int>(cfg.vcpu_pin.size()) != cfg.vcpus)
    bad("vcpu_pin", std::to_string(cfg.vcpu_pin.size()) + " CPU lists for " +
                        std::to_string(cfg.vcpus) + " vCPUs");
  for (const std::string& l : cfg.vcpu_pin)
    if (l.empty() || l.find_first_not_of("0123456789,-") != std::string::npos)
      bad("vcpu_pin", "'" + l + "' is not a CPU list");
  if (!cfg.vcpu_pin.empty() &&
      (cfg.emulator_pin.empty() ||
       cfg.emulator_pin.find_first_not_of("0123456789,-") != std::string::npos))
    bad("emulator_pin", "'" + cfg.emulator_pin + "' is not a CPU list");
  if (cfg.memory_mib < 64) bad("memory_mib", std::to_string(cfg.memory_mib) + " is below 64");
  if (!cfg.numa_nodes.empty()) {
    std::vector<int> node_of(static_cast<std::size_t>(cfg.vcpus), -1);
    long total = 0;
    for (std::size_t n = 0; n < cfg.numa_nodes.size(); ++n) {
      const VmNumaNode& node = cfg.numa_nodes[n];
      const std::string field = "numa_nodes/" + std::to_string(n);
      if (node.cpus.empty()) bad(field, "no vCPU");
      if (node.memory_mib < 1) bad(field, "no memory");
      total += node.memory_mib;
      for (unsigned c : node.cpus) {
        if (c >= node_of.size()) bad(field, "vCPU " + std::to_string(c) + " does not exist");
        if (node_of[c] >= 0) bad(field, "vCPU " + std::to_string(c) + " is on two nodes");
        node_of[c] = static_cast<int>(n);
      }
    }
    for (std::size_t c = 0; c < node_of.size(); ++c)
      if (node_of[c] < 0) bad("numa_nodes", "vCPU " + std::to_string(c) + " is on no node");
    if (total != cfg.memory_mib)
      bad("numa_nodes", "the nodes hold " + std::to_string(total) + " MiB, memory_mib is " +
                            std::to_string(cfg.memory_mib));
  }
  if (cfg.insn_plugin) {
    if (cfg.insn_plugin->plugin.empty()) bad("insn_plugin", "empty plugin path");
    if (cfg.insn_plugin->output.empty()) bad("insn_plugin", "empty output path");
    for (unsigned c : cfg.insn_plugin->profile_cpus)
      if (c >= static_cast<unsigned>(cfg.vcpus))
        bad("insn_plugin", "profile vCPU " + std::to_string(c) + " does not exist");
  }
  if (cfg.console_log.empty()) bad("console_log", "empty path");
  if (cfg.result_channel.empty()) bad("result_channel", "empty path");
  if (cfg.wall_timeout.count() < 0 || cfg.silence_timeout.count() < 0 ||
      cfg.boot_timeout.count() < 0)
    bad("timeouts", "negative");
}

std::string vm_cpu_list(const std::vector<unsigned>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

const std::vector<AddedParam>& insn_count_params() {
  static const std::vector<AddedParam> params = {
      {"nokaslr",
       "KASLR would move the kernel away from its System.map, by which the instruction-counting "
       "plugin and the function profile name functions"},
      {"clocksource=tsc",
       "the same clocksource in every boot of a kernel (left out when the line chooses one)"},
      {"tsc=reliable",
       "no TSC synchronization check between CPUs nor TSC watchdog, whose outcome under "
       "emulation follows the host's timing"},
  };
  return params;
}

std::string insn_count_cmdline(const VmConfig& cfg) {
  if (!insn_plugin_active(cfg)) return "";
  bool chooses = false;
  for (std::size_t at = 0; (at = cfg.cmdline.find("clocksource=", at)) != std::string::npos; ++at)
    chooses = chooses || at == 0 || std::isspace(static_cast<unsigned char>(cfg.cmdline[at - 1]));
  std::string s;
  for (const AddedParam& p : insn_count_params())
    if (!chooses || std::string_view(p.param).rfind("clocksource=", 0) != 0)
      s += std::string(" ") + p.param;
  return s;
}

std::string full_kernel_cmdline(const VmConfig& cfg) {
  const char* ws = " \t\r\n";
  std::string s = cfg.cmdline;
  auto b = s.find_first_not_of(ws);
  s = b == std::string::npos ? std::string() : s.substr(b, s.find_last_not_of(ws) - b + 1);
  if (!s.empty()) s += ' ';
  // TCG only: a KVM guest kernel sets no_timer_check itself (arch/x86/kernel/kvm.c,
  // paravirt_ops_setup); under emulation on a loaded host the IO-APIC timer check can miss its
  // ticks and panic ("IO-APIC + timer doesn't work!", seen here under TCG at load 8).
  return s + kEveryBootParams +
         (cfg.accel == Accel::tcg ? std::string(" ") + kTcgBootParams : std::string()) +
         insn_count_cmdline(cfg);
}

std::string effective_cpu_model(const VmConfig& cfg) {
  if (!cfg.cpu_model.empty()) return cfg.cpu_model;
  return cfg.accel == Accel::kvm ? "host" : std::string(kTcgCpuModel);
}

}  // namespace isolab
