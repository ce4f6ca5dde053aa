#include "vm/insn_plugin.h"

#include <cctype>
#include <cstdlib>
#include <map>

#include "base/error.h"
#include "base/files.h"
#include "parse/insn_count.h"
#include "parse/system_map.h"
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
  std::uint64_t rep = 0;  // format 3: rep executions over the n regions
};

// "" when the step's regions of want.region_class are as expected, else what differs.
std::string check_regions(const InsnStep& s, const std::string& where, const RegionsWanted& want,
                          int version) {
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
  if (version < 3) return "";
  if (op.rep.value_or(-1) * n != static_cast<double>(want.rep))
    return of + "regions' rep executions " + std::to_string(op.rep.value_or(-1) * n) +
           ", expected " + str(want.rep);
  if (want.n == 1 && op.median_norep != static_cast<double>(want.median - want.rep))
    return of + "norep median missing or not " + str(want.median - want.rep);
  return "";
}

// What a step of the test guest must show on vCPU 0 (every other vCPU: nothing).
struct StepWanted {
  std::uint64_t seq = 0;
  std::vector<RegionsWanted> regions;
  InsnCounts delta;
  InsnCounts rep;  // format 3
};

std::string check_deltas(const std::string& where, const std::vector<InsnCounts>& d,
                         InsnCounts want, const char* what) {
  for (std::size_t v = 0; v < d.size(); ++v) {
    const InsnCounts w = v == 0 ? want : InsnCounts{};
    if (!(d[v] == w))
      return where + "vCPU " + str(v) + " executed " + str(d[v].user) + " user + " +
             str(d[v].kernel) + " kernel " + what + ", expected " + str(w.user) + " + " +
             str(w.kernel);
  }
  return "";
}

// "" when the step's regions on vCPU 0 and its deltas are as expected, else what differs.
std::string check_step(const InsnCountFile& f, const StepWanted& want) {
  const InsnStep* s = find_insn_step(f, want.seq);
  const std::string where = "step " + str(want.seq) + ": ";
  if (!s) return where + "missing";
  for (const RegionsWanted& r : want.regions)
    if (std::string e = check_regions(*s, where, r, f.version); !e.empty()) return e;
  if (std::string e = check_deltas(where, insn_step_deltas(*s), want.delta, "instructions");
      !e.empty())
    return e;
  if (f.version < 3) return "";
  return check_deltas(where, insn_step_rep_deltas(*s), want.rep, "rep executions");
}

// The step's profile of vCPU 0 named from the test guest's map: exactly `want` (function ->
// instructions), summing to its kernel count; no other vCPU profiled anything.
std::string check_profile(const InsnCountFile& f, std::uint64_t seq, const SystemMap& map,
                          const std::map<std::string, std::uint64_t>& want) {
  const InsnStep* s = find_insn_step(f, seq);
  const std::string where = "step " + str(seq) + ": ";
  if (!s) return where + "missing";
  std::map<std::string, std::uint64_t> got;
  for (const InsnProfileEntry& e : s->profile) {
    if (e.vcpu != 0) return where + "profile entries on vCPU " + str(e.vcpu);
    const auto fn = e.in_function ? kernel_function_at(map, e.pc) : std::nullopt;
    got[fn ? *fn : "(none)"] += e.insns;
  }
  if (got != want) {
    std::string g;
    for (const auto& [fn, n] : got) g += (g.empty() ? "" : ", ") + fn + " " + str(n);
    return where + "vCPU 0's profile is {" + g + "}, not what test-guest.S derives";
  }
  const std::string sum = insn_profile_sum_problem(*s, 0);
  return sum.empty() ? "" : where + sum;
}

// Step 5: one user block left by the page fault, its unexecuted instructions taken back.
std::string check_fault(const InsnCountFile& f) {
  const InsnStep* s = find_insn_step(f, 5);
  if (!s || s->begin_faults.empty() || s->end_faults.empty()) return "step 5: no fault counters";
  const InsnFaults& b = s->begin_faults[0];
  const InsnFaults& e = s->end_faults[0];
  if (e.fixed - b.fixed != 1 || e.unmatched != b.unmatched || e.kernel != b.kernel)
    return "step 5: fault counters went from " + str(b.fixed) + ":" + str(b.unmatched) + ":" +
           str(b.kernel) + " to " + str(e.fixed) + ":" + str(e.unmatched) + ":" + str(e.kernel) +
           ", expected one more fixed";
  return "";
}

// Step 6: the wakeup paths (test-guest.S).
std::string check_wakeups(const InsnCountFile& f, const SystemMap& map) {
  const InsnStep* s = find_insn_step(f, 6);
  if (!s) return "step 6: missing";
  if (s->wakeups.size() != 1 || s->wakeups[0].vcpu != 0)
    return "step 6: expected one wake record, of vCPU 0";
  const InsnWakeups& w = s->wakeups[0];
  if (w.lengths != std::vector<std::uint64_t>{6, 7} || w.nowake != 1 || w.timer != 2 ||
      w.irq != 0 || w.noentry != 0)
    return "step 6: wakeup paths not 6 and 7 from the timer with one WAKE without wakeup";
  std::vector<std::pair<std::string, std::uint64_t>> longest;
  for (const InsnWakeFunction& fn : w.longest) {
    const auto name =
        fn.where == InsnWakeFunction::function ? kernel_function_at(map, fn.pc) : std::nullopt;
    longest.emplace_back(fn.where == InsnWakeFunction::user ? "user" : name.value_or("(none)"),
                         fn.insns);
  }
  const std::vector<std::pair<std::string, std::uint64_t>> want = {
      {"asm_sysvec_apic_timer_interrupt", 4}, {"hrtimer_wakeup", 2}, {"user", 1}};
  if (longest != want) return "step 6: the longest wakeup path's functions are not as derived";
  return "";
}

// The vCPU that ran the guest left its boot code, and no marker ran in it.
std::string check_boot(const InsnCountFile& f) {
  if (f.exit_boot.empty() || f.exit_boot[0] == 0) return "no boot code counted on vCPU 0";
  if (f.early_markers) return str(f.early_markers) + " markers ran in boot code";
  return "";
}

}  // namespace

InsnPluginFiles find_insn_plugin_files(const fs::path& binary_dir) {
  InsnPluginFiles f{env_or("ISOLAB_INSN_PLUGIN", binary_dir / "libisolab-insn-count.so"),
                    env_or("ISOLAB_TEST_GUEST", binary_dir / "isolab-test-guest.elf"),
                    {}};
  f.test_guest_symbols = fs::path(f.test_guest).replace_extension(".map");
  return f;
}

namespace {

fs::path symbols_of(const InsnPluginFiles& files) {
  return files.test_guest_symbols.empty() ? fs::path(files.test_guest).replace_extension(".map")
                                          : files.test_guest_symbols;
}

}  // namespace

std::vector<std::string> insn_preflight_argv(const InsnPluginFiles& files, const fs::path& output,
                                             int vcpus) {
  InsnPluginConfig p;
  p.plugin = files.plugin;
  p.output = output;
  for (int v = 0; v < vcpus; ++v) p.profile_cpus.push_back(static_cast<unsigned>(v));
  p.symbols = symbols_of(files);
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

std::string check_test_guest_counts(std::string_view plugin_output, std::string_view symbols_text) {
  InsnCountFile f;
  try {
    f = parse_insn_count(plugin_output);
    if (!f.complete) return "the output is incomplete: " + f.truncation;
    if (f.version < 3) return "the output is format " + str(f.version) + ", not 3";
    const SystemMap map = parse_system_map(symbols_text);
    const bool exact = f.mode == "exact";
    // One region of a class: its median is the region itself.
    std::vector<std::string> found = {
        check_step(f, {1, {{0, 1, {3003, 0}, 3003, 0, 0}}, {3005, 0}, {}}),
        check_step(f, {2, {{0, 1, {6, 1502}, 1508, 1502, 0}}, {8, 1502}, {}}),
        check_step(f, {3,
                       {{0, 1, {203, 0}, 203, 0, 0},
                        {1, 2, {426, 0}, 23, 0, 0},
                        {2, 1, {631, 0}, 631, 0, 0},
                        {3, 1, {2, 0}, 2, 0, 0}},
                       {635, 0},
                       {}}),
        check_step(f, {4, {{0, 1, {110, 55}, 165, 55, 152}}, {112, 55}, {101, 51}}),
        check_step(f, {6, {}, {12, 13}, {}})};
    if (exact)
      found.insert(found.end(), {check_step(f, {5, {{0, 1, {5, 4}, 9, 4, 0}}, {7, 4}, {}}),
                                 check_fault(f), check_profile(f, 2, map, {{"kernel_loop", 1502}}),
                                 check_profile(f, 4, map, {{"k_rep", 55}}),
                                 check_profile(f, 5, map, {{"asm_exc_page_fault", 4}}),
                                 check_profile(f, 6, map,
                                               {{"asm_sysvec_apic_timer_interrupt", 8},
                                                {"hrtimer_wakeup", 4},
                                                {"asm_common_interrupt", 1}}),
                                 check_wakeups(f, map), check_boot(f)});
    for (const std::string& e : found)
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
  if (!fs::exists(symbols_of(files), ec))
    return "the test guest's symbols " + symbols_of(files).string() +
           " do not exist (build them: ninja -C build isolab-test-guest)";
  return "";
}

// Why the run or its output is not what the test guest produces with a working plugin.
std::string judge(const ProcessResult& r, const std::string& output, const InsnPluginFiles& files,
                  InsnPluginPreflight& p) {
  const bool started = r.start_error.empty() && !r.timed_out && r.term_signal == 0;
  if (!started || r.exit_code != kTestGuestExit)
    return "QEMU " + r.describe() + " (the test guest exits " + std::to_string(kTestGuestExit) +
           ")" + (p.qemu_output.empty() ? "" : "; QEMU said: " + p.qemu_output);
  try {
    InsnCountFile f = parse_insn_count(output);
    p.plugin_api = f.plugin_api;
    p.qemu_api_min = f.qemu_api_min;
    p.qemu_api_max = f.qemu_api_max;
    p.mode = f.mode;
  } catch (const Error& e) {
    return std::string("its output cannot be read: ") + e.what();
  }
  if (p.plugin_api < p.qemu_api_min || p.plugin_api > p.qemu_api_max)
    return "QEMU offers plugin API versions " + std::to_string(p.qemu_api_min) + "-" +
           std::to_string(p.qemu_api_max) + ", the plugin is built for " +
           std::to_string(p.plugin_api);
  std::string symbols;
  try {
    symbols = read_file(symbols_of(files), 1u << 20);
  } catch (const Error& e) {
    return std::string("the test guest's symbols: ") + e.what();
  }
  std::string counts = check_test_guest_counts(output, symbols);
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
  std::string why = judge(r, out, files, p);
  p.ok = why.empty();
  if (!p.ok) p.error = "QEMU insn-count plugin " + files.plugin.string() + ": " + why;
  return p;
}

}  // namespace isolab
