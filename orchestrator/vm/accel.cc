#include "vm/accel.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "base/error.h"
#include "base/files.h"
#include "vm/libvirt.h"
#include "vm/qemu.h"
#include "vm/watch.h"

namespace isolab {

namespace fs = std::filesystem;

namespace {

// Assembled from tests/data/vm/kvm_probe.S with
//   gcc -m32 -c kvm_probe.S && ld -m elf_i386 -Ttext=0x100000 -N && objcopy -O binary
// (sha256 16b1026e110b7c32b1c38a6b8ec519ce487934e47c1ab52d86ea46c2a03d8570).
const unsigned char kProbeImage[] = {
    0x02, 0xb0, 0xad, 0x1b, 0x00, 0x00, 0x01, 0x00, 0xfe, 0x4f, 0x51, 0xe4, 0x00, 0x00, 0x10, 0x00,
    0x00, 0x00, 0x10, 0x00, 0x31, 0x01, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x10, 0x00,
    0xfa, 0x66, 0xba, 0x02, 0x04, 0xbe, 0x1e, 0x01, 0x10, 0x00, 0xac, 0x84, 0xc0, 0x74, 0x03, 0xee,
    0xeb, 0xf8, 0xbf, 0x00, 0x00, 0x20, 0x00, 0x31, 0xc0, 0xb9, 0x00, 0x0c, 0x00, 0x00, 0xfc, 0xf3,
    0xab, 0xc7, 0x05, 0x00, 0x00, 0x20, 0x00, 0x03, 0x10, 0x20, 0x00, 0xc7, 0x05, 0x00, 0x10, 0x20,
    0x00, 0x03, 0x20, 0x20, 0x00, 0x31, 0xc9, 0x89, 0xc8, 0xc1, 0xe0, 0x15, 0x0d, 0x83, 0x00, 0x00,
    0x00, 0x89, 0x04, 0xcd, 0x00, 0x20, 0x20, 0x00, 0x41, 0x81, 0xf9, 0x00, 0x02, 0x00, 0x00, 0x75,
    0xe6, 0x0f, 0x20, 0xe0, 0x83, 0xc8, 0x20, 0x0f, 0x22, 0xe0, 0xb8, 0x00, 0x00, 0x20, 0x00, 0x0f,
    0x22, 0xd8, 0xb9, 0x80, 0x00, 0x00, 0xc0, 0x0f, 0x32, 0x0d, 0x00, 0x01, 0x00, 0x00, 0x0f, 0x30,
    0x0f, 0x20, 0xc0, 0x0d, 0x01, 0x00, 0x00, 0x80, 0x0f, 0x22, 0xc0, 0x0f, 0x01, 0x15, 0x18, 0x01,
    0x10, 0x00, 0xea, 0xa9, 0x00, 0x10, 0x00, 0x08, 0x00, 0x66, 0xba, 0x02, 0x04, 0xb0, 0x4c, 0xee,
    0x48, 0xc7, 0xc7, 0x00, 0x00, 0x00, 0x01, 0x48, 0x89, 0x3f, 0x48, 0x81, 0xc7, 0x00, 0x10, 0x00,
    0x00, 0xf7, 0xc7, 0xff, 0xff, 0x0f, 0x00, 0x75, 0xee, 0xb0, 0x2e, 0xee, 0x48, 0x81, 0xff, 0x00,
    0x00, 0x00, 0x03, 0x72, 0xe2, 0x48, 0xc7, 0xc6, 0x08, 0x00, 0x00, 0x00, 0x48, 0xc7, 0xc1, 0x00,
    0x00, 0x40, 0x00, 0x48, 0x0f, 0xaf, 0xd9, 0x48, 0xff, 0xc9, 0x75, 0xf7, 0xb0, 0x2b, 0xee, 0x48,
    0xff, 0xce, 0x75, 0xe8, 0xb0, 0x45, 0xee, 0x66, 0xba, 0xf4, 0x00, 0xb0, 0x31, 0xee, 0xf4, 0xeb,
    0xfd, 0x8d, 0xb4, 0x26, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x9a, 0x20, 0x00, 0x0f, 0x00, 0x08, 0x01, 0x10, 0x00, 0x0a, 0x49,
    0x53, 0x4f, 0x4c, 0x41, 0x42, 0x2d, 0x4b, 0x56, 0x4d, 0x2d, 0x50, 0x52, 0x4f, 0x42, 0x45, 0x20,
    0x00,
};

const char kBanner[] = "\nISOLAB-KVM-PROBE ";

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string fmt_s(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

std::string read_or_empty(const fs::path& p) {
  try {
    return read_file(p, 1 << 20);
  } catch (const std::exception&) {
    return {};
  }
}

std::string describe_markers(const KvmProbeMarkers& m) {
  if (!m.banner) return "the guest executed no instruction of the probe image";
  if (!m.long_mode) return "the guest did not reach long mode";
  return "the guest touched " + std::to_string(m.mib_touched) + " of 32 MiB and ran " +
         std::to_string(m.compute_blocks) + " of 8 compute blocks";
}

// One QEMU run of the probe with one -cpu model.
struct Attempt {
  enum { ok, slow, accelerator_failed, failed } status = failed;
  std::string line;  // for attempts / reason
};

Attempt run_attempt(ProcessRunner& runner, const KvmProbeOptions& opts, const std::string& cpu,
                    const fs::path& image, const fs::path& dbg, const fs::path& qlog) {
  std::error_code ec;
  fs::remove(dbg, ec);
  ProcessSpec spec;
  spec.argv = kvm_probe_argv(opts.accel, cpu, image, dbg);
  spec.stdout_path = qlog;
  spec.stderr_to_stdout = true;
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Process> proc = runner.start(spec);
  double banner_at = -1;
  Attempt a;
  for (;;) {
    std::optional<ProcessResult> r = proc->wait_for(std::chrono::milliseconds(50));
    double now = since(t0);
    KvmProbeMarkers m = parse_kvm_probe_log(read_or_empty(dbg));
    if (m.banner && banner_at < 0) banner_at = now;
    if (r) {
      std::string err = sanitize_excerpt(read_or_empty(qlog), 600);
      if (r->start_error.empty() && r->term_signal == 0 && r->exit_code == kKvmProbeSuccessExit &&
          m.done) {
        a.status = Attempt::ok;
        a.line = cpu + ": probe finished in " + fmt_s(now) + " (guest part " +
                 fmt_s(now - banner_at) + ")";
      } else if (auto accel = accelerator_failure(err)) {
        a.status = Attempt::accelerator_failed;
        a.line = cpu + ": QEMU " + r->describe() +
                 ", the accelerator could not run the guest: " + *accel;
      } else {
        a.line = cpu + ": QEMU " + r->describe() + " before the probe finished (" +
                 describe_markers(m) + ")" + (err.empty() ? "" : ": " + err);
      }
      return a;
    }
    if (auto accel = accelerator_failure(read_or_empty(qlog))) {  // QEMU paused the VM ([o8])
      proc->terminate(std::chrono::milliseconds(500));
      a.status = Attempt::accelerator_failed;
      a.line = cpu + ": the accelerator could not run the guest: " + *accel;
      return a;
    }
    bool start_over = banner_at < 0 && now * 1000 >= opts.start_budget.count();
    bool guest_over = banner_at >= 0 && (now - banner_at) * 1000 >= opts.guest_budget.count();
    if (start_over || guest_over) {
      proc->terminate(std::chrono::milliseconds(500));
      a.status = Attempt::slow;
      a.line =
          cpu + ": " + describe_markers(m) + " within " +
          fmt_s(start_over ? now : now - banner_at) +
          (start_over ? std::string()
                      : " of the image starting (" + fmt_s(banner_at) + " after QEMU started)") +
          " (TCG finishes the probe in about 0.4 s): KVM is not running guests at hardware"
          " speed";
      return a;
    }
  }
}

}  // namespace

std::string_view kvm_probe_image() {
  return {reinterpret_cast<const char*>(kProbeImage), sizeof kProbeImage};
}

KvmProbeMarkers parse_kvm_probe_log(std::string_view log) {
  KvmProbeMarkers m;
  auto pos = log.rfind(kBanner);
  if (pos == std::string_view::npos) return m;
  m.banner = true;
  for (char c : log.substr(pos + sizeof kBanner - 1)) {
    if (c == 'L')
      m.long_mode = true;
    else if (c == '.')
      ++m.mib_touched;
    else if (c == '+')
      ++m.compute_blocks;
    else if (c == 'E')
      m.done = true;
  }
  return m;
}

std::vector<std::string> kvm_probe_argv(Accel accel, const std::string& cpu_model,
                                        const fs::path& image, const fs::path& debug_log) {
  const QemuArchQuirks& q = x86_64_quirks();
  std::vector<std::string> a = {
      q.binary, "-machine", q.machine, "-accel", accel == Accel::kvm ? "kvm" : q.tcg_accel,
      "-cpu",   cpu_model,  "-m",      "128"};
  const std::vector<std::string> bare = qemu_bare_options();
  a.insert(a.end(), bare.begin(), bare.end());
  a.insert(a.end(),
           {"-chardev", "file,id=dbg,path=" + qemu_escape_option_value(debug_log.string()),
            "-device", "isa-debugcon,iobase=0x402,chardev=dbg", "-device",
            "isa-debug-exit,iobase=0xf4,iosize=0x04", "-kernel", image.string(), "-no-reboot"});
  return a;
}

KvmProbeResult probe_kvm(ProcessRunner& runner, const fs::path& work_dir,
                         const KvmProbeOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  KvmProbeResult res;
  if (opts.accel == Accel::kvm) {
    std::error_code ec;
    if (!fs::exists(opts.dev_kvm, ec)) {
      res.reason = opts.dev_kvm.string() + " does not exist";
      return res;
    }
    int fd = ::open(opts.dev_kvm.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      res.reason = opts.dev_kvm.string() + " cannot be opened: " + std::strerror(errno);
      return res;
    }
    ::close(fd);
  }
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  const fs::path image = work_dir / "kvm-probe.img";
  write_file_atomic(image, kvm_probe_image());
  const std::vector<std::string> models = opts.accel == Accel::kvm
                                              ? x86_64_quirks().kvm_cpu_fallbacks
                                              : std::vector<std::string>{x86_64_quirks().tcg_cpu};
  for (std::size_t i = 0; i < models.size(); ++i) {
    const std::string tag = "kvm-probe-" + std::to_string(i);
    Attempt a = run_attempt(runner, opts, models[i], image, work_dir / (tag + ".debugcon"),
                            work_dir / (tag + ".qemu.log"));
    res.attempts.push_back(a.line);
    if (a.status == Attempt::ok) {
      res.works = true;
      res.cpu_model = models[i];
      res.reason = "KVM probe passed with -cpu " + models[i] +
                   (i > 0 ? " (earlier models failed: see attempts)" : "");
      break;
    }
    if (a.status != Attempt::accelerator_failed) {
      res.reason = "KVM probe failed: " + a.line;
      break;
    }
    res.reason = "KVM probe failed on every -cpu model; last: " + a.line;
  }
  res.seconds = since(t0);
  return res;
}

AccelChoice AccelChooser::choose(AccelMode mode, ProcessRunner& runner, const fs::path& work_dir) {
  if (mode == AccelMode::tcg) return {Accel::tcg, x86_64_quirks().tcg_cpu, "TCG requested", 0};
  std::lock_guard<std::mutex> lock(mu_);
  if (!cached_) cached_ = probe_kvm(runner, work_dir, opts_);
  const KvmProbeResult& p = *cached_;
  if (p.works) return {Accel::kvm, p.cpu_model, p.reason, p.seconds};
  if (mode == AccelMode::kvm)
    throw Error("accelerator kvm requested, but KVM does not run guests here: " + p.reason);
  return {Accel::tcg, x86_64_quirks().tcg_cpu, "falling back to TCG: " + p.reason, p.seconds};
}

AccelChoice choose_accelerator(AccelMode mode, ProcessRunner& runner, const fs::path& work_dir) {
  static AccelChooser chooser;
  return chooser.choose(mode, runner, work_dir);
}

std::string parse_qemu_version(std::string_view text) {
  std::string_view first = text.substr(0, text.find('\n'));
  auto pos = first.find("version ");
  if (pos == std::string_view::npos)
    throw Error("qemu --version: no 'version' on the first line: '" + sanitize_excerpt(first, 200) +
                "'");
  std::string v(first.substr(pos + 8));
  while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) v.pop_back();
  if (v.empty())
    throw Error("qemu --version: empty version in '" + sanitize_excerpt(first, 200) + "'");
  return v;
}

std::string qemu_version(ProcessRunner& runner) {
  ProcessSpec spec;
  spec.argv = {x86_64_quirks().binary, "--version"};
  spec.timeout = std::chrono::seconds(10);
  ProcessResult r = runner.run(spec);
  if (!r.ok())
    throw Error(spec.argv[0] + " --version: " + r.describe() + ": " + sanitize_excerpt(r.err, 500));
  return parse_qemu_version(r.out);
}

VmDoctorFacts vm_doctor_facts(ProcessRunner& runner, const fs::path& work_dir, bool run_probe,
                              const std::string& libvirt_uri) {
  VmDoctorFacts f;
  const std::string bin = x86_64_quirks().binary;
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest(path);
    while (!rest.empty() && f.qemu_path.empty()) {
      auto colon = rest.find(':');
      fs::path cand = fs::path(std::string(rest.substr(0, colon))) / bin;
      if (::access(cand.c_str(), X_OK) == 0) f.qemu_path = cand.string();
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  try {
    f.qemu_version = qemu_version(runner);
  } catch (const std::exception& e) {
    f.qemu_error = e.what();
  }
  std::error_code ec;
  f.dev_kvm_present = fs::exists("/dev/kvm", ec);
  if (f.dev_kvm_present) {
    int fd = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
    f.dev_kvm_openable = fd >= 0;
    if (fd >= 0) ::close(fd);
  }
  if (run_probe && f.dev_kvm_openable) f.kvm_probe = probe_kvm(runner, work_dir);
  LibvirtReach lr = libvirt_reachability(libvirt_uri);
  f.libvirt_reachable = lr.ok;
  f.libvirt_detail = lr.detail;
  return f;
}

}  // namespace isolab
