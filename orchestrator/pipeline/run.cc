#include "pipeline/run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>

#include "base/error.h"
#include "base/files.h"
#include "base/json_document.h"
#include "base/json_text.h"
#include "base/progress.h"
#include "base/random_token.h"
#include "base/utc_time.h"
#include "cmdline/analysis_output.h"
#include "gate/gate.h"
#include "guest/channel.h"
#include "guest/init_script.h"
#include "guest/initramfs.h"
#include "kernel/build_log.h"
#include "kernel/cache.h"
#include "kernel/file_lock.h"
#include "kernel/kernel.h"
#include "parse/console.h"
#include "pipeline/cell.h"
#include "pipeline/fidelity.h"
#include "pipeline/host_cpu_plan.h"
#include "pipeline/mailed_series.h"
#include "pipeline/multi_host.h"
#include "pipeline/plan_facts.h"
#include "pipeline/run_doc.h"
#include "pipeline/run_plan.h"
#include "pipeline/scheduler.h"
#include "pipeline/timings.h"
#include "results/host.h"
#include "results/result.h"
#include "results/run_facts.h"
#include "results/variant_facts.h"
#include "vm/backend.h"
#include "vm/libvirt.h"
#include "vm/libvirt_host.h"
#include "workload/registry.h"
#include "workload/step.h"
#include "workload/workload.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {

namespace {

// Appends a stage of this invocation to result.json "timings"."stages" (pipeline/timings.h).
void add_stage(RunDoc& doc, nlohmann::json stage) {
  nlohmann::json& t = doc.doc()["timings"];
  if (!t.is_object()) t = nlohmann::json::object();
  if (!t.contains("stages") || !t["stages"].is_array()) t["stages"] = nlohmann::json::array();
  t["stages"].push_back(std::move(stage));
}

// Serializes progress lines and meter updates from the slots' threads.
std::mutex g_output_mu;

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
  const std::optional<results::Interruption> i = results::resume_facts(d).interruption;
  if (!i) return;
  d["interruptions"].push_back({{"at", i->at}, {"by", i->by}});
  d.erase("interrupted_at");
  d.erase("interrupted_by");
}

// True when the bzImage is a kernel cache entry (not a prebuilt image elsewhere).
// What a kernel build says beside the kernel, as a kernel test robot reports it
// (docs/examples/madvise-latency.md): its compiler and kbuild warnings, from the build log
// (kernel/build_log.h), the robot's checkpatch and includecheck findings (kernel/robot_checks.h),
// and the files its patches change, so that compare can tell which warnings B
// adds in the files its series touches. A log that cannot be read gives null warnings (compare then
// skips them) rather than an empty list.
json build_facts(const KernelArtifact& k) {
  json warnings = nullptr;
  try {
    const std::string log = read_file(k.log, 64u << 20);
    warnings = json::array();
    for (const auto& w : parse_build_warnings(log, build_log_source_dir(log)))
      warnings.push_back(build_warning_to_json(w));
    for (const auto& w : k.robot_findings) warnings.push_back(build_warning_to_json(w));
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
bool hold_recorded_kernel(const fs::path& cache, const std::optional<results::RecordedKernel>& k,
                          std::vector<std::unique_ptr<FileLock>>& held) {
  if (!k || k->bzimage.empty()) return false;
  const fs::path image = k->bzimage;
  if (!in_kernel_cache(cache, image)) return fs::exists(image);
  auto lock = hold_kernel_entry(cache, image.parent_path().filename().string());
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
    // The entry's directory is its build key (a baseline's prebuilt image keeps its entry).
    auto lock = hold_kernel_entry(env.cache_dir, k.bzimage.parent_path().filename().string());
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

// kernel_request, or for a variant that boots a baseline run's kernel (RunOptions::
// baseline_kernels) that kernel's image as a prebuilt one with its recorded release.
KernelRequest variant_kernel_request(const Spec& spec, const VariantSpec& v,
                                     const GuestDerivation& guest, const RunOptions& opt) {
  KernelRequest r = kernel_request(spec, v, guest);
  const auto b = opt.baseline_kernels.find(v.name);
  if (b == opt.baseline_kernels.end()) return r;
  r.source = KernelSourceSpec{};
  r.source.kind = KernelSourceSpec::Kind::prebuilt;
  r.source.prebuilt = b->second.bzimage;
  r.source.prebuilt_release = b->second.kernel_release;
  r.patches.clear();
  r.fragments.clear();
  r.nr_cpus.reset();
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

// The host plan for the spec's guest on this host (pipeline/host_cpu_plan.h); parallel: the
// --parallel override (-1: the spec's).
HostPlan plan_for(const Spec& spec, const GuestDerivation& guest, int parallel) {
  return plan_host(read_host_topology(), guest_cpu_needs(spec, guest, parallel));
}

// One slot per planned guest, each with its own backend.
std::vector<Slot> make_slots(const HostPlan& plan, const RunOptions& opt, ProcessRunner& runner,
                             const std::string& libvirt_uri,
                             std::vector<std::unique_ptr<VmBackend>>& backends) {
  std::vector<Slot> slots;
  for (const SlotPlan& sp : plan.slots) {
    backends.push_back(make_backend(opt.backend, runner, libvirt_uri));
    slots.push_back({sp.index, "local", sp, plan.overcommitted, backends.back().get()});
  }
  return slots;
}

// The "failed"/"build" cell of a variant whose kernel could not be built.
json build_failed_cell(const CellPlan& cell, const std::string& error) {
  return results::to_json(results::unbooted_cell(cell.id, cell.variant, cell.repetition,
                                                 cell.warmup, results::FailureClass::build, error));
}

// What the slots share while cells run: the variants by name, the kernels their records name
// and the variants whose kernel did not build.
struct CellInputs {
  std::map<std::string, const VariantSpec*> vmap;
  std::map<std::string, results::RecordedKernel> kernels;
  const std::map<std::string, std::string>& build_failure;
};

CellInputs cell_inputs(const Spec& spec, RunDoc& doc,
                       const std::map<std::string, std::string>& build_failure) {
  CellInputs in{{}, {}, build_failure};
  for (const auto& v : spec.variants) {
    in.vmap[v.name] = &v;
    if (auto k = results::recorded_kernel(doc.doc(), v.name)) in.kernels[v.name] = std::move(*k);
  }
  return in;
}

// One cell on the slot: the build failure of its variant, or its boots (with retries).
json cell_result(const CellContext& cx, const CellInputs& in, const Slot& slot,
                 const CellPlan& cell) {
  check_interrupt();
  if (auto it = in.build_failure.find(cell.variant); it != in.build_failure.end())
    return build_failed_cell(cell, it->second);
  // A boot ended by a signal is not recorded; --resume redoes it.
  return run_cell_retrying(cx, cell, slot, *in.vmap.at(cell.variant), in.kernels.at(cell.variant),
                           check_interrupt);
}

void report_cell(const RunOptions& opt, const json& cj) {
  if (opt.progress)
    opt.progress("cell " + cj.value("id", "?") + ": " + cj.value("status", "?") +
                 (cj.value("reason", "").empty() ? "" : " (" + cj.value("reason", "") + ")"));
}

// Task "cells" of the meter: the plan's cells recorded so far.
void show_cells(const RunOptions& opt, const RunDoc& doc, const std::vector<CellPlan>& all) {
  if (!opt.meter) return;
  const double done = static_cast<double>(
      std::count_if(all.begin(), all.end(), [&](const auto& c) { return doc.cell_done(c.id); }));
  std::lock_guard<std::mutex> lock(g_output_mu);
  opt.meter->update("cells", done, double(all.size()), "cells", true);
}

// Every cell not yet recorded, on the slots (pipeline/scheduler.h); each result is recorded as
// soon as its cell ends. Throws Interrupted after a signal.
void run_cells(const Spec& spec, const CellContext& cx, std::vector<Slot>& slots,
               const std::map<std::string, std::string>& build_failure, RunDoc& doc) {
  const CellInputs in = cell_inputs(spec, doc, build_failure);
  const std::vector<CellPlan> all = plan_cells(spec, spec.boot_order_seed);
  std::vector<CellPlan> todo;
  for (const auto& cell : all)
    if (!doc.cell_done(cell.id)) todo.push_back(cell);
  show_cells(cx.opt, doc, all);
  auto work = [&](Slot& slot, const CellPlan& cell) {
    json cj = cell_result(cx, in, slot, cell);
    report_cell(cx.opt, cj);
    doc.add_cell(cj);
    show_cells(cx.opt, doc, all);
  };
  run_on_slots(todo, spec.variants.size(), slots, work, [] { return interrupt_requested(); });
  if (cx.opt.meter) cx.opt.meter->finish("cells");
}

// The cells on this machine's slots, one backend per slot (the host plan's guests at once).
void run_here(const Spec& spec, const CellContext& cx, const HostPlan& plan, ProcessRunner& runner,
              const fs::path& cache, const std::map<std::string, std::string>& build_failure,
              RunDoc& doc) {
  const RunOptions& opt = cx.opt;
  std::string libvirt_uri;
  if (opt.backend == "libvirt")
    libvirt_uri = opt.libvirt_uri.empty() ? default_libvirt_uri(cache) : opt.libvirt_uri;
  std::vector<std::unique_ptr<VmBackend>> backends;
  std::vector<Slot> slots = make_slots(plan, opt, runner, libvirt_uri, backends);
  run_cells(spec, cx, slots, build_failure, doc);
}

// Refuses (isolab::Error, before anything is built) a guest the host cannot hold without
// overcommit; says what the plan is otherwise.
HostPlan checked_host_plan(const Spec& spec, const GuestDerivation& guest, const RunOptions& opt) {
  HostPlan p = plan_for(spec, guest, opt.parallel);
  if (!p.ok) throw Error("host CPU plan: " + p.error);
  if (opt.progress) {
    opt.progress("host CPU plan: " + std::to_string(p.slots.size()) + " guest(s) at once" +
                 (p.overcommitted ? ", overcommitted (vCPUs share host CPUs)" : ""));
    for (const auto& n : p.notes) opt.progress("host CPU plan: " + n);
  }
  return p;
}

// The cells of the plan on the hosts of a multi-host run (pipeline/multi_host.h), each measured
// and reported as on this machine's slots. Throws Interrupted after a signal.
void run_cells_on_hosts(const Spec& spec, const CellContext& cx, std::vector<HostConn>& hosts,
                        const std::map<std::string, std::string>& build_failure, RunDoc& doc) {
  const CellInputs in = cell_inputs(spec, doc, build_failure);
  const std::vector<CellPlan> all = plan_cells(spec, spec.boot_order_seed);
  HostCells cells;
  cells.measure = [&](const Slot& slot, const CellPlan& cell) {
    return cell_result(cx, in, slot, cell);
  };
  cells.report = [&](const json& cj) { report_cell(cx.opt, cj); };
  cells.show = [&] { show_cells(cx.opt, doc, all); };
  run_on_hosts(spec, cx.opt, hosts, doc, cells);
  check_interrupt();
}

// ---- run_spec's stages, in the order run_spec_in calls them ----

// The options with progress lines serialized: they come from every slot, one at a time.
RunOptions serialized_progress(const RunOptions& options) {
  RunOptions opt = options;
  if (options.progress)
    opt.progress = [p = options.progress](const std::string& s) {
      std::lock_guard<std::mutex> lock(g_output_mu);
      p(s);
    };
  return opt;
}

void say(const RunOptions& opt, const std::string& s) {
  if (opt.progress) opt.progress(s);
}

// The local host plan, only when the guests run here (a multi-host run has no local guests;
// there each host boots one guest at a time, so a parallel request is reported as ignored).
std::optional<HostPlan> local_host_plan(const Spec& spec, const GuestDerivation& guest,
                                        const RunOptions& opt,
                                        const std::vector<HostSpec>& host_specs) {
  if (host_specs.empty()) return checked_host_plan(spec, guest, opt);
  const int parallel = opt.parallel >= 0 ? opt.parallel : spec.parallel;
  if (parallel != 1)
    say(opt, "parallel " + (parallel == 0 ? std::string("auto") : std::to_string(parallel)) +
                 " is ignored with hosts: each host boots one guest at a time");
  return std::nullopt;
}

// What the checks before any build establish: the guest, the hosts to run on and, without
// hosts, this machine's host CPU plan. Throws as run_spec documents.
struct CheckedSpec {
  GuestDerivation guest;
  std::vector<HostSpec> host_specs;
  std::optional<HostPlan> host_plan;
};

// --results-dir naming a file (or anything not a directory) is refused before any build.
void check_results_dir(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error("--results-dir " + dir.string() + " exists and is not a directory");
}

CheckedSpec checked_spec(const Spec& spec, const RunOptions& opt) {
  check_results_dir(opt.results_dir);
  CheckedSpec c{derive_guest(spec), {}, std::nullopt};
  check_guest_cmdline_length(spec, c.guest, opt.trace);
  check_guest_steps(spec, c.guest);
  check_variant_cmdlines(spec, c.guest);
  check_primary_cpus(spec, c.guest);
  for (const auto& w : c.guest.analysis.value("warnings", json::array()))
    say(opt, "guest command line: " + w.get<std::string>());
  c.host_specs = run_hosts(spec, opt);
  c.host_plan = local_host_plan(spec, c.guest, opt, c.host_specs);
  return c;
}

// The result.json of --resume's run directory, refused unless it reads and was started with
// this spec.
json resumable_result(const Spec& spec, const RunOptions& opt) {
  json old;
  try {
    old = read_json_document(opt.resume_dir / "result.json", std::size_t{512} << 20);
  } catch (const std::exception& e) {
    throw Error("--resume " + opt.resume_dir.string() + ": cannot read result.json: " + e.what());
  }
  if (results::resume_facts(old).spec_sha256 != sha256_hex(json_text(spec.raw)))
    throw Error("--resume " + opt.resume_dir.string() +
                ": the spec differs from the one this run was started with");
  return old;
}

// The run directory of --resume: its result.json, with the same spec, reopened.
std::unique_ptr<RunDoc> resumed_run_dir(const Spec& spec, const RunOptions& opt) {
  json old = resumable_result(spec, opt);
  reopen_interrupted(old);
  old["status"] = "running";
  auto doc = std::make_unique<RunDoc>(opt.resume_dir, old);
  doc->save();
  say(opt, "resuming " + opt.resume_dir.string());
  return doc;
}

// The first result.json of a run: no cells yet, status running.
results::RunResult first_record(const Spec& spec, const GuestDerivation& guest,
                                const std::string& run_id) {
  results::RunResult r;
  r.run_id = run_id;
  r.spec_name = spec.name;
  r.spec = spec.raw;
  r.spec_sha256 = sha256_hex(json_text(spec.raw));
  r.rest["spec_path"] = spec.spec_path.string();
  r.started_at = utc_now();
  r.status = results::RunStatus::running;
  r.rest["guest"] = guest.analysis;
  if (spec.customer) r.rest["fidelity"] = to_json(fidelity_rows(spec, guest));
  r.variants.emplace();
  r.variant_order.emplace();
  for (const auto& v : spec.variants) r.variant_order->push_back(v.name);
  return r;
}

// A new run directory <results-dir>/<UTC time>-<spec name>-<token> with its first result.json.
std::unique_ptr<RunDoc> new_run_dir(const Spec& spec, const GuestDerivation& guest,
                                    const RunOptions& opt) {
  std::string run_id = utc_now("%Y%m%dT%H%M%SZ") + "-" + spec.name + "-" + random_token(6);
  fs::path dir = opt.results_dir / run_id;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw Error("--results-dir " + opt.results_dir.string() + ": cannot create " + dir.string() +
                ": " + (ec ? ec.message() : "not a directory"));
  auto doc = std::make_unique<RunDoc>(dir, results::to_json(first_record(spec, guest, run_id)));
  doc->save();
  return doc;
}

// The run's boot order seed (plan_cells): the one the resumed run recorded, else the spec's,
// else one drawn now; recorded as "boot_order": {"seed", "source": "spec" | "drawn",
// "method"}. Returns the spec with that seed.
Spec with_boot_order(const Spec& spec, RunDoc& doc) {
  json& d = doc.doc();
  Spec seeded = spec;
  if (const auto recorded = results::resume_facts(d).boot_order_seed) {
    seeded.boot_order_seed = *recorded;
    return seeded;
  }
  const bool given = spec.boot_order_seed.has_value();
  seeded.boot_order_seed = given ? *spec.boot_order_seed : draw_boot_order_seed();
  d["boot_order"] = {{"seed", *seeded.boot_order_seed},
                     {"source", given ? "spec" : "drawn"},
                     {"method",
                      "blocks (one repetition of every variant) in plan order, warm-ups first; "
                      "the variants' order within each block shuffled by Fisher-Yates from "
                      "mt19937_64(seed)"}};
  doc.save();
  return seeded;
}

// The accelerator (a KVM that does not run guests within seconds falls back to TCG; the hosts'
// capabilities decide for a multi-host run), then "host", "host_plan" and "comparison_key"
// (whose host fingerprint is the hosts' in a multi-host run, and whose isolab_revision is the
// host fingerprint's: runs of two isolab builds are not compared without --force).
AccelChoice record_host_and_accelerator(const Spec& spec, const GuestDerivation& guest,
                                        const RunOptions& opt, ProcessRunner& runner,
                                        const std::vector<HostConn>& hosts,
                                        const std::optional<HostPlan>& host_plan, RunDoc& doc) {
  AccelChoice accel = hosts.empty() ? choose_accelerator(accel_mode(opt.accel), runner, doc.dir())
                                    : hosts_accelerator(hosts, opt.accel);
  say(opt, "accelerator: " + accel_name(accel.accel) +
               (accel.reason.empty() ? "" : " (" + accel.reason + ")"));
  json& d = doc.doc();
  json host = host_fingerprint(runner, opt.source_dir);
  host["accelerator"] = accel_name(accel.accel);
  host["accelerator_reason"] = accel.reason;
  host["cpu_model_guest"] = accel.cpu_model;
  d["host"] = host;
  if (host_plan) {
    d["host_plan"] = to_json(*host_plan);
    d["host_plan"]["topology"] = to_json(read_host_topology());
    d["host_plan"]["guest_topology"] = to_json(guest.topology);
  }
  d["comparison_key"] = {
      {"accelerator", accel_name(accel.accel)},
      {"cmdline", guest.cmdline},
      {"vcpus", guest.vcpus},
      {"memory_mib", spec.memory_mib},
      {"workloads_sha256", sha256_hex(json_text(workloads_to_json(spec.workloads)))},
      {"host_fingerprint_sha256", hosts.empty() ? host_fingerprint_sha256(host)
                                                : hosts_fingerprint_sha256(hosts, accel.accel)},
      {"isolab_revision", host.value("isolab_revision", "unknown")}};
  doc.save();
  return accel;
}

// Under TCG on this machine, proves before any build or boot that QEMU loads the
// instruction-counting plugin and counts the test guest exactly; records it as "insn_plugin".
// Throws isolab::Error with QEMU's own message when it does not.
void check_insn_plugin(const RunOptions& opt, const AccelChoice& accel,
                       const std::vector<HostConn>& hosts, ProcessRunner& runner, RunDoc& doc) {
  if (accel.accel != Accel::tcg || !hosts.empty() || !opt.insn_count ||
      opt.insn_plugin.plugin.empty())
    return;
  const InsnPluginPreflight pf =
      preflight_insn_plugin(runner, opt.insn_plugin, doc.dir() / "insn-preflight");
  if (!pf.ok)
    throw Error("instruction counting: " + pf.error + " (boot without it: --no-insn-count)");
  doc.doc()["insn_plugin"] = {{"plugin", opt.insn_plugin.plugin.string()},
                              {"plugin_api", pf.plugin_api},
                              {"qemu_api", {pf.qemu_api_min, pf.qemu_api_max}},
                              {"preflight_s", pf.seconds}};
  doc.save();
  say(opt, "instruction counting: QEMU loads the TCG plugin (preflight " +
               std::to_string(static_cast<int>(pf.seconds * 1000)) + " ms)");
}

// The result.json record of one variant's kernel.
json variant_record(const Spec& spec, const GuestDerivation& guest, const VariantSpec& v,
                    const KernelArtifact& k) {
  const std::optional<unsigned> nr_cpus = check_kernel_nr_cpus(spec, guest, v, k);
  results::VariantRecord rec;
  rec.kernel_release = k.kernel_release;
  rec.build_key = k.build_key;
  rec.config_sha256 = k.config_sha256;
  rec.patches = json::array();
  for (const auto& p : k.patches)
    rec.patches->push_back(with_mail_facts(
        v, p.path, {{"path", p.path.string()}, {"sha256", p.sha256}, {"subject", p.subject}}));
  rec.cmdline = guest.cmdline + (v.extra_cmdline.empty() ? "" : " " + v.extra_cmdline);
  const json facts = build_facts(k);
  rec.build_warnings = facts["build_warnings"];
  rec.touched_files = facts["touched_files"];
  rec.rest = {
      {"from_cache", k.from_cache},    {"build_seconds", k.build_seconds},
      {"bzimage", k.bzimage.string()}, {"system_map", k.system_map.string()},
      {"build_log", k.log.string()},   {"nr_cpus", nr_cpus ? json(*nr_cpus) : json(nullptr)},
      {"sysctls", v.sysctls}};
  if (!v.mailed_series.empty()) rec.rest["mailed_series"] = v.mailed_series;
  return results::to_json(rec);
}

// Every variant's kernel (built or from the cache), each held in use (shared lock, in `held`)
// until the run ends, so `isolab cache prune` leaves them alone. Returns the variants whose
// build failed, with the error; their cells fail without booting.
std::map<std::string, std::string> build_kernels(const Spec& spec, const GuestDerivation& guest,
                                                 const RunOptions& opt, ProcessRunner& runner,
                                                 const fs::path& cache, RunDoc& doc,
                                                 std::vector<std::unique_ptr<FileLock>>& held) {
  std::map<std::string, std::string> build_failure;
  json& d = doc.doc();
  for (const auto& v : spec.variants) {
    check_interrupt();
    if (hold_recorded_kernel(cache, results::recorded_kernel(d, v.name), held)) continue;
    say(opt, "variant " + v.name + ": kernel");
    KernelEnv env{cache, runner, doc.dir() / "logs", opt.jobs, std::nullopt, opt.progress};
    env.meter = opt.meter;
    env.command_timeout = std::chrono::seconds(spec.timeouts.build_s);
    try {
      const auto t0 = std::chrono::steady_clock::now();
      KernelArtifact k = ensure_kernel_held(variant_kernel_request(spec, v, guest, opt), env, held);
      add_stage(doc, timing_stage("kernel " + v.name + (k.from_cache ? " (cached)" : ""),
                                  seconds_since(t0), k.stage_seconds));
      d["variants"][v.name] = variant_record(spec, guest, v, k);
      if (auto b = opt.baseline_kernels.find(v.name); b != opt.baseline_kernels.end())
        d["variants"][v.name]["baseline_of"] = to_json(b->second);
      say(opt, "variant " + v.name + ": " + k.kernel_release +
                   (k.from_cache ? " (cached)"
                                 : " (built in " +
                                       std::to_string(static_cast<int>(k.build_seconds)) + " s)"));
    } catch (const Error& e) {
      check_interrupt();  // a make killed by the signal is no build failure
      build_failure[v.name] = e.what();
      results::VariantRecord failed;
      failed.build_error = e.what();
      d["variants"][v.name] = results::to_json(failed);
      say(opt, std::string("variant ") + v.name + ": build failed: " + e.what());
    }
    doc.save();
  }
  return build_failure;
}

// A tool's guest binary (workload/registry.h guest_binaries): a host path, or one of isolab's
// own guest tools, found where the options say.
fs::path guest_binary_path(const std::string& binary, const RunOptions& opt) {
  const std::map<std::string, fs::path> own = {{"vmstat-overhead", opt.vmstat_overhead},
                                               {"madvise-pressure", opt.madvise_pressure},
                                               {"page-fault-bench", opt.page_fault_bench}};
  const auto it = own.find(binary);
  return it == own.end() ? fs::path(binary) : it->second;
}

// The guest image: busybox, cyclictest, stress-ng, vmstat-overhead, isolab-mark,
// libisolab-wake-marker.so and their libraries, plus rtla, madvise-pressure, page-fault-bench and
// oslat only when the spec uses them (the images of the other specs, and their cache entries,
// stay as they were). Its sha256 goes into "guest_image" and into the comparison key
// ("guest_image_sha256"): runs whose guests ran other tools are not compared without --force.
BaseImage guest_image(const Spec& spec, const RunOptions& opt, ProcessRunner& runner,
                      const fs::path& cache, RunDoc& doc) {
  check_interrupt();
  BaseImageInputs bi;
  for (const auto& b : guest_binaries(spec.workloads, true))
    bi.tools.push_back(guest_binary_path(b, opt));
  if (!opt.isolab_mark.empty()) bi.tools.push_back(opt.isolab_mark);
  std::error_code ec;
  if (!opt.wake_marker.empty() && fs::exists(opt.wake_marker, ec))
    bi.tools.push_back(opt.wake_marker);
  for (const auto& b : guest_binaries(spec.workloads, false))
    bi.tools.push_back(guest_binary_path(b, opt));
  BaseImage base = ensure_base_image(runner, bi, cache);
  doc.doc()["guest_image"] = {{"sha256", base.sha256}, {"from_cache", base.from_cache}};
  doc.doc()["comparison_key"]["guest_image_sha256"] = base.sha256;
  doc.save();
  return base;
}

// The counts of measured cells (warm-ups left out), the build failures and the run's status
// (failed: no cell ok; partial: some cell not ok; complete), recorded as finished.
RunSummary finish_run(const std::map<std::string, std::string>& build_failure, RunDoc& doc,
                      double run_seconds) {
  json& d = doc.doc();
  d["timings"] = run_timings(results::timing_stages_json(d), results::cell_times(d), run_seconds);
  RunSummary sum;
  sum.run_dir = doc.dir();
  for (const results::CellLabel& c : results::cell_labels(d)) {
    if (c.warmup) continue;
    if (c.status == "ok")
      ++sum.cells_ok;
    else if (c.status == "invalid")
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
  doc.save();
  return sum;
}

}  // namespace

// run_spec's work, stage by stage; doc is set as soon as the run directory exists, so that
// run_spec can record an interruption in it.
RunSummary run_spec_in(const Spec& spec, const RunOptions& options, ProcessRunner& runner,
                       std::unique_ptr<RunDoc>& doc) {
  const auto t_run = std::chrono::steady_clock::now();
  const RunOptions opt = serialized_progress(options);
  const CheckedSpec checked = checked_spec(spec, opt);
  const GuestDerivation& guest = checked.guest;
  const std::vector<HostSpec>& host_specs = checked.host_specs;
  const std::optional<HostPlan>& host_plan = checked.host_plan;
  const fs::path cache = opt.cache_dir.empty() ? default_cache_dir() : opt.cache_dir;

  doc = opt.resume_dir.empty() ? new_run_dir(spec, guest, opt) : resumed_run_dir(spec, opt);
  say(opt, "run directory: " + doc->dir().string());
  double before_s = 0;
  for (const auto& [name, seconds] : opt.stages_before) {
    add_stage(*doc, timing_stage(name, seconds));
    before_s += seconds;
  }
  const Spec seeded = with_boot_order(spec, *doc);
  say(opt, "boot order: seed " + std::to_string(*seeded.boot_order_seed) +
               " (variants shuffled within each block)");
  auto t0 = std::chrono::steady_clock::now();
  std::vector<HostConn> hosts = record_hosts(host_specs, opt, *doc);
  const AccelChoice accel =
      record_host_and_accelerator(spec, guest, opt, runner, hosts, host_plan, *doc);
  check_insn_plugin(opt, accel, hosts, runner, *doc);
  add_stage(*doc, timing_stage("host and accelerator probe", seconds_since(t0)));

  std::vector<std::unique_ptr<FileLock>> kernels_in_use;
  const auto build_failure = build_kernels(spec, guest, opt, runner, cache, *doc, kernels_in_use);
  t0 = std::chrono::steady_clock::now();
  const BaseImage base = guest_image(spec, opt, runner, cache, *doc);
  add_stage(*doc, timing_stage(std::string("guest image") + (base.from_cache ? " (cached)" : ""),
                               seconds_since(t0)));

  const CellContext cx{seeded, opt, accel, guest, base.path, doc->dir()};
  if (!hosts.empty())
    run_cells_on_hosts(seeded, cx, hosts, build_failure, *doc);
  else
    run_here(seeded, cx, *host_plan, runner, cache, build_failure, *doc);
  check_interrupt();
  return finish_run(build_failure, *doc, before_s + seconds_since(t_run));
}

void check_spec_before_builds(const Spec& spec, const RunOptions& options) {
  RunOptions quiet = options;
  quiet.progress = nullptr;
  checked_spec(spec, quiet);
  if (!options.resume_dir.empty()) (void)resumable_result(spec, options);
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
