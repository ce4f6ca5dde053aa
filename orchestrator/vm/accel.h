// Choosing the accelerator (KVM or TCG) by probing KVM for real, and the VM facts for
// `isolab doctor`.
//
// Why a real probe: on some hosts /dev/kvm opens and QEMU starts, yet a KVM guest runs about a
// thousand times slower than hardware (a Linux kernel under -accel kvm stays in its
// decompressor and prints nothing after "Probing EDD"; docs/sources.md [o2]). So the probe
// boots a 305-byte multiboot image (source: tests/data/vm/kvm_probe.S) that enters long mode,
// touches 32 MiB and runs 8 x 2^22 loop iterations, writing progress to the isa-debugcon port
// and ending QEMU through isa-debug-exit. KVM that does not finish within guest_budget of the
// image starting is reported as not working (docs/measurements.md has the probe's timings).
#pragma once

#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/process.h"
#include "vm/vm.h"

namespace isolab {

struct AccelChoice {
  Accel accel = Accel::tcg;
  std::string
      cpu_model;       // -cpu value to use ("host", "host,-arch-capabilities", kTcgCpuModel, ...)
  std::string reason;  // why this accelerator, one line (never empty)
  double probe_seconds = 0;  // time the KVM probe took (0 when no probe ran)
};

// The raw bytes of the probe image (a multiboot "a.out kludge" image loaded at 1 MiB).
std::string_view kvm_probe_image();

// Progress the probe image reported on the debug console; the firmware's own log precedes the
// banner "\nISOLAB-KVM-PROBE " and is ignored.
struct KvmProbeMarkers {
  bool banner = false;     // the image started (protected mode)
  bool long_mode = false;  // 'L'
  int mib_touched = 0;     // '.' count, of 32
  int compute_blocks = 0;  // '+' count, of 8
  bool done = false;       // 'E'
};
// Pure; reads only the text after the last banner.
KvmProbeMarkers parse_kvm_probe_log(std::string_view debugcon);

// The QEMU argv of one probe run (pure): -accel kvm (or tcg, to check the probe itself),
// -cpu cpu_model, -m 128, -nodefaults, -display none, the debugcon on a file, isa-debug-exit,
// -kernel image, -no-reboot. The image ends QEMU with exit status 99 ((0x31 << 1) | 1).
std::vector<std::string> kvm_probe_argv(Accel accel, const std::string& cpu_model,
                                        const std::filesystem::path& image,
                                        const std::filesystem::path& debug_log);
constexpr int kKvmProbeSuccessExit = 99;

struct KvmProbeOptions {
  std::filesystem::path dev_kvm = "/dev/kvm";
  // Time allowed from the banner appearing to the image finishing (TCG needs far less).
  std::chrono::milliseconds guest_budget{2000};
  // Time allowed from starting QEMU to the banner (QEMU start + SeaBIOS).
  std::chrono::milliseconds start_budget{6000};
  Accel accel = Accel::kvm;  // tcg only to test the probe itself
};

struct KvmProbeResult {
  bool works = false;
  std::string cpu_model;              // the model that worked (see QemuArchQuirks fallbacks)
  std::string reason;                 // why it works / does not (never empty)
  double seconds = 0;                 // whole probe, all attempts
  std::vector<std::string> attempts;  // one line per QEMU run: "<cpu>: <outcome>"
};

// Probes without caching. Writes the image and debug logs under work_dir (created). A missing
// or unopenable dev_kvm gives works=false without starting QEMU. An attempt whose QEMU output
// shows an accelerator failure (vm/qemu.h accelerator_failure: the MSR abort [o1], a KVM entry
// failure, after which QEMU pauses the VM and is stopped at once [o8]) moves on to the next
// model of x86_64_quirks().kvm_cpu_fallbacks; the attempt's line quotes QEMU's. Never throws
// for a KVM problem; throws isolab::Error only when work_dir cannot be written.
KvmProbeResult probe_kvm(ProcessRunner& runner, const std::filesystem::path& work_dir,
                         const KvmProbeOptions& opts = {});

// Chooses the accelerator and caches the probe for the chooser's lifetime.
//   tcg:   TCG with cpu kTcgCpuModel (vm/vm.h), no probe.
//   kvm:   the probe must pass, else isolab::Error "accelerator kvm requested, but ...<reason>".
//   auto_: KVM with the working cpu model if the probe passes, else TCG with the probe's reason.
class AccelChooser {
 public:
  explicit AccelChooser(KvmProbeOptions opts = {}) : opts_(std::move(opts)) {}
  AccelChoice choose(AccelMode mode, ProcessRunner& runner, const std::filesystem::path& work_dir);

 private:
  KvmProbeOptions opts_;
  std::mutex mu_;
  std::optional<KvmProbeResult> cached_;
};

// The same through one process-wide AccelChooser (the probe runs at most once per process).
AccelChoice choose_accelerator(AccelMode mode, ProcessRunner& runner,
                               const std::filesystem::path& work_dir);

// "7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)" from the first line of `--version` output
// ("QEMU emulator version 7.2.22 (Debian ...)"). Throws isolab::Error quoting the text if it has
// no "version " on its first line.
std::string parse_qemu_version(std::string_view version_output);
// Runs `qemu-system-x86_64 --version` (10 s limit); throws isolab::Error if it cannot.
std::string qemu_version(ProcessRunner& runner);

// What `isolab doctor` reports about virtualization.
struct VmDoctorFacts {
  std::string qemu_path;     // resolved from PATH; "" = not found
  std::string qemu_version;  // "" when unknown
  std::string qemu_error;    // why qemu_version is empty
  bool dev_kvm_present = false;
  bool dev_kvm_openable = false;
  std::optional<KvmProbeResult> kvm_probe;  // when requested and /dev/kvm opens
  bool libvirt_reachable = false;
  std::string libvirt_detail;  // "libvirt 9.0.0, hypervisor QEMU 7.2.22" or the error
};
// libvirt_uri: the connection checked for libvirt_reachable (isolab's default_libvirt_uri).
VmDoctorFacts vm_doctor_facts(ProcessRunner& runner, const std::filesystem::path& work_dir,
                              bool run_kvm_probe, const std::string& libvirt_uri);

}  // namespace isolab
