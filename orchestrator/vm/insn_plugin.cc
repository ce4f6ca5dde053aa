#include "vm/insn_plugin.h"

#include <cctype>
#include <cstdlib>

#include "base/error.h"
#include "base/files.h"
#include "parse/insn_count.h"
#include "vm/qemu.h"

namespace isolab {

namespace fs = std::filesystem;

namespace {

fs::path env_or(const char* name, const fs::path& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? fs::path(v) : fallback;
}

std::string str(std::uint64_t v) { return std::to_string(v); }

// The regions of one class a step of the test guest has on vCPU 0.
struct RegionsWanted {
  unsigned region_class = 0;
  std::uint64_t n = 1;
  InsnCounts sum;            // over the n regions
  std::uint64_t median = 0;  // of one region's total
  std::uint64_t kernel_median = 0;
};

// "" when the step's regions of want.region_class are as expected, else what differs.
std::string check_regions(const InsnStep& s, const std::string& where, const RegionsWanted& want) {
  const InsnPerOperation op = insn_per_operation(s, 0, want.n, want.region_class);
  const std::string of = where + "class " + str(want.region_class) + " ";
  if (!op.valid) return where + op.reason;
  const double n = static_cast<double>(want.n);
  if (op.user * n != static_cast<double>(want.sum.user) ||
      op.kernel * n != static_cast<double>(want.sum.kernel))
    return of + "regions user/kernel " + std::to_string(op.user * n) + "/" +
           std::to_string(op.kernel * n) + ", expected " + str(want.sum.user) + "/" +
           str(want.sum.kernel);
  if (op.median_total != static_cast<double>(want.median) ||
      op.median_kernel != static_cast<double>(want.kernel_median))
    return of + "region median missing or not " + str(want.median) + "/" + str(want.kernel_median);
  return "";
}

// "" when the step's regions on vCPU 0 and its deltas are as expected, else what differs.
std::string check_step(const InsnCountFile& f, std::uint64_t seq,
                       const std::vector<RegionsWanted>& regions, InsnCounts step_delta) {
  const InsnStep* s = find_insn_step(f, seq);
  const std::string where = "step " + str(seq) + ": ";
  if (!s) return where + "missing";
  for (const RegionsWanted& r : regions)
    if (std::string e = check_regions(*s, where, r); !e.empty()) return e;
  std::vector<InsnCounts> d = insn_step_deltas(*s);
  for (std::size_t v = 0; v < d.size(); ++v) {
    InsnCounts want = v == 0 ? step_delta : InsnCounts{};
    if (!(d[v] == want))
      return where + "vCPU " + str(v) + " executed " + str(d[v].user) + " user + " +
             str(d[v].kernel) + " kernel instructions, expected " + str(want.user) + " + " +
             str(want.kernel);
  }
  return "";
}

// Step 2's profile: all of vCPU 0's kernel instructions, nothing on the others.
std::string check_profile(const InsnCountFile& f) {
  const InsnStep* s = find_insn_step(f, 2);
  if (!s) return "step 2: missing";
  std::uint64_t sum = 0;
  for (const InsnProfileEntry& e : s->profile) {
    if (e.vcpu != 0) return "step 2: profile entries on vCPU " + str(e.vcpu);
    sum += e.insns;
  }
  if (sum != 1502) return "step 2: vCPU 0's profile sums to " + str(sum) + ", expected 1502";
  return "";
}

}  // namespace

InsnPluginFiles find_insn_plugin_files(const fs::path& binary_dir) {
  return {env_or("ISOLAB_INSN_PLUGIN", binary_dir / "libisolab-insn-count.so"),
          env_or("ISOLAB_TEST_GUEST", binary_dir / "isolab-test-guest.elf")};
}

std::vector<std::string> insn_preflight_argv(const InsnPluginFiles& files, const fs::path& output,
                                             int vcpus) {
  InsnPluginConfig p;
  p.plugin = files.plugin;
  p.output = output;
  for (int v = 0; v < vcpus; ++v) p.profile_cpus.push_back(static_cast<unsigned>(v));
  return {x86_64_quirks().binary,
          "-accel",
          "tcg",
          "-machine",
          "q35",
          "-smp",
          std::to_string(vcpus),
          "-m",
          "64",
          "-display",
          "none",
          "-nodefaults",
          "-no-user-config",
          "-no-reboot",
          "-device",
          "isa-debug-exit,iobase=0xf4,iosize=0x04",
          "-kernel",
          files.test_guest.string(),
          "-plugin",
          insn_plugin_qemu_option(p)};
}

std::string check_test_guest_counts(std::string_view plugin_output) {
  InsnCountFile f;
  try {
    f = parse_insn_count(plugin_output);
    if (!f.complete) return "the output is incomplete: " + f.truncation;
    // One region of a class: its median is the region itself.
    for (std::string e : {check_step(f, 1, {{0, 1, {3003, 0}, 3003, 0}}, {3005, 0}),
                          check_step(f, 2, {{0, 1, {6, 1502}, 1508, 1502}}, {8, 1502}),
                          check_step(f, 3,
                                     {{0, 1, {203, 0}, 203, 0},
                                      {1, 2, {426, 0}, 23, 0},
                                      {2, 1, {631, 0}, 631, 0},
                                      {3, 1, {2, 0}, 2, 0}},
                                     {635, 0}),
                          check_profile(f)})
      if (!e.empty()) return e;
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

namespace {

std::string missing_file(const InsnPluginFiles& files) {
  std::error_code ec;
  if (!fs::exists(files.plugin, ec))
    return "the plugin " + files.plugin.string() +
           " does not exist (build it: ninja -C build isolab-insn-count)";
  if (!fs::exists(files.test_guest, ec))
    return "the plugin's test guest " + files.test_guest.string() +
           " does not exist (build it: ninja -C build isolab-test-guest)";
  return "";
}

// Why the run or its output is not what the test guest produces with a working plugin.
std::string judge(const ProcessResult& r, const std::string& output, InsnPluginPreflight& p) {
  const bool started = r.start_error.empty() && !r.timed_out && r.term_signal == 0;
  if (!started || r.exit_code != kTestGuestExit)
    return "QEMU " + r.describe() + " (the test guest exits " + std::to_string(kTestGuestExit) +
           ")" + (p.qemu_output.empty() ? "" : "; QEMU said: " + p.qemu_output);
  try {
    InsnCountFile f = parse_insn_count(output);
    p.plugin_api = f.plugin_api;
    p.qemu_api_min = f.qemu_api_min;
    p.qemu_api_max = f.qemu_api_max;
  } catch (const Error& e) {
    return std::string("its output cannot be read: ") + e.what();
  }
  if (p.plugin_api < p.qemu_api_min || p.plugin_api > p.qemu_api_max)
    return "QEMU offers plugin API versions " + std::to_string(p.qemu_api_min) + "-" +
           std::to_string(p.qemu_api_max) + ", the plugin is built for " +
           std::to_string(p.plugin_api);
  std::string counts = check_test_guest_counts(output);
  return counts.empty() ? "" : "wrong counts from the test guest: " + counts;
}

}  // namespace

InsnPluginPreflight preflight_insn_plugin(ProcessRunner& runner, const InsnPluginFiles& files,
                                          const fs::path& work_dir, int vcpus) {
  InsnPluginPreflight p;
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  if (ec) throw Error("insn plugin preflight: cannot create " + work_dir.string());
  if (std::string m = missing_file(files); !m.empty()) {
    p.error = "QEMU insn-count plugin: " + m;
    return p;
  }
  const fs::path output = fs::absolute(work_dir / "insn-count.txt");
  fs::remove(output, ec);
  ProcessSpec spec;
  spec.argv = insn_preflight_argv(files, output, vcpus);
  spec.stderr_to_stdout = true;
  spec.timeout = std::chrono::seconds(60);
  ProcessResult r = runner.run(spec);
  p.seconds = r.wall_seconds;
  p.qemu_output = sanitize_excerpt(r.out, 2000);
  while (!p.qemu_output.empty() && std::isspace(static_cast<unsigned char>(p.qemu_output.back())))
    p.qemu_output.pop_back();
  std::string out;
  try {
    out = read_file(output, 64u << 20);
  } catch (const std::exception&) {
  }
  std::string why = judge(r, out, p);
  p.ok = why.empty();
  if (!p.ok) p.error = "QEMU insn-count plugin " + files.plugin.string() + ": " + why;
  return p;
}

}  // namespace isolab
