#include "vm/qemu.h"

#include <algorithm>
#include <thread>

#include "base/error.h"
#include "base/files.h"
#include "base/shell_words.h"
#include "vm/qmp.h"
#include "vm/watch.h"

namespace isolab {

namespace fs = std::filesystem;

const QemuArchQuirks& x86_64_quirks() {
  static const QemuArchQuirks q{
      .binary = "qemu-system-x86_64",
      .machine = "q35,acpi=on",
      .kvm_cpu = "host",
      .tcg_cpu = kTcgCpuModel,
      .tcg_accel = "tcg,thread=multi",
      .kvm_cpu_fallbacks = {"host", "host,-arch-capabilities", "qemu64"},
      .console_tty = "ttyS0",
      .result_tty = "ttyS1",
  };
  return q;
}

std::string qemu_escape_option_value(std::string_view v) {
  std::string out;
  for (char c : v) {
    out += c;
    if (c == ',') out += ',';
  }
  return out;
}

namespace {

// The NUMA nodes as QEMU 7.2 wants them: RAM from one memory-backend-ram object per node
// (-numa node,memdev=; the legacy mem= is refused by machine types since 5.1), and each vCPU
// placed with -numa cpu by its socket, core and thread (the -numa node,cpus= form is the legacy
// one).
void append_numa_args(std::vector<std::string>& a, const VmConfig& cfg) {
  for (std::size_t n = 0; n < cfg.numa_nodes.size(); ++n) {
    const std::string id = std::to_string(n);
    a.insert(a.end(), {"-object",
                       "memory-backend-ram,id=numa-mem" + id +
                           ",size=" + std::to_string(cfg.numa_nodes[n].memory_mib) + "M",
                       "-numa", "node,nodeid=" + id + ",memdev=numa-mem" + id});
  }
  for (std::size_t n = 0; n < cfg.numa_nodes.size(); ++n)
    for (unsigned c : cfg.numa_nodes[n].cpus) {
      const VcpuTopologyIds id = vcpu_topology_ids(cfg, static_cast<int>(c));
      a.insert(a.end(), {"-numa", "cpu,node-id=" + std::to_string(n) +
                                      ",socket-id=" + std::to_string(id.socket) +
                                      ",core-id=" + std::to_string(id.core) +
                                      ",thread-id=" + std::to_string(id.thread)});
    }
}

}  // namespace

std::vector<std::string> qemu_argv(const VmConfig& cfg, const QemuArchQuirks& arch) {
  validate_vm_config(cfg);
  std::string cpu = cfg.cpu_model.empty() ? (cfg.accel == Accel::kvm ? arch.kvm_cpu : arch.tcg_cpu)
                                          : cfg.cpu_model;
  std::vector<std::string> a = {
      arch.binary,
      "-name",
      cfg.name,
      "-machine",
      arch.machine,
      "-accel",
      cfg.accel == Accel::kvm ? "kvm" : arch.tcg_accel,
      "-cpu",
      cpu,
      "-smp",
      std::to_string(cfg.vcpus) + ",sockets=" + std::to_string(cfg.sockets) + ",cores=" +
          std::to_string(effective_cores(cfg)) + ",threads=" + std::to_string(cfg.threads),
      "-m",
      std::to_string(cfg.memory_mib),
  };
  // The guest needs only the two serial ports added below.
  const std::vector<std::string> bare = qemu_bare_options();
  a.insert(a.end(), bare.begin(), bare.end());
  a.insert(a.end(),
           {
               // File chardevs are opened with O_TRUNC by QEMU; the first -serial is ttyS0.
               "-chardev",
               "file,id=con,path=" + qemu_escape_option_value(cfg.console_log.string()),
               "-serial",
               "chardev:con",
               "-chardev",
               "file,id=res,path=" + qemu_escape_option_value(cfg.result_channel.string()),
               "-serial",
               "chardev:res",
               "-kernel",
               cfg.kernel.string(),
           });
  append_numa_args(a, cfg);
  if (!cfg.initrd.empty()) {
    a.emplace_back("-initrd");
    a.push_back(cfg.initrd.string());
  }
  a.emplace_back("-append");
  a.push_back(full_kernel_cmdline(cfg));
  a.emplace_back("-no-reboot");
  if (!cfg.vcpu_pin.empty()) {
    // Paused until the backend has pinned every thread (then QMP "cont").
    a.emplace_back("-qmp");
    a.push_back("unix:" + qemu_escape_option_value(qmp_socket_path(cfg).string()) +
                ",server=on,wait=off");
    a.emplace_back("-S");
  }
  if (insn_plugin_active(cfg)) {
    a.emplace_back("-plugin");
    a.push_back(insn_plugin_qemu_option(*cfg.insn_plugin));
  }
  return a;
}

std::vector<std::string> qemu_bare_options() {
  return {"-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none"};
}

std::string insn_plugin_qemu_option(const InsnPluginConfig& p) {
  std::string o = "file=" + qemu_escape_option_value(p.plugin.string()) +
                  ",out=" + qemu_escape_option_value(p.output.string());
  if (!p.profile_cpus.empty())
    o += ",profile_cpus=" + qemu_escape_option_value(vm_cpu_list(p.profile_cpus));
  if (!p.symbols.empty()) o += ",symbols=" + qemu_escape_option_value(p.symbols.string());
  if (p.steps_only) o += ",count=steps";
  return o;
}

fs::path qmp_socket_path(const VmConfig& cfg) {
  // sun_path holds 107 bytes: a short path of its own rather than one in the run directory.
  return fs::temp_directory_path() / ("isolab-qmp-" + cfg.name + ".sock");
}

bool is_qemu_topology_error(std::string_view err) {
  for (std::string_view m :
       {"Invalid CPU topology", "maxcpus must be equal to or greater than smp",
        "CPU topology parameters must be greater than zero", "Invalid SMP CPUs", "cpu topology: "})
    if (err.find(m) != std::string_view::npos) return true;
  return false;
}

std::optional<std::string> host_cpu_placement_error(std::string_view out) {
  for (std::size_t pos = 0; pos < out.size();) {
    std::size_t nl = out.find('\n', pos);
    if (nl == std::string_view::npos) nl = out.size();
    const std::string_view line = out.substr(pos, nl - pos);
    pos = nl + 1;
    const bool cpuset_write = line.find("cpuset.cpus") != std::string_view::npos &&
                              (line.find("Permission denied") != std::string_view::npos ||
                               line.find("Invalid argument") != std::string_view::npos);
    if (cpuset_write || line.find("cannot set CPU affinity") != std::string_view::npos)
      return sanitize_excerpt(line, 300);
  }
  return std::nullopt;
}

std::optional<std::string> accelerator_failure(std::string_view out) {
  static constexpr std::string_view kPatterns[] = {"failed to set MSR",
                                                   "kvm_buf_set_msrs",
                                                   "KVM: entry failed, hardware error",
                                                   "enabling virtualization on CPU",
                                                   "failed to initialize kvm",
                                                   "failed to initialize KVM",
                                                   "Could not access KVM kernel module"};
  std::size_t first = std::string_view::npos;
  for (std::string_view p : kPatterns) first = std::min(first, out.find(p));
  if (first == std::string_view::npos) return std::nullopt;
  const std::size_t begin = out.rfind('\n', first);
  const std::size_t from = begin == std::string_view::npos ? 0 : begin + 1;
  const std::string_view line = out.substr(from, out.find('\n', first) - from);
  return sanitize_excerpt(line, 300);
}

namespace {

std::string log_tail(const fs::path& p) {
  std::string s;
  try {
    s = read_file(p, 1 << 20);
  } catch (const std::exception&) {
    return {};
  }
  // Keep the end: QEMU's last words are what explains its exit.
  if (s.size() > 2000) s = s.substr(s.size() - 2000);
  return sanitize_excerpt(s, 2000);
}

// Connects to QMP, pins every thread (vm/qmp.h), reads the affinity back and lets the paused
// guest run. Throws isolab::Error on any failure.
std::vector<ThreadAffinity> pin_and_continue(Process& proc, const VmConfig& cfg) {
  bool exited = false;
  auto alive = [&] {
    if (!exited && proc.wait_for(std::chrono::milliseconds(0))) exited = true;
    return !exited;
  };
  auto qmp = QmpClient::connect(qmp_socket_path(cfg), std::chrono::seconds(60), alive);
  auto threads = qmp_vcpu_threads(qmp->execute("query-cpus-fast"));
  if (static_cast<int>(threads.size()) != cfg.vcpus)
    throw Error("QMP query-cpus-fast: " + std::to_string(threads.size()) + " vCPU threads for " +
                std::to_string(cfg.vcpus) + " vCPUs");
  std::vector<ThreadAffinity> a = pin_qemu_threads(proc.pid(), threads, cfg);
  qmp->execute("cont");
  return a;
}

// QEMU's log, read again only when it has grown: a KVM entry failure leaves QEMU running with
// the VM paused ([o8]), so the failure shows in the log, not in an exit.
class QemuLogWatch {
 public:
  explicit QemuLogWatch(fs::path path) : path_(std::move(path)) {}
  std::optional<std::string> accelerator_failure_now() {
    const std::uintmax_t size = file_size_or_zero(path_);
    if (size == seen_) return std::nullopt;
    seen_ = size;
    return accelerator_failure(log_tail(path_));
  }

 private:
  fs::path path_;
  std::uintmax_t seen_ = 0;
};

// How QEMU's own exit ends the boot: from its status and the log tail in out.
void qemu_exited(const ProcessResult& r, VmOutcome& out) {
  if (!r.start_error.empty()) {
    out.end = VmOutcome::qemu_failed;
    out.detail = "QEMU " + r.describe();
  } else if (r.term_signal == 0 && r.exit_code == 0) {
    out.end = VmOutcome::powered_off;
    out.qemu_exit_code = 0;
    out.detail = "QEMU exited 0 (guest powered off, rebooted or panicked)";
  } else {
    out.qemu_exit_code = r.term_signal == 0 ? r.exit_code : -1;
    const auto accel = accelerator_failure(out.qemu_stderr_excerpt);
    out.end = accel ? VmOutcome::accelerator_failed : VmOutcome::qemu_failed;
    out.detail = "QEMU " + r.describe() +
                 (accel ? ": the accelerator could not run the guest: " + *accel : "");
  }
}

// The outcome of a boot that ended at `seconds`: the end, why, the console's first output and
// QEMU's log tail.
VmOutcome ended(VmOutcome out, VmOutcome::End end, std::string detail, double seconds,
                const ConsoleProgress& progress, const fs::path& qlog) {
  out.end = end;
  out.detail = std::move(detail);
  out.seconds = seconds;
  out.seconds_to_first_output = progress.first_output;
  out.qemu_stderr_excerpt = log_tail(qlog);
  return out;
}

}  // namespace

fs::path qemu_command_file(const VmConfig& cfg) {
  return cfg.console_log.parent_path() / "qemu-command.sh";
}

void write_qemu_command(const VmConfig& cfg, const std::vector<std::string>& argv) {
  write_file_atomic(
      qemu_command_file(cfg),
      "#!/bin/sh\n# The QEMU command of this boot, as isolab ran it. With host CPU pinning QEMU "
      "starts\n# paused (-S) and waits for 'cont' on its QMP socket.\nexec " +
          shell_command(argv) + "\n");
}

VmOutcome QemuBackend::run(const VmConfig& cfg) {
  auto argv = qemu_argv(cfg);  // validates
  prepare_output_files(cfg);
  write_qemu_command(cfg, argv);
  const fs::path qlog = effective_qemu_log(cfg);

  ProcessSpec spec;
  spec.argv = argv;
  spec.stdout_path = qlog;
  spec.stderr_to_stdout = true;

  VmOutcome out;
  out.accel = cfg.accel;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  ConsoleProgress progress;
  if (!cfg.vcpu_pin.empty()) {
    std::error_code ec;
    fs::remove(qmp_socket_path(cfg), ec);
  }
  std::unique_ptr<Process> proc = runner_.start(spec);  // its destructor kills the group
  if (!cfg.vcpu_pin.empty()) {
    try {
      out.affinity = pin_and_continue(*proc, cfg);
    } catch (const Error& e) {
      if (proc->wait_for(std::chrono::milliseconds(0)) == std::nullopt) {
        // QEMU runs but could not be pinned: not a measurement (infrastructure).
        proc->terminate(std::chrono::seconds(2));
        out.end = VmOutcome::qemu_failed;
        out.seconds = elapsed();
        out.qemu_stderr_excerpt = log_tail(qlog);
        out.detail = std::string("host CPU pinning: ") + e.what();
        std::error_code ec;
        fs::remove(qmp_socket_path(cfg), ec);
        return out;
      }
      // QEMU exited on its own (e.g. a topology it refuses): reported below as its exit.
    }
    std::error_code ec;
    fs::remove(qmp_socket_path(cfg), ec);
  }
  QemuLogWatch log_watch(qlog);
  for (;;) {
    std::optional<ProcessResult> r = proc->wait_for(poll_);
    double now = elapsed();
    observe_console(progress, file_size_or_zero(cfg.console_log), now);
    if (auto accel = r ? std::nullopt : log_watch.accelerator_failure_now()) {
      proc->terminate(std::chrono::seconds(2));
      return ended(std::move(out), VmOutcome::accelerator_failed,
                   "the accelerator could not run the guest: " + *accel + " (QEMU stopped)",
                   elapsed(), progress, qlog);
    }
    if (r) {
      out = ended(std::move(out), VmOutcome::qemu_failed, "", now, progress, qlog);
      qemu_exited(*r, out);
      return out;
    }
    if (auto e = expired_timeout(cfg, progress, now)) {
      proc->terminate(std::chrono::seconds(2));
      return ended(std::move(out), *e, describe_timeout(*e, cfg, progress), elapsed(), progress,
                   qlog);
    }
  }
}

}  // namespace isolab
