#include "pipeline/cell.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iterator>
#include <random>
#include <set>
#include <sstream>

#include "base/files.h"
#include "base/progress.h"
#include "base/random_token.h"
#include "gate/gate.h"
#include "guest/initramfs.h"
#include "parse/console.h"
#include "parse/system_map.h"
#include "pipeline/cell_classify.h"
#include "pipeline/customer_guest.h"
#include "pipeline/guest_setup.h"
#include "pipeline/host_sample.h"
#include "pipeline/timings.h"
#include "results/result.h"
#include "vm/qemu.h"
#include "workload/insn_cell.h"
#include "workload/insn_metrics.h"
#include "workload/pmu_metrics.h"
#include "workload/step.h"
#include "workload/workload.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {

namespace {

std::string rel(const fs::path& p, const fs::path& base) {
  std::error_code ec;
  auto r = fs::relative(p, base, ec);
  return ec ? p.string() : r.string();
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

// A CPU list as the kernel prints it, or "" when it is not one.
std::string normalized_list(const std::string& l) {
  CpuListParse p = try_parse_cpulist(l, kMaxCpus);
  return p.ok() ? p.set.to_list() : "";
}

}  // namespace

GuestPlan cell_guest_plan(const CellContext& cx, const VariantSpec& variant,
                          const std::string& nonce) {
  GuestPlan plan;
  plan.nonce = nonce;
  plan.vcpus = cx.guest.vcpus;
  plan.expect_isolated = cx.guest.expect_isolated;
  plan.expect_nohz_full = cx.guest.expect_nohz_full;
  plan.skip_on_mismatch = cx.spec.gate_expect_fail.empty();
  plan.busy_cpus = cx.guest.expect_nohz_full;
  if (const char* inject = std::getenv("ISOLAB_TEST_GUEST_INJECT")) plan.before_steps = inject;
  plan.sysctls.assign(variant.sysctls.begin(), variant.sysctls.end());
  plan.runtime = guest_runtime(expected_runtime(cx.spec, variant));
  for (const auto& w : cx.spec.workloads)
    plan.steps.push_back(guest_step(w, cx.guest.partition, cx.spec.timeouts, cx.opt.trace));
  return plan;
}

PreparedCell prepare_image(const CellContext& cx, const CellPlan& cell,
                           const VariantSpec& variant) {
  PreparedCell p;
  p.dir = cx.run_dir / "cells" / cell.id;
  p.variant = &variant;
  fs::create_directories(p.dir);
  p.plan = cell_guest_plan(cx, variant, random_token(24));
  for (const GuestStep& st : p.plan.steps) {
    p.steps_s += st.timeout_s;
    p.longest = std::max(p.longest, st.timeout_s);
  }
  std::vector<MemoryFile> files;
  for (auto& [path, content] : render_plan_files(p.plan)) files.push_back({path, content, 0755});
  write_cpio_memory(p.dir / "plan.cpio", files);
  concatenate_files({cx.base_image, p.dir / "plan.cpio"}, p.dir / "initramfs.cpio");
  return p;
}

VmConfig cell_vm_config(const CellContext& cx, const CellPlan& cell, const Slot& slot,
                        const PreparedCell& p, const VariantSpec& variant,
                        const results::RecordedKernel& kernel) {
  VmConfig vm;
  vm.name = "isolab-" + cell.id + "-" + p.plan.nonce.substr(0, 6);
  vm.kernel = kernel.bzimage;
  vm.initrd = p.dir / "initramfs.cpio";
  vm.cmdline = variant_guest_cmdline(cx.guest, variant, cx.opt.trace);
  vm.vcpus = cx.guest.vcpus;
  vm.sockets = cx.guest.topology.sockets;
  vm.cores = cx.guest.topology.cores;
  vm.threads = cx.guest.topology.threads;
  for (const CpuSet& c : slot.cpus.vcpu_cpus) vm.vcpu_pin.push_back(c.to_list());
  vm.emulator_pin = slot.cpus.emulator_cpus.to_list();
  vm.memory_mib = cx.spec.memory_mib;
  vm.numa_nodes = guest_numa_nodes(cx.spec);
  vm.accel = cx.accel.accel;
  vm.cpu_model = cx.accel.cpu_model;
  vm.console_log = p.dir / "console.log";
  vm.result_channel = p.dir / "results.bin";
  vm.qemu_log = p.dir / "qemu.log";
  if (cx.opt.insn_count && !cx.opt.insn_plugin.plugin.empty() && slot.local())
    vm.insn_plugin = InsnPluginConfig{cx.opt.insn_plugin.plugin, p.dir / "insn-count.txt",
                                      cx.guest.partition.isolated.cpus(), kernel.system_map, true};
  const TimeoutSpec& t = cx.spec.timeouts;
  vm.boot_timeout = std::chrono::seconds(t.boot_s);
  vm.silence_timeout = std::chrono::seconds(std::max(t.silence_s, p.longest + 30));
  vm.wall_timeout =
      std::chrono::seconds(t.boot_s + p.steps_s + p.plan.busy_window_s + t.shutdown_s);
  return vm;
}

VmOutcome boot(const Slot& slot, const VmConfig& vm) {
  VmOutcome out = slot.backend->run(vm);
  std::error_code ec;
  fs::remove(vm.initrd, ec);  // large and rebuilt from the cache on demand
  return out;
}

// The instruction-counting plugin's file of a boot that loaded the plugin (nullopt otherwise).
std::optional<std::string> read_insn_counts(const VmConfig& vm) {
  if (!insn_plugin_active(vm)) return std::nullopt;
  try {
    return read_file(vm.insn_plugin->output, 256u << 20);
  } catch (const Error&) {
    return std::nullopt;
  }
}

CellEvidence collect(const VmConfig& vm, const GuestPlan& plan) {
  CellEvidence ev;
  try {
    ev.console = read_file(vm.console_log, 64u << 20);
  } catch (const Error&) {
  }
  std::string stream;
  try {
    stream = read_file(vm.result_channel, 512u << 20);
  } catch (const Error&) {
  }
  ev.channel = parse_channel(stream, plan.nonce);
  ev.insn_counts = read_insn_counts(vm);
  return ev;
}

json guest_topology_view(const std::string& record) {
  std::istringstream in(record);
  std::string line;
  std::set<std::string> packages, cores;
  unsigned threads = 0, cpus = 0;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string cpu, pkg, core, siblings;
    if (!(l >> cpu >> pkg >> core >> siblings)) return nullptr;
    CpuListParse s = try_parse_cpulist(siblings, kMaxCpus);
    if (!s.ok() || pkg.size() > 10 || core.size() > 10) return nullptr;
    packages.insert(pkg);
    cores.insert(pkg + "/" + core);
    threads = std::max(threads, s.set.count());
    ++cpus;
  }
  if (cpus == 0 || cpus > 4096) return nullptr;
  return {{"sockets", packages.size()},
          {"cores", cores.size() / packages.size()},
          {"threads", threads},
          {"cpus", cpus}};
}

json slot_to_json(const Slot& slot) {
  json v = json::array();
  for (const CpuSet& c : slot.cpus.vcpu_cpus) v.push_back(c.to_list());
  return {{"index", slot.index},
          {"host", slot.host},
          {"overcommitted", slot.overcommitted},
          {"vcpus", v},
          {"emulator", slot.cpus.emulator_cpus.to_list()}};
}

json host_cpus_json(const Slot& slot, const VmOutcome& out) {
  if (!slot.local())
    return {{"index", slot.index},
            {"host", slot.host},
            {"pinning", "not applied"},
            {"reason", "the guest ran on libvirt host " + slot.host +
                           ", whose CPUs the host CPU plan does not cover"}};
  json j = slot_to_json(slot);
  json applied = json::array();
  bool as_planned = !out.affinity.empty();
  for (const ThreadAffinity& a : out.affinity) {
    applied.push_back({{"role", a.role},
                       {"vcpu", a.vcpu},
                       {"tid", a.tid},
                       {"planned", a.planned},
                       {"cpus_allowed_list", a.applied}});
    // A thread that ended before the read-back ("") is not a mismatch.
    if (!a.applied.empty() && normalized_list(a.applied) != normalized_list(a.planned))
      as_planned = false;
  }
  j["applied"] = applied;
  j["pinned_as_planned"] = as_planned;
  if (!out.affinity_error.empty()) j["applied_error"] = out.affinity_error;
  return j;
}

namespace {

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

// The guest's facts and the isolation gate, from what it sent before any workload.
void record_guest(json& c, const CellContext& cx, const VariantSpec& variant,
                  const results::RecordedKernel& kernel,
                  std::map<std::string, std::string>& facts_map) {
  GuestFacts facts = parse_guest_facts(facts_map);
  GateReport gate = evaluate_gate(cx.guest.expected, facts, expected_runtime(cx.spec, variant));
  auto fact = [&](const char* k, std::size_t n) { return sanitize_excerpt(facts_map[k], n); };
  c["guest"] = {
      {"cmdline", fact("cmdline", 4096)},
      {"uname_r", fact("uname_r", 200)},
      {"cpu_online", fact("cpu_online", 200)},
      {"isolated", fact("isolated", 200)},
      {"nohz_full", facts_map.count("nohz_full") ? json(fact("nohz_full", 200)) : json(nullptr)},
      {"clocksource", fact("clocksource", 100)},
      {"topology", guest_topology_view(facts_map["cpu_topology"])}};
  c["topology_requested"] = to_json(cx.guest.topology);
  c["gate"] = to_json(gate);
  // The kernel release proves which build runs (LOCALVERSION carries the build key).
  const std::string& want = kernel.kernel_release;
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

// The first workload failure and the first workload that did not measure what was asked (a
// requested stress-ng stressor skipped although stress-ng exited 0); "" when none.
struct WorkloadVerdicts {
  std::string failure;
  std::string invalid;
};

// Parses every workload the guest reported into c. Keeps every record as a raw file beside the
// result.
WorkloadVerdicts record_workloads(json& c, const CellContext& cx, const ChannelContents& ch,
                                  const fs::path& cdir) {
  WorkloadVerdicts v;
  for (const auto& w : cx.spec.workloads) {
    if (!ch.find(w.name + ".stdout")) continue;
    WorkloadOutcome wo = parse_workload(w, ch);
    for (auto& [name, m] : wo.metrics) c["metrics"][name] = m;
    if (!wo.histograms.is_null())
      for (auto it = wo.histograms.begin(); it != wo.histograms.end(); ++it)
        c["histograms"][it.key()] = *it;
    if (!wo.notes.empty()) c["notes"][w.name] = wo.notes;
    if (!wo.tool_versions.empty()) c["tool_versions"][w.name] = wo.tool_versions;
    if (!wo.noise.is_null()) c["noise"][w.name] = wo.noise;
    if (!wo.latency_trace.is_null())
      c["latency_traces"][w.name] = keep_latency_trace(wo.latency_trace, w, ch, cdir, cx.run_dir);
    if (wo.failed && v.failure.empty()) v.failure = "workload " + w.name + ": " + wo.failure;
    if (!wo.invalid.empty() && v.invalid.empty())
      v.invalid = "workload " + w.name + ": " + wo.invalid;
  }
  for (const auto& r : ch.records) {
    std::string fname = r.name;
    for (char& ch2 : fname)
      if (!std::isalnum(static_cast<unsigned char>(ch2)) && ch2 != '.' && ch2 != '-' && ch2 != '_')
        ch2 = '_';
    if (fname.empty() || fname[0] == '.') fname = "_" + fname;
    write_file_atomic(cdir / "records" / fname, r.data);
  }
  return v;
}

// The instruction-count metrics of the cell and their record: from the TCG plugin when it
// counted this boot (workload/insn_cell.h), on KVM from the guest PMU counts the guest tools
// reported (workload/pmu_metrics.h; a record saying why when there are none).
void record_insn_counts(json& c, const CellContext& cx, const CellEvidence& ev,
                        const results::RecordedKernel& kernel) {
  if (cx.accel.accel == Accel::kvm) {
    InsnCellOutcome o = pmu_cell_metrics({&cx.spec.workloads, &ev.channel});
    for (auto& [name, m] : o.metrics) c["metrics"][name] = m;
    c["insn_counts"] = std::move(o.record);
    return;
  }
  if (!ev.insn_counts) return;
  std::optional<SystemMap> map;
  try {
    if (const std::string path = kernel.system_map; !path.empty())
      map = parse_system_map(read_file(path, 64u << 20));
  } catch (const Error&) {
  }
  InsnCellInput in;
  in.workloads = &cx.spec.workloads;
  in.isolated = cx.guest.partition.isolated;
  in.records = &ev.channel;
  in.plugin_text = *ev.insn_counts;
  in.system_map = map ? &*map : nullptr;
  InsnCellOutcome o = insn_cell_metrics(in);
  for (auto& [name, m] : o.metrics) c["metrics"][name] = m;
  if (!map) o.record["profile_note"] = "no System.map for this kernel: functions not named";
  c["insn_counts"] = std::move(o.record);
}

}  // namespace

json classify(const CellContext& cx, const PreparedCell& p, const VmOutcome& out,
              const CellEvidence& ev, const results::RecordedKernel& kernel, json c) {
  const ChannelContents& ch = ev.channel;
  if (!ch.problems.empty()) c["channel_problems"] = ch.problems;
  auto facts_map = ch.as_map();
  const bool reached_init = facts_map.count("uname_r") > 0;
  if (reached_init) record_guest(c, cx, *p.variant, kernel, facts_map);
  const ConsoleReport cons = classify_console(ev.console);
  c["console_findings"] = console_report_to_json(cons);
  if (const auto v =
          classify_boot(boot_facts(c, out, cons, ev.console, reached_init, kernel.kernel_release)))
    return apply_verdict(std::move(c), *v);

  const WorkloadVerdicts wv = record_workloads(c, cx, ch, p.dir);
  record_insn_counts(c, cx, ev, kernel);
  RunFacts f;
  f.done = ch.done;
  f.outcome = out;
  f.workload_failure = wv.failure;
  f.workload_invalid = wv.invalid;
  f.gate_pass = c.value("gate_pass", false);
  f.gate_reason = c.value("gate_reason", std::string("failed"));
  const ChannelRecord* pre = ch.find("precheck");
  f.precheck_skipped = pre && pre->rc != 0 && p.plan.skip_on_mismatch;
  f.guest_setup_mismatch = [&] { return check_guest_setup(cx.spec, *p.variant, ch, c); };
  const CellVerdict v = classify_run(f);  // before c moves: the setup check records into c
  return apply_verdict(std::move(c), v);
}

namespace {

// The cell's record before it boots: who it is, where it runs, nothing measured, no failure.
results::CellRecord cell_header(const CellContext& cx, const CellPlan& cell, const Slot& slot,
                                const PreparedCell& p, int attempt) {
  results::CellRecord c;
  c.id = cell.id;
  c.variant = cell.variant;
  c.repetition = cell.repetition;
  c.warmup = cell.warmup;
  c.attempt = attempt;
  c.accelerator = accel_name(cx.accel.accel);
  c.raw_dir = rel(p.dir, cx.run_dir);
  c.rest["slot"] = slot.index;
  c.overcommitted = slot.local() ? results::Nullable<bool>(slot.overcommitted) : std::nullopt;
  c.metrics = json::object();
  c.histograms = json::object();
  c.failure_class = results::Nullable<results::FailureClass>();
  c.reason = "";
  return c;
}

}  // namespace

json run_cell(const CellContext& cx, const CellPlan& cell, const Slot& slot,
              const VariantSpec& variant, const results::RecordedKernel& kernel, int attempt) {
  const auto t_image = std::chrono::steady_clock::now();
  PreparedCell p = prepare_image(cx, cell, variant);
  const double image_s = seconds_since(t_image);
  json c = results::to_json(cell_header(cx, cell, slot, p, attempt));
  VmConfig vm = cell_vm_config(cx, cell, slot, p, variant, kernel);
  c["cmdline_requested"] = vm.cmdline;
  if (cx.opt.progress)
    cx.opt.progress("cell " + cell.id + ": booting (" + accel_name(vm.accel) + ", " +
                    (slot.local() ? "slot " + std::to_string(slot.index) : "host " + slot.host) +
                    ")");
  const HostLoadSample load_start = sample_host_load();
  c["started_at"] = load_start.at;
  VmOutcome out = boot(slot, vm);
  const HostLoadSample load_end = sample_host_load();
  c["ended_at"] = load_end.at;
  c["host_load"] = slot.local() ? host_load_json(load_start, load_end, ::sysconf(_SC_CLK_TCK))
                                : nlohmann::json();
  if (!slot.local())
    c["host_load_note"] =
        "the guest ran on libvirt host " + slot.host + "; this machine's load is not that host's";
  c["boot"] = vm_outcome_to_json(out);
  c["wall_seconds"] = out.seconds;
  c["host_cpus"] = host_cpus_json(slot, out);
  const auto t_host = std::chrono::steady_clock::now();
  const CellEvidence ev = collect(vm, p.plan);
  json classified = classify(cx, p, out, ev, kernel, std::move(c));
  BootPhaseInput phases{image_s, out.seconds, seconds_since(t_host), &ev.channel, {}};
  for (const GuestStep& st : p.plan.steps) phases.steps.push_back(st.name);
  classified["phases"] = boot_phases(phases);
  return classified;
}

namespace {

// Boots of one cell at most, and the failure classes that boot it again (cell_classify.h rows):
// those that are not the kernel's.
constexpr int kMaxBootAttempts = 3;
const char* const kRetriedClasses[] = {"infrastructure"};

bool boots_again(const json& cell) {
  const json cls = cell.value("failure_class", json());
  return cls.is_string() && std::find(std::begin(kRetriedClasses), std::end(kRetriedClasses),
                                      cls.get<std::string>()) != std::end(kRetriedClasses);
}

}  // namespace

json run_cell_retrying(const CellContext& cx, const CellPlan& cell, const Slot& slot,
                       const VariantSpec& variant, const results::RecordedKernel& kernel,
                       const std::function<void()>& after_boot) {
  json cj;
  json earlier = json::array();
  for (int attempt = 1; attempt <= kMaxBootAttempts; ++attempt) {
    if (attempt > 1)
      earlier.push_back({{"attempt", cj.value("attempt", attempt - 1)},
                         {"failure_class", cj["failure_class"]},
                         {"reason", cj.value("reason", "")}});
    cj = run_cell(cx, cell, slot, variant, kernel, attempt);
    if (after_boot) after_boot();
    if (!boots_again(cj)) break;
    if (cx.opt.progress && attempt < kMaxBootAttempts)
      cx.opt.progress("cell " + cell.id +
                      ": infrastructure failure, retrying: " + cj.value("reason", ""));
  }
  if (!earlier.empty()) cj["earlier_attempts"] = earlier;
  return cj;
}

}  // namespace isolab
