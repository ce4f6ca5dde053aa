#include "pipeline/run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <ctime>
#include <random>
#include <set>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "base/utc_time.h"
#include "cmdline/gate.h"
#include "guest/channel.h"
#include "guest/initramfs.h"
#include "guest/plan.h"
#include "kernel/build_log.h"
#include "kernel/cache.h"
#include "kernel/file_lock.h"
#include "kernel/kernel.h"
#include "parse/console.h"
#include "pipeline/guest_setup.h"
#include "pipeline/plan.h"
#include "results/host.h"
#include "vm/backend.h"
#include "vm/libvirt.h"
#include "workload/workload.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {

namespace {

std::string random_token(std::size_t n) {
  static const char* al = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device rd;
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += al[rd() % 36];
  return s;
}

json vm_outcome_to_json(const VmOutcome& o) {
  return {{"end", vm_end_name(o.end)},
          {"qemu_exit_code", o.qemu_exit_code},
          {"seconds", o.seconds},
          {"seconds_to_first_output", o.seconds_to_first_output},
          {"accelerator", accel_name(o.accel)},
          {"detail", o.detail},
          {"qemu_stderr_excerpt", o.qemu_stderr_excerpt}};
}

// The run's document, saved atomically after every change.
class RunDoc {
 public:
  RunDoc(fs::path dir, json doc) : dir_(std::move(dir)), doc_(std::move(doc)) {}
  json& doc() { return doc_; }
  void save() { write_file_atomic(dir_ / "result.json", json_text(doc_, 2) + "\n"); }
  const fs::path& dir() const { return dir_; }
  bool cell_done(const std::string& id) const {
    for (const auto& c : doc_["cells"])
      if (c.value("id", "") == id) return true;
    return false;
  }
  void add_cell(json cell) {
    auto& cells = doc_["cells"];
    for (auto& c : cells)
      if (c.value("id", "") == cell.value("id", "")) {
        c = std::move(cell);
        save();
        return;
      }
    cells.push_back(std::move(cell));
    save();
  }

 private:
  fs::path dir_;
  json doc_;
};

// Unwinds run_spec's main path once interrupt_requested(): run_spec records the interruption.
struct Interrupted {};

void check_interrupt() {
  if (interrupt_requested()) throw Interrupted{};
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(sig);
  }
}

// "status": "interrupted" with the time and the signal; the cells recorded so far stay, so that
// --resume continues from here.
RunSummary record_interruption(RunDoc& doc) {
  json& d = doc.doc();
  d["status"] = "interrupted";
  d["interrupted_at"] = utc_now();
  d["interrupted_by"] = signal_name(interrupt_signal());
  doc.save();
  RunSummary sum;
  sum.run_dir = doc.dir();
  sum.status = "interrupted";
  sum.interrupt_signal = interrupt_signal();
  return sum;
}

// A resumed run that had been interrupted: the interruption moves to "interruptions" and the
// run is running again.
void reopen_interrupted(json& d) {
  if (d.value("status", "") != "interrupted") return;
  d["interruptions"].push_back(
      {{"at", d.value("interrupted_at", "")}, {"by", d.value("interrupted_by", "")}});
  d.erase("interrupted_at");
  d.erase("interrupted_by");
}

// True when the bzImage is a kernel cache entry (not a prebuilt image elsewhere).
// rtla (and its libtracefs/libtraceevent) goes into the guest image only when a workload runs
// it, so the default image and its cache key stay as they were.
bool uses_rtla(const Spec& spec) {
  for (const auto& w : spec.workloads)
    if (w.tool.rfind("rtla-", 0) == 0) return true;
  return false;
}

// What a kernel build says beside the kernel (seed 002): its compiler and kbuild warnings,
// from the build log (kernel/build_log.h), and the files its patches change, so that compare
// can tell which warnings B adds in the files its series touches. A log that cannot be read
// gives null warnings (compare then skips them) rather than an empty list.
json build_facts(const KernelArtifact& k) {
  json warnings = nullptr;
  try {
    const std::string log = read_file(k.log, 64u << 20);
    warnings = json::array();
    for (const auto& w : parse_build_warnings(log, build_log_source_dir(log)))
      warnings.push_back(build_warning_to_json(w));
  } catch (const Error&) {
  }
  std::set<std::string> touched;
  for (const auto& p : k.patches) {
    try {
      for (auto& f : patch_touched_files(read_file(p.path, 16u << 20))) touched.insert(f);
    } catch (const Error&) {
    }
  }
  return {{"build_warnings", warnings}, {"touched_files", touched}};
}

bool in_kernel_cache(const fs::path& cache, const fs::path& bzimage) {
  return bzimage.parent_path().parent_path().lexically_normal() ==
         (fs::absolute(cache) / "kernels").lexically_normal();
}

// A variant recorded by an earlier attempt of this run (--resume): holds its cache entry and
// says whether its bzImage is still there.
bool hold_recorded_kernel(const fs::path& cache, const json& variant,
                          std::vector<std::unique_ptr<FileLock>>& held) {
  if (!variant.contains("bzimage")) return false;
  const fs::path image = variant["bzimage"].get<std::string>();
  if (!in_kernel_cache(cache, image)) return fs::exists(image);
  auto lock = hold_kernel_entry(cache, variant.value("build_key", ""));
  if (!fs::exists(image)) return false;  // pruned: build it again (after releasing the lock)
  held.push_back(std::move(lock));
  return true;
}

// ensure_kernel, then a shared lock on the entry; if a prune removed it in between, again.
KernelArtifact ensure_kernel_held(const KernelRequest& req, const KernelEnv& env,
                                  std::vector<std::unique_ptr<FileLock>>& held) {
  for (int attempt = 1;; ++attempt) {
    KernelArtifact k = ensure_kernel(req, env);
    if (!in_kernel_cache(env.cache_dir, k.bzimage)) return k;
    auto lock = hold_kernel_entry(env.cache_dir, k.build_key);
    if (fs::exists(k.bzimage) || attempt == 3) {
      held.push_back(std::move(lock));
      return k;
    }
  }
}

AccelMode accel_mode(AccelRequest r) {
  switch (r) {
    case AccelRequest::kvm:
      return AccelMode::kvm;
    case AccelRequest::tcg:
      return AccelMode::tcg;
    default:
      return AccelMode::automatic;
  }
}

KernelRequest kernel_request(const Spec& spec, const VariantSpec& v, const GuestDerivation& guest) {
  KernelRequest r;
  switch (spec.source.kind) {
    case KernelSourceSpec::Kind::tarball:
      r.source.kind = SourceSpec::Kind::tarball;
      r.source.tarball = spec.source.tarball;
      break;
    case KernelSourceSpec::Kind::git:
      r.source.kind = SourceSpec::Kind::git;
      r.source.git_url = spec.source.git;
      r.source.git_ref = spec.source.ref;
      break;
    case KernelSourceSpec::Kind::prebuilt:
      r.source.kind = SourceSpec::Kind::prebuilt;
      r.source.prebuilt_bzimage = spec.source.prebuilt;
      break;
  }
  r.patches = v.patches;
  r.base_target = spec.base_config;
  r.fragments = spec.config_fragments;
  r.fragments.insert(r.fragments.end(), v.config_fragments.begin(), v.config_fragments.end());
  if (r.source.kind != SourceSpec::Kind::prebuilt)
    r.nr_cpus = guest_kernel_nr_cpus(r.fragments, guest.nr_cpus_required);
  r.variant_name = v.name;
  return r;
}

// Reads CONFIG_NR_CPUS from the .config the variant's guest boots and analyses the guest's
// command line with it; throws when the guest would then show other isolation than the one
// planned (a kernel with NR_CPUS below the guest's CPUs rejects or trims its CPU lists).
// Returns the NR_CPUS, or nullopt for a prebuilt kernel (no .config).
std::optional<unsigned> check_kernel_nr_cpus(const Spec& spec, const GuestDerivation& guest,
                                             const VariantSpec& v, const KernelArtifact& k) {
  if (k.config_path.empty()) return std::nullopt;
  const unsigned nr = kernel_config_nr_cpus(read_file(k.config_path), k.config_path.string());
  const GuestDerivation booted = derive_guest(spec, nr);
  if (to_json(booted.expected) != to_json(guest.expected))
    throw Error("variant " + v.name + ": its kernel has CONFIG_NR_CPUS=" + std::to_string(nr) +
                " (" + k.config_path.string() + "), but the guest needs at least " +
                std::to_string(guest.nr_cpus_required) +
                ": its command line would parse differently (isolated '" +
                booted.expected.isolated.to_list() + "' instead of '" +
                guest.expected.isolated.to_list() + "', nohz_full '" +
                booted.expected.nohz_full.to_list() + "' instead of '" +
                guest.expected.nohz_full.to_list() + "')");
  return nr;
}

std::string rel(const fs::path& p, const fs::path& base) {
  std::error_code ec;
  auto r = fs::relative(p, base, ec);
  return ec ? p.string() : r.string();
}

struct CellContext {
  const Spec& spec;
  const RunOptions& opt;
  VmBackend& backend;
  const AccelChoice& accel;
  const GuestDerivation& guest;
  const ExpectedIsolation& expected;
  fs::path base_image;
  fs::path run_dir;
};

// One boot of one cell. Never throws for what the guest does; returns the cell's JSON.
// True when a cyclictest load of the spec runs `tool`.
bool uses_load_tool(const Spec& spec, const std::string& tool) {
  for (const auto& w : spec.workloads)
    if (w.load && w.load->front().tool == tool) return true;
  return false;
}

// Writes the max-latency trace of a latency_tracer step beside the cell's result as
// cells/<id>/<workload>.<tracer>.trace and returns the summary with "file" (run-dir relative).
json keep_latency_trace(json summary, const WorkloadSpec& w, const ChannelContents& ch,
                        const fs::path& cdir, const fs::path& run_dir) {
  const std::string rec = w.name + "." + w.latency_tracer + ".trace";
  const ChannelRecord* r = ch.find(rec);
  if (!r) return summary;
  write_file_atomic(cdir / rec, r->data);
  summary["file"] = fs::relative(cdir / rec, run_dir).string();
  return summary;
}

json run_cell(const CellContext& cx, const CellPlan& cell, const VariantSpec& variant,
              const json& vdoc, int attempt) {
  fs::path cdir = cx.run_dir / "cells" / cell.id;
  fs::create_directories(cdir);
  json c = {{"id", cell.id},
            {"variant", cell.variant},
            {"repetition", cell.repetition},
            {"warmup", cell.warmup},
            {"attempt", attempt},
            {"accelerator", accel_name(cx.accel.accel)},
            {"raw_dir", rel(cdir, cx.run_dir)},
            {"metrics", json::object()},
            {"histograms", json::object()},
            {"failure_class", nullptr},
            {"reason", ""}};
  auto fail = [&](const std::string& cls, const std::string& reason) {
    c["status"] = "failed";
    c["failure_class"] = cls;
    c["reason"] = reason;
    return c;
  };

  // The guest plan.
  GuestPlan plan;
  plan.nonce = random_token(24);
  plan.vcpus = cx.guest.vcpus;
  plan.expect_isolated = cx.guest.expect_isolated;
  plan.expect_nohz_full = cx.guest.expect_nohz_full;
  plan.skip_on_mismatch = cx.spec.gate_expect_fail.empty();
  plan.busy_cpus = cx.guest.expect_nohz_full;
  if (const char* inject = std::getenv("ISOLAB_TEST_GUEST_INJECT")) plan.before_steps = inject;
  plan.sysctls.assign(variant.sysctls.begin(), variant.sysctls.end());
  int steps_s = 0, longest = 0;
  for (const auto& w : cx.spec.workloads) {
    GuestStep st = guest_step(w, cx.guest.partition, cx.spec.timeouts, cx.opt.trace);
    steps_s += st.timeout_s;
    longest = std::max(longest, st.timeout_s);
    plan.steps.push_back(std::move(st));
  }
  std::vector<MemoryFile> files;
  for (auto& [path, content] : render_plan_files(plan)) files.push_back({path, content, 0755});
  write_cpio_memory(cdir / "plan.cpio", files);
  concatenate_files({cx.base_image, cdir / "plan.cpio"}, cdir / "initramfs.cpio");

  VmConfig vm;
  vm.name = "isolab-" + cell.id + "-" + plan.nonce.substr(0, 6);
  vm.kernel = vdoc["bzimage"].get<std::string>();
  vm.initrd = cdir / "initramfs.cpio";
  vm.cmdline = variant_guest_cmdline(cx.guest, variant, cx.opt.trace);
  vm.vcpus = cx.guest.vcpus;
  vm.memory_mib = cx.spec.memory_mib;
  vm.numa_nodes = guest_numa_nodes(cx.spec);
  vm.accel = cx.accel.accel;
  vm.cpu_model = cx.accel.cpu_model;
  vm.console_log = cdir / "console.log";
  vm.result_channel = cdir / "results.bin";
  vm.qemu_log = cdir / "qemu.log";
  vm.boot_timeout = std::chrono::seconds(cx.spec.timeouts.boot_s);
  vm.silence_timeout = std::chrono::seconds(std::max(cx.spec.timeouts.silence_s, longest + 30));
  vm.wall_timeout = std::chrono::seconds(cx.spec.timeouts.boot_s + steps_s + plan.busy_window_s +
                                         cx.spec.timeouts.shutdown_s);
  c["cmdline_requested"] = vm.cmdline;
  if (cx.opt.progress)
    cx.opt.progress("cell " + cell.id + ": booting (" + accel_name(vm.accel) + ")");
  VmOutcome out = cx.backend.run(vm);
  std::error_code ec;
  fs::remove(cdir / "initramfs.cpio", ec);  // large and rebuilt from the cache on demand
  c["boot"] = vm_outcome_to_json(out);
  c["wall_seconds"] = out.seconds;

  std::string console;
  try {
    console = read_file(vm.console_log, 64u << 20);
  } catch (const Error&) {
  }
  std::string stream;
  try {
    stream = read_file(vm.result_channel, 512u << 20);
  } catch (const Error&) {
  }
  ChannelContents ch = parse_channel(stream, plan.nonce);
  if (!ch.problems.empty()) c["channel_problems"] = ch.problems;

  // Facts and the isolation gate, from what the guest sent before any workload.
  auto facts_map = ch.as_map();
  if (facts_map.count("uname_r")) {
    GuestFacts facts = parse_guest_facts(facts_map);
    GateReport gate = evaluate_gate(cx.expected, facts);
    c["guest"] = {{"cmdline", sanitize_excerpt(facts_map["cmdline"], 4096)},
                  {"uname_r", sanitize_excerpt(facts_map["uname_r"], 200)},
                  {"cpu_online", sanitize_excerpt(facts_map["cpu_online"], 200)},
                  {"isolated", sanitize_excerpt(facts_map["isolated"], 200)},
                  {"nohz_full", facts_map.count("nohz_full")
                                    ? json(sanitize_excerpt(facts_map["nohz_full"], 200))
                                    : json(nullptr)},
                  {"clocksource", sanitize_excerpt(facts_map["clocksource"], 100)}};
    c["gate"] = to_json(gate);
    // The kernel release proves which build runs (LOCALVERSION carries the build key).
    std::string want = vdoc.value("kernel_release", "");
    std::string got = facts_map["uname_r"];
    while (!got.empty() && (got.back() == '\n' || got.back() == '\r')) got.pop_back();
    c["kernel_release_match"] = want.empty() || got == want;
    // A spec can declare checks whose failure is the point of the test (gate_expect_fail):
    // the cell is still measured when only those fail.
    bool pass = gate.pass;
    if (!pass) {
      bool only_expected = true;
      json expected_fail = json::array();
      for (const auto& row : gate.rows) {
        if (row.pass) continue;
        const auto& allowed = cx.spec.gate_expect_fail;
        if (std::find(allowed.begin(), allowed.end(), row.check) == allowed.end())
          only_expected = false;
        else
          expected_fail.push_back(row.check);
      }
      if (only_expected) {
        pass = true;
        c["gate_expected_failures"] = expected_fail;
      }
    }
    c["gate_pass"] = pass;
    c["gate_reason"] = gate.reason;
  }

  // Console: panics and friends decide before anything else (case O3: QEMU exits 0 after a
  // panic with -no-reboot, so the console is the only witness).
  ConsoleReport cons = classify_console(console);
  c["console_findings"] = console_report_to_json(cons);
  if (out.end == VmOutcome::End::qemu_failed || out.end == VmOutcome::End::host_cpu_msr_error)
    return fail("infrastructure", "QEMU: " + out.detail);
  if (!facts_map.count("uname_r")) {
    // No init reached: a boot failure, whatever killed it (a panic, a hang, an early reboot).
    std::string why = cons.fatal ? cons.fatal->kind + " at console line " +
                                       std::to_string(cons.fatal->line) + ": " + cons.fatal->summary
                                 : vm_end_name(out.end) + ": " + out.detail;
    return fail("boot", "the guest never reached our init (" + why + ")");
  }
  if (cons.fatal)
    return fail(cons.fatal->klass, cons.fatal->kind + " at console line " +
                                       std::to_string(cons.fatal->line) + ": " +
                                       cons.fatal->summary);
  if (!c.value("kernel_release_match", true))
    return fail("infrastructure", "guest runs kernel '" +
                                      sanitize_excerpt(facts_map["uname_r"], 100) +
                                      "', expected '" + vdoc.value("kernel_release", "") + "'");

  // Workloads.
  bool workload_failed = false;
  std::string workload_reason;
  for (const auto& w : cx.spec.workloads) {
    if (!ch.find(w.name + ".stdout")) continue;
    WorkloadOutcome wo = parse_workload(w, ch);
    for (auto& [name, m] : wo.metrics) c["metrics"][name] = m;
    if (!wo.histograms.is_null())
      for (auto it = wo.histograms.begin(); it != wo.histograms.end(); ++it)
        c["histograms"][it.key()] = *it;
    if (!wo.notes.empty()) c["notes"][w.name] = wo.notes;
    if (!wo.noise.is_null()) c["noise"][w.name] = wo.noise;
    if (!wo.latency_trace.is_null())
      c["latency_traces"][w.name] = keep_latency_trace(wo.latency_trace, w, ch, cdir, cx.run_dir);
    if (wo.failed && !workload_failed) {
      workload_failed = true;
      workload_reason = "workload " + w.name + ": " + wo.failure;
    }
  }
  // Keep every record as a raw file beside the result.
  for (const auto& r : ch.records) {
    std::string fname = r.name;
    for (char& ch2 : fname)
      if (!std::isalnum(static_cast<unsigned char>(ch2)) && ch2 != '.' && ch2 != '-' && ch2 != '_')
        ch2 = '_';
    if (fname.empty() || fname[0] == '.') fname = "_" + fname;
    write_file_atomic(cdir / "records" / fname, r.data);
  }

  if (!ch.done) {
    if (out.end == VmOutcome::End::powered_off)
      return fail("workload", "the guest powered off before finishing the plan" +
                                  (workload_reason.empty() ? "" : "; " + workload_reason));
    return fail("timeout", vm_end_name(out.end) + ": " + out.detail);
  }
  if (!c.value("gate_pass", false)) {
    c["status"] = "invalid";
    c["reason"] = "isolation gate: " + c.value("gate_reason", std::string("failed"));
    return c;
  }
  if (const ChannelRecord* pre = ch.find("precheck");
      pre && pre->rc != 0 && plan.skip_on_mismatch) {
    // The guest's own quick check skipped the workloads although the host-side gate passed.
    c["status"] = "invalid";
    c["reason"] =
        "the guest's precheck found a CPU count or sysfs isolation mismatch and skipped the "
        "workloads (see console.log, lines starting 'isolab: precheck')";
    return c;
  }
  if (std::string why = check_guest_setup(cx.spec, variant, ch, c); !why.empty()) {
    c["status"] = "invalid";
    c["reason"] = why;
    return c;
  }
  if (workload_failed) return fail("workload", workload_reason);
  c["status"] = "ok";
  return c;
}

}  // namespace

// run_spec's work; doc is set as soon as the run directory exists, so that run_spec can record
// an interruption in it.
RunSummary run_spec_in(const Spec& spec, const RunOptions& opt, ProcessRunner& runner,
                       std::unique_ptr<RunDoc>& doc) {
  auto say = [&](const std::string& s) {
    if (opt.progress) opt.progress(s);
  };
  GuestDerivation guest = derive_guest(spec);
  check_guest_cmdline_length(spec, guest, opt.trace);
  const ExpectedIsolation& expected = guest.expected;
  fs::path cache = opt.cache_dir.empty() ? default_cache_dir() : opt.cache_dir;

  // The run directory, new or resumed.
  if (!opt.resume_dir.empty()) {
    json old;
    try {
      old = json::parse(read_file(opt.resume_dir / "result.json"));
    } catch (const std::exception& e) {
      throw Error("--resume " + opt.resume_dir.string() + ": cannot read result.json: " + e.what());
    }
    if (old.value("spec_sha256", "") != sha256_hex(json_text(spec.raw)))
      throw Error("--resume " + opt.resume_dir.string() +
                  ": the spec differs from the one this run was started with");
    reopen_interrupted(old);
    old["status"] = "running";
    doc = std::make_unique<RunDoc>(opt.resume_dir, old);
    doc->save();
    say("resuming " + opt.resume_dir.string());
  } else {
    std::string run_id = utc_now("%Y%m%dT%H%M%SZ") + "-" + spec.name + "-" + random_token(6);
    fs::path dir = opt.results_dir / run_id;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
      throw Error("--results-dir " + opt.results_dir.string() + ": cannot create " + dir.string() +
                  ": " + (ec ? ec.message() : "not a directory"));
    json d = {{"schema_version", 1},
              {"run_id", run_id},
              {"spec_name", spec.name},
              {"spec", spec.raw},
              {"spec_sha256", sha256_hex(json_text(spec.raw))},
              {"spec_path", spec.spec_path.string()},
              {"started_at", utc_now()},
              {"status", "running"},
              {"guest", guest.analysis},
              {"variants", json::object()},
              {"variant_order", json::array()},
              {"cells", json::array()}};
    for (const auto& v : spec.variants) d["variant_order"].push_back(v.name);
    doc = std::make_unique<RunDoc>(dir, d);
    doc->save();
  }
  json& d = doc->doc();
  say("run directory: " + doc->dir().string());
  // Accelerator: detect a KVM that does not run guests within seconds, fall back to TCG.
  AccelChoice accel = choose_accelerator(accel_mode(opt.accel), runner, doc->dir());
  say("accelerator: " + accel_name(accel.accel) +
      (accel.reason.empty() ? "" : " (" + accel.reason + ")"));
  json host = host_fingerprint(runner, opt.source_dir);
  host["accelerator"] = accel_name(accel.accel);
  host["accelerator_reason"] = accel.reason;
  host["cpu_model_guest"] = accel.cpu_model;
  d["host"] = host;
  d["comparison_key"] = {
      {"accelerator", accel_name(accel.accel)},
      {"cmdline", guest.cmdline},
      {"vcpus", guest.vcpus},
      {"memory_mib", spec.memory_mib},
      {"workloads_sha256", sha256_hex(json_text(workloads_to_json(spec.workloads)))},
      {"host_fingerprint_sha256", host_fingerprint_sha256(host)}};
  doc->save();

  // Kernels, each held in use (shared lock) until the run ends, so `isolab cache prune` leaves
  // them alone.
  std::map<std::string, std::string> build_failure;
  std::vector<std::unique_ptr<FileLock>> kernels_in_use;
  for (const auto& v : spec.variants) {
    check_interrupt();
    if (hold_recorded_kernel(cache, d["variants"].value(v.name, json::object()), kernels_in_use))
      continue;
    say("variant " + v.name + ": kernel");
    KernelEnv env{cache, runner, doc->dir() / "logs", opt.jobs, std::nullopt, opt.progress};
    env.meter = opt.meter;
    env.command_timeout = std::chrono::seconds(spec.timeouts.build_s);
    try {
      KernelArtifact k = ensure_kernel_held(kernel_request(spec, v, guest), env, kernels_in_use);
      const std::optional<unsigned> nr_cpus = check_kernel_nr_cpus(spec, guest, v, k);
      json patches = json::array();
      for (const auto& p : k.patches)
        patches.push_back({{"path", p.path.string()}, {"sha256", p.sha256}});
      d["variants"][v.name] = {
          {"kernel_release", k.kernel_release},
          {"build_key", k.build_key},
          {"config_sha256", k.config_sha256},
          {"patches", patches},
          {"from_cache", k.from_cache},
          {"build_seconds", k.build_seconds},
          {"bzimage", k.bzimage.string()},
          {"build_log", k.log.string()},
          {"nr_cpus", nr_cpus ? json(*nr_cpus) : json(nullptr)},
          {"sysctls", v.sysctls},
          {"cmdline", guest.cmdline + (v.extra_cmdline.empty() ? "" : " " + v.extra_cmdline)}};
      d["variants"][v.name].update(build_facts(k));
      say("variant " + v.name + ": " + k.kernel_release +
          (k.from_cache
               ? " (cached)"
               : " (built in " + std::to_string(static_cast<int>(k.build_seconds)) + " s)"));
    } catch (const Error& e) {
      check_interrupt();  // a make killed by the signal is no build failure
      build_failure[v.name] = e.what();
      d["variants"][v.name] = {{"build_error", e.what()}};
      say(std::string("variant ") + v.name + ": build failed: " + e.what());
    }
    doc->save();
  }

  // Guest image (busybox, cyclictest, stress-ng, vmstat-overhead and their libraries).
  check_interrupt();
  BaseImageInputs bi;
  bi.tools = {"/usr/bin/cyclictest", "/usr/bin/stress-ng", opt.vmstat_overhead};
  if (uses_rtla(spec)) bi.tools.push_back("/usr/bin/rtla");
  if (uses_load_tool(spec, "madvise-pressure")) bi.tools.push_back(opt.madvise_pressure);
  // Only when used: the images of the other specs (and their cache entries) stay as they were.
  if (std::any_of(spec.workloads.begin(), spec.workloads.end(),
                  [](const WorkloadSpec& w) { return w.tool == "page-fault-bench"; }))
    bi.tools.push_back(opt.page_fault_bench);
  BaseImage base = ensure_base_image(runner, bi, cache);
  d["guest_image"] = {{"sha256", base.sha256}, {"from_cache", base.from_cache}};
  doc->save();

  std::string libvirt_uri;
  if (opt.backend == "libvirt")
    libvirt_uri = opt.libvirt_uri.empty() ? default_libvirt_uri(cache) : opt.libvirt_uri;
  std::unique_ptr<VmBackend> backend = make_backend(opt.backend, runner, libvirt_uri);
  CellContext cx{spec, opt, *backend, accel, guest, expected, base.path, doc->dir()};
  std::map<std::string, const VariantSpec*> vmap;
  for (const auto& v : spec.variants) vmap[v.name] = &v;

  const std::vector<CellPlan> cells = plan_cells(spec);
  auto cells_done = [&] {
    return static_cast<double>(std::count_if(cells.begin(), cells.end(),
                                             [&](const auto& c) { return doc->cell_done(c.id); }));
  };
  auto show_cells = [&] {
    if (opt.meter) opt.meter->update("cells", cells_done(), double(cells.size()), "cells", true);
  };
  show_cells();
  for (const auto& cell : cells) {
    if (doc->cell_done(cell.id)) continue;
    check_interrupt();
    json cj;
    if (build_failure.count(cell.variant)) {
      cj = {{"id", cell.id},
            {"variant", cell.variant},
            {"repetition", cell.repetition},
            {"warmup", cell.warmup},
            {"status", "failed"},
            {"failure_class", "build"},
            {"reason", build_failure[cell.variant]},
            {"metrics", json::object()}};
    } else {
      // Infrastructure failures (QEMU did not start, host CPU model problems) are retried a
      // bounded number of times and never counted against the kernel.
      for (int attempt = 1; attempt <= 3; ++attempt) {
        cj = run_cell(cx, cell, *vmap[cell.variant], d["variants"][cell.variant], attempt);
        check_interrupt();  // a boot ended by the signal is not recorded; --resume redoes it
        if (cj.value("failure_class", json()) != "infrastructure") break;
        say("cell " + cell.id + ": infrastructure failure, retrying: " + cj.value("reason", ""));
      }
    }
    say("cell " + cell.id + ": " + cj.value("status", "?") +
        (cj.value("reason", "").empty() ? "" : " (" + cj.value("reason", "") + ")"));
    doc->add_cell(cj);
    show_cells();
  }
  if (opt.meter) opt.meter->finish("cells");

  RunSummary sum;
  sum.run_dir = doc->dir();
  for (const auto& c : d["cells"]) {
    std::string st = c.value("status", "");
    if (c.value("warmup", false)) continue;
    if (st == "ok")
      ++sum.cells_ok;
    else if (st == "invalid")
      ++sum.cells_invalid;
    else
      ++sum.cells_failed;
  }
  for (const auto& [variant, error] : build_failure)
    sum.build_failures.push_back(variant + ": " + error);
  sum.status = sum.cells_ok == 0                        ? "failed"
               : (sum.cells_invalid + sum.cells_failed) ? "partial"
                                                        : "complete";
  d["status"] = sum.status;
  d["finished_at"] = utc_now();
  doc->save();
  return sum;
}

RunSummary run_spec(const Spec& spec, const RunOptions& opt, ProcessRunner& runner) {
  std::unique_ptr<RunDoc> doc;
  try {
    return run_spec_in(spec, opt, runner, doc);
  } catch (...) {
    // Whatever the signal broke (a killed make or QEMU, a child refused) is not a result.
    if (!interrupt_requested() || !doc) throw;
    return record_interruption(*doc);
  }
}

}  // namespace isolab
