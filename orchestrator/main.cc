// isolab: build vanilla and patched kernels, boot them under QEMU with CPU-isolation command
// lines, measure latency and noise on the isolated CPUs, and compare A against B.
//
// Exit status (every subcommand): 0 success; 2 bad input or failure, with a message on stderr
// that says what and where. `isolab compare` also returns 1 when a declared primary metric
// regressed or B has a kernel failure, gate failure or build warning counted against it
// (compare/compare.h).
//
// Layout: one struct per subcommand holding its option values, with declare() (its options on
// a CLI::App) and run() (what it does once parsed, returning the exit status); the table
// subcommands() at the end lists them in `isolab --help` order, and main() walks it.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "base/progress.h"
#include "cmdline/analyze.h"
#include "compare/commands.h"
#include "compare/history.h"
#include "kernel/cache.h"
#include "kernel/kernel.h"
#include "pipeline/baseline.h"
#include "pipeline/doctor.h"
#include "pipeline/hostplan.h"
#include "pipeline/import.h"
#include "pipeline/plan.h"
#include "pipeline/plan_facts.h"
#include "pipeline/plan_text.h"
#include "pipeline/run.h"
#include "report/command.h"
#include "spec/spec.h"
#include "sys/process.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path self_dir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : p.parent_path();
}

// The guest tool is built beside the isolab binary by CMake.
fs::path find_vmstat_overhead() {
  if (const char* e = std::getenv("ISOLAB_VMSTAT_OVERHEAD")) return e;
  return self_dir() / "vmstat-overhead";
}

// guest-tools/madvise-pressure.c, built beside the isolab binary like vmstat-overhead.
fs::path find_madvise_pressure() {
  if (const char* e = std::getenv("ISOLAB_MADVISE_PRESSURE")) return e;
  return self_dir() / "madvise-pressure";
}

// The page allocation benchmark, built beside isolab too.
fs::path find_page_fault_bench() {
  if (const char* e = std::getenv("ISOLAB_PAGE_FAULT_BENCH")) return e;
  return self_dir() / "page-fault-bench";
}

// The step marker of instruction counting (guest-tools/isolab-mark.c), built beside isolab too.
fs::path find_isolab_mark() {
  if (const char* e = std::getenv("ISOLAB_MARK")) return e;
  return self_dir() / "isolab-mark";
}

std::string read_input(const std::string& arg, const std::string& file) {
  if (!file.empty()) {
    if (file == "-") {
      std::string s, line;
      while (std::getline(std::cin, line)) s += line + "\n";
      return s;
    }
    return isolab::read_file(file, 64u << 20);
  }
  return arg;
}

// --parallel: "" -> -1 (the spec's), "auto" -> 0, else N >= 1. Throws isolab::Error.
int parse_parallel(const std::string& v) {
  if (v.empty()) return -1;
  if (v == "auto") return 0;
  try {
    std::size_t used = 0;
    int n = std::stoi(v, &used);
    if (used == v.size() && n >= 1 && n <= 256) return n;
  } catch (const std::exception&) {
  }
  throw isolab::Error("--parallel: expected auto or a number in [1, 256], got '" + v + "'");
}

// Runs `step` on the history database of `results_dir` (RESULTS_DIR/isolab.db); a failure
// there is a warning on stderr, not an error of the command.
void with_history(const fs::path& results_dir,
                  const std::function<void(isolab::HistoryDb&)>& step) {
  try {
    auto db = isolab::HistoryDb::open_in(results_dir);
    step(db);
  } catch (const std::exception& e) {
    std::cerr << "isolab: warning: history index: " << e.what() << "\n";
  }
}

// isolab run SPEC: build, boot and measure every variant; prints the run directory last.
struct RunCommand {
  std::string spec_path, results_dir = "results", accel = "auto", cache_dir, resume,
                         backend = "qemu", libvirt_uri, parallel, progress_format = "text";
  std::vector<std::string> hosts;
  bool no_trace = false, dry_run = false, aa = false, quiet = false, no_insn_count = false,
       force = false, json_plan = false;
  int jobs = 0, repetitions = 0, warmups = -1;
  long boot_order_seed = -1;

  // Options in `isolab run --help` order: inputs, where it builds and boots, what it does.
  void declare(CLI::App& run) {
    declare_inputs(run);
    declare_placement(run);
    declare_behaviour(run);
  }

  void declare_inputs(CLI::App& run) {
    run.add_option("spec", spec_path, "Spec file (JSON); see README.md 'Spec'")->required();
    run.add_option("--results-dir", results_dir, "Where run directories are created")
        ->capture_default_str();
    run.add_option("--accel", accel, "auto (KVM if it really runs guests, else TCG), kvm or tcg")
        ->check(CLI::IsMember({"auto", "kvm", "tcg"}))
        ->capture_default_str();
    run.add_option("--cache-dir", cache_dir,
                   "Kernel and image cache (default $ISOLAB_CACHE_DIR or ~/.cache/isolab)");
    run.add_option("--resume", resume,
                   "Continue an interrupted run directory: finished cells are kept");
  }

  void declare_placement(CLI::App& run) {
    run.add_option("--backend", backend, "qemu or libvirt")
        ->check(CLI::IsMember({"qemu", "libvirt"}))
        ->capture_default_str();
    run.add_option("--libvirt-uri", libvirt_uri,
                   "libvirt connection for --backend libvirt (default $ISOLAB_LIBVIRT_URI, else "
                   "isolab's private driver: qemu:///embed?root=CACHE/libvirt)");
    run.add_option("--host", hosts,
                   "libvirt host to place cells on (repeatable; replaces the spec's hosts): "
                   "qemu+ssh://HOST/system, qemu+tcp://..., qemu:///system, "
                   "qemu+unix:///session?socket=PATH. Whole A/B blocks go to one host.")
        ->allow_extra_args(false);
    run.add_option("-j,--jobs", jobs, "make -j for kernel builds (default: host CPUs)");
    run.add_option("--parallel", parallel,
                   "Guests booted at once, each on its own host CPUs: N or auto (as many as the "
                   "host CPU plan fits); default: the spec's \"parallel\" (1)");
  }

  void declare_behaviour(CLI::App& run) {
    run.add_flag("--no-trace", no_trace, "Do not trace the isolated CPUs during workloads");
    run.add_flag("--no-insn-count", no_insn_count,
                 "Under TCG, boot without the QEMU plugin that counts guest instructions (no "
                 "insns_per_* or kernel_insns_per_s metrics)");
    run.add_flag("--dry-run", dry_run,
                 "Print the plan (guest, variants, cells, guest steps) and exit");
    run.add_flag("--json", json_plan, "With --dry-run: the plan as JSON instead of text");
    run.add_option("--repetitions", repetitions,
                   "Override the spec's repetitions (boots per variant)")
        ->check(CLI::Range(1, 1000));
    run.add_option("--warmup", warmups, "Override the spec's warm-up repetitions")
        ->check(CLI::Range(0, 100));
    run.add_option("--boot-order-seed", boot_order_seed,
                   "Seed of the variants' order within each block of cells (default: the "
                   "spec's boot_order_seed, else drawn at run start; recorded in result.json)")
        ->check(CLI::Range(0L, isolab::kMaxBootOrderSeed));
    run.add_flag("-q,--quiet", quiet, "No progress on stderr (errors and warnings only)");
    run.add_option("--progress", progress_format,
                   "text (a live line on a terminal, else a line at most every 10 s) or json "
                   "(one object per line on stderr, for CI)")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    run.add_flag("--force", force,
                 "Nightly mode: when the baseline run's kernel cannot boot in this run, compare "
                 "with that run's boots anyway (a host change between the runs then reads as a "
                 "kernel change)");
    run.add_flag("--aa", aa,
                 "A/A calibration run: the first variant's kernel as both A and B (then `isolab "
                 "calibrate RUN_DIR`)");
  }

  int run() const {
    isolab::Spec spec = isolab::load_spec_file(spec_path);
    apply_overrides(spec);
    try {
      return dry_run ? print_plan(spec) : measure(spec);
    } catch (const isolab::SpecError& e) {
      throw isolab::spec_error_in_file(e, spec_path);
    }
  }

  // The run itself: build, boot, measure; prints the run directory last.
  int measure(isolab::Spec spec) const {
    // From here a signal stops the children and the run records itself as interrupted.
    isolab::install_interrupt_handlers();
    auto runner = isolab::make_real_runner();
    isolab::RunOptions o = run_options();
    const bool nightly = spec.baseline_last_good || !spec.baseline_run.empty();
    const NightlyBaseline baseline = nightly ? boot_baseline_beside(spec, o) : NightlyBaseline{};
    isolab::Progress meter(isolab::progress_mode(progress_format, quiet, STDERR_FILENO), std::cerr,
                           isolab::monotonic_seconds);
    o.progress = [&meter](const std::string& s) { meter.message(s); };
    o.meter = &meter;
    isolab::RunSummary sum = isolab::run_spec(spec, o, *runner);
    if (sum.status == "interrupted") return report_interrupted(sum);
    with_history(results_dir, [&](isolab::HistoryDb& db) {
      isolab::index_run(db, isolab::load_result(sum.run_dir), sum.run_dir);
    });
    meter.message(sum.status + ": " + std::to_string(sum.cells_ok) + " ok, " +
                  std::to_string(sum.cells_invalid) + " invalid, " +
                  std::to_string(sum.cells_failed) + " failed");
    int status = build_status(sum);
    if (nightly) status = compare_with_baseline(spec, baseline, sum, status);
    std::cout << sum.run_dir.string() << std::endl;
    return status;
  }

  // Overrides are written into the spec document too, so that result.json, --resume and
  // the comparability key see the spec that really ran.
  void apply_overrides(isolab::Spec& spec) const {
    if (repetitions > 0) {
      spec.repetitions = repetitions;
      spec.raw["repetitions"] = repetitions;
    }
    if (warmups >= 0) {
      spec.warmup_repetitions = warmups;
      spec.raw["warmup_repetitions"] = warmups;
    }
    if (boot_order_seed >= 0) {
      spec.boot_order_seed = static_cast<std::uint64_t>(boot_order_seed);
      spec.raw["boot_order_seed"] = boot_order_seed;
    }
    if (aa) make_aa(spec);
  }

  // --aa: the first variant twice, as NAME-A and NAME-B, in a spec named NAME-aa.
  static void make_aa(isolab::Spec& spec) {
    isolab::VariantSpec a = spec.variants.front(), b = spec.variants.front();
    a.name = (a.name + "-A").substr(0, 40);
    b.name = (b.name + "-B").substr(0, 40);
    spec.variants = {a, b};
    nlohmann::json va = spec.raw["variants"][0], vb = va;
    va["name"] = a.name;
    vb["name"] = b.name;
    spec.raw["variants"] = nlohmann::json::array({va, vb});
    spec.raw["name"] = spec.name = (spec.name + "-aa").substr(0, 40);
  }

  // --dry-run: the plan as text on stdout (--json: as JSON).
  int print_plan(const isolab::Spec& spec) const {
    isolab::GuestDerivation g = isolab::derive_guest(spec);
    isolab::check_guest_cmdline_length(spec, g, !no_trace);
    for (const auto& w : g.analysis.value("warnings", json::array()))
      std::cerr << "isolab: guest command line: " << w.get<std::string>() << "\n";
    if (!json_plan) {
      auto runner = isolab::make_real_runner();
      std::cout << isolab::plan_text(
          spec, g,
          isolab::gather_plan_facts(spec, g,
                                    {cache_dir, accel, !hosts.empty() || !spec.hosts.empty(),
                                     !no_trace, parse_parallel(parallel)},
                                    *runner));
      return 0;
    }
    json plan = isolab::describe_plan(spec, g);
    // The local host plan only for guests that run here (not on --host / "hosts").
    if (hosts.empty() && spec.hosts.empty())
      plan["host_plan"] = isolab::to_json(
          isolab::plan_host(isolab::read_host_topology(),
                            isolab::guest_cpu_needs(spec, g, parse_parallel(parallel))));
    std::cout << isolab::json_text(plan, 2) << "\n";
    return 0;
  }

  // The options as run_spec takes them; progress and meter are set by the caller.
  isolab::RunOptions run_options() const {
    isolab::RunOptions o;
    o.spec_path = spec_path;
    o.results_dir = results_dir;
    o.cache_dir = cache_dir;
    o.resume_dir = resume;
    o.accel = accel == "kvm"   ? isolab::AccelRequest::kvm
              : accel == "tcg" ? isolab::AccelRequest::tcg
                               : isolab::AccelRequest::automatic;
    o.backend = backend;
    o.libvirt_uri = libvirt_uri;
    o.hosts = hosts;
    o.trace = !no_trace;
    o.jobs = jobs;
    o.parallel = parse_parallel(parallel);
    o.source_dir = ISOLAB_SOURCE_DIR;
    o.vmstat_overhead = find_vmstat_overhead();
    o.page_fault_bench = find_page_fault_bench();
    o.madvise_pressure = find_madvise_pressure();
    o.isolab_mark = find_isolab_mark();
    o.insn_plugin = isolab::find_insn_plugin_files(self_dir());
    o.insn_count = !no_insn_count;
    return o;
  }

  // An interrupted run: how to resume it on stderr, its directory on stdout.
  int report_interrupted(const isolab::RunSummary& sum) const {
    std::cerr << "isolab: interrupted by signal " << sum.interrupt_signal
              << "; finish with: isolab run " << spec_path << " --resume " << sum.run_dir.string()
              << "\n";
    std::cout << sum.run_dir.string() << std::endl;
    return 128 + sum.interrupt_signal;  // what a shell reports for a death by that signal
  }

  // Nightly mode: the stored run that names the baseline kernel, and that kernel when it can
  // be booted in this run.
  struct NightlyBaseline {
    std::optional<fs::path> run;
    std::optional<isolab::BaselineKernel> kernel;
    std::string why_not;  // when kernel is nullopt
  };

  // Finds the baseline run (before this run joins the history) and, when its kernel of the
  // baseline variant is still there, adds it to the spec as "<variant>-baseline", booted in
  // this run with tonight's kernels in the same blocks.
  NightlyBaseline boot_baseline_beside(isolab::Spec& spec, isolab::RunOptions& o) const {
    NightlyBaseline b;
    if (!spec.baseline_run.empty()) b.run = spec.baseline_run;
    if (spec.baseline_last_good)
      with_history(results_dir, [&](isolab::HistoryDb& db) {
        if (auto ref = isolab::last_good_run(db, spec.name, spec.baseline_variant))
          b.run = fs::path(ref->path);
      });
    if (!b.run) return b;
    b.kernel = isolab::baseline_kernel(isolab::load_result(*b.run), *b.run, spec.baseline_variant,
                                       &b.why_not);
    if (!b.kernel) return b;
    isolab::add_baseline_variant(spec, *b.kernel);
    o.baseline_kernels[isolab::baseline_variant_name(spec.baseline_variant)] = *b.kernel;
    std::cerr << "isolab: baseline: the kernel of " << spec.baseline_variant << " in run "
              << b.kernel->run_id << " boots in this run as "
              << isolab::baseline_variant_name(spec.baseline_variant)
              << ", in the same blocks as tonight's\n";
    return b;
  }

  // A variant that could not be built (patch, config or compiler error) fails the run,
  // after every other variant has been measured and recorded.
  static int build_status(const isolab::RunSummary& sum) {
    int status = sum.status == "failed" || !sum.build_failures.empty() ? 2 : 0;
    for (const auto& b : sum.build_failures) std::cerr << "isolab: error: variant " << b << "\n";
    return status;
  }

  // Nightly mode: compare tonight's variant with the baseline kernel booted in the same run
  // (report on stderr) when the run is good. Without that kernel, comparing with the stored
  // run's boots needs --force.
  int compare_with_baseline(const isolab::Spec& spec, const NightlyBaseline& baseline,
                            const isolab::RunSummary& sum, int status) const {
    if (!baseline.run) {
      std::cerr << "isolab: baseline: no earlier good run of " << spec.name << " in " << results_dir
                << "; this run becomes the baseline if it is good\n";
      return status;
    }
    if (status != 0) return status;
    isolab::CompareCommandOptions c;
    c.history_db = fs::path(results_dir) / "isolab.db";
    if (baseline.kernel) {
      c.run_dirs = {sum.run_dir};
      c.variant_a = isolab::baseline_variant_name(spec.baseline_variant);
      c.variant_b = spec.baseline_variant;
      return isolab::compare_command(c, std::cerr, std::cerr);
    }
    const std::string risk =
        "comparing with the boots of run " + baseline.run->string() +
        " treats boots made at another time, under another host load, as exchangeable with "
        "tonight's: a change of the host or of its load between the runs reads as a change of "
        "the kernel";
    if (!force) {
      std::cerr << "isolab: baseline: " << baseline.why_not << ", so it cannot boot beside "
                << "tonight's kernel; " << risk
                << ". Refused: give --force to compare across runs anyway\n";
      return 2;
    }
    std::cerr << "isolab: baseline: " << baseline.why_not << "; --force: " << risk << "\n";
    c.run_dirs = {*baseline.run, sum.run_dir};
    c.variant_a = c.variant_b = spec.baseline_variant;
    c.force = true;
    return isolab::compare_command(c, std::cerr, std::cerr);
  }
};

// isolab compare RUN_DIR | RUN_A RUN_B
struct CompareCommand {
  isolab::CompareCommandOptions opt;
  std::string noise_floor;

  void declare(CLI::App& cmp) {
    cmp.add_option("runs", opt.run_dirs, "RUN_DIR, or RUN_A RUN_B")->required()->expected(1, 2);
    cmp.add_option("--format", opt.format,
                   "text, json, markdown, junit or html (the page of `isolab report`)")
        ->check(CLI::IsMember({"text", "json", "markdown", "junit", "html"}))
        ->capture_default_str();
    cmp.add_option("--variant-a", opt.variant_a,
                   "Variant of the first run to use as A (default: its first)");
    cmp.add_option("--variant-b", opt.variant_b,
                   "Variant to use as B (default: the second of the run)");
    cmp.add_option("--noise-floor", noise_floor, "Calibration JSON from `isolab calibrate`");
    cmp.add_flag("--force", opt.force,
                 "Compare runs with a different accelerator, host, cmdline, workloads, isolab "
                 "build or guest image (shown in the report), or use a calibration made under "
                 "another comparison key");
    cmp.add_flag("--pool-hosts", opt.pool_hosts,
                 "Combine cells of libvirt hosts whose fingerprints (CPU model, CPUs, libvirt and "
                 "QEMU versions) differ (refused by default)");
    cmp.add_option("--primary", opt.primary,
                   "METRIC[@CPUS]:higher|lower (the direction of a regression), repeatable: the "
                   "primary metrics the exit status rests on, replacing the spec's "
                   "compare.primary");
    cmp.add_flag("--relabel-aa", opt.relabel_aa,
                 "For one A/A run: relabel its boots in every equal way (or a seeded sample) and "
                 "print how many relabellings would exit 1, and why (text or json)");
  }

  int run() {
    if (!noise_floor.empty()) opt.noise_floor_file = noise_floor;
    if (opt.format == "html") {
      isolab::ReportCommandOptions r;
      r.compare = opt;
      r.compare_status = true;
      return isolab::report_command(r, std::cout, std::cerr);
    }
    return isolab::compare_command(opt, std::cout, std::cerr);
  }
};

// isolab report RUN_DIR | RUN_A RUN_B: the HTML page.
struct ReportCommand {
  isolab::ReportCommandOptions opt;
  std::string output, noise_floor;

  void declare(CLI::App& rep) {
    rep.add_option("runs", opt.compare.run_dirs, "RUN_DIR, or RUN_A RUN_B")
        ->required()
        ->expected(1, 2);
    rep.add_option("-o,--output", output, "Write the page here (default: stdout)");
    rep.add_option("--variant-a", opt.compare.variant_a, "As for compare");
    rep.add_option("--variant-b", opt.compare.variant_b, "As for compare");
    rep.add_option("--noise-floor", noise_floor, "As for compare");
    rep.add_flag("--force", opt.compare.force, "As for compare");
    rep.add_option("--primary", opt.compare.primary, "As for compare");
  }

  int run() {
    if (!noise_floor.empty()) opt.compare.noise_floor_file = noise_floor;
    if (!output.empty()) opt.output = output;
    return isolab::report_command(opt, std::cout, std::cerr);
  }
};

// isolab calibrate RUN...: drift, spread, MDE and false alarms of one or more A/A runs.
struct CalibrateCommand {
  isolab::CalibrateCommandOptions opt;
  std::string output;

  void declare(CLI::App& cal) {
    cal.add_option("runs", opt.run_dirs,
                   "A/A run directories (one kernel as every variant, e.g. `isolab run --aa`), "
                   "made under one comparison key")
        ->required();
    cal.add_option("--variant", opt.variants,
                   "Pool only this variant (repeatable; default: every variant of each run)")
        ->allow_extra_args(false);
    cal.add_option("--seed", opt.seed, "Seed of the simulations and sampled permutations")
        ->capture_default_str();
    cal.add_option("--format", opt.format, "text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
    cal.add_option("--output", output,
                   "Also write the calibration JSON here (for compare --noise-floor)");
  }

  int run() {
    if (!output.empty()) opt.output = output;
    return isolab::calibrate_report_command(opt, std::cout, std::cerr);
  }
};

// isolab history METRIC: a metric's trend across the indexed runs.
struct HistoryCommand {
  isolab::HistoryCommandOptions opt;
  std::string variant, spec;

  void declare(CLI::App& hist) {
    hist.add_option("metric", opt.metric, "Metric name, e.g. latency.latency_max_us")->required();
    hist.add_option("--variant", variant, "Only this variant");
    hist.add_option("--spec", spec, "Only runs of this spec name");
    opt.results_dir = "results";
    hist.add_option("--results-dir", opt.results_dir, "Results directory holding isolab.db")
        ->capture_default_str();
    hist.add_option("--format", opt.format, "text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  int run() {
    if (!variant.empty()) opt.variant = variant;
    if (!spec.empty()) opt.spec_name = spec;
    return isolab::history_command(opt, std::cout, std::cerr);
  }
};

// isolab doctor [SPEC]: what this host can do, and the host CPU plan of a spec's guest.
// isolab doctor --insn-plugin: only the instruction-counting plugin's preflight; exit 1 when
// QEMU refuses the plugin or it counts wrong (scripts/setup.sh runs this after the build).
struct DoctorCommand {
  bool json_output = false;
  bool insn_plugin_only = false;
  std::string spec_path, parallel;

  void declare(CLI::App& doc) {
    doc.add_flag("--json", json_output, "Machine-readable output");
    doc.add_option("spec", spec_path,
                   "Also print the host CPU plan for this spec's guest (which host CPUs each "
                   "guest's vCPUs and QEMU threads get, how many guests at once)");
    doc.add_option("--parallel", parallel, "With a spec: N or auto, as for `run`");
    doc.add_flag("--insn-plugin", insn_plugin_only,
                 "Only boot the QEMU instruction-counting plugin's test guest; exit 1 when QEMU "
                 "refuses the plugin or its counts are wrong");
  }

  int run() const {
    auto runner = isolab::make_real_runner();
    const isolab::InsnPluginFiles plugin = isolab::find_insn_plugin_files(self_dir());
    if (insn_plugin_only) return run_insn_plugin(*runner, plugin);
    json facts = isolab::doctor(*runner, find_vmstat_overhead(), plugin);
    std::string plan_text = spec_path.empty() ? "" : add_host_plan(facts);
    std::cout << (json_output ? isolab::json_text(facts, 2) + "\n"
                              : isolab::doctor_text(facts) + plan_text);
    return 0;
  }

  int run_insn_plugin(isolab::ProcessRunner& runner, const isolab::InsnPluginFiles& plugin) const {
    const fs::path work =
        fs::temp_directory_path() / ("isolab-insn-preflight-" + std::to_string(::getpid()));
    json facts;
    facts["insn_plugin"] = isolab::insn_plugin_facts(runner, plugin, work);
    std::error_code ec;
    fs::remove_all(work, ec);
    std::cout << (json_output ? isolab::json_text(facts, 2) + "\n"
                              : isolab::insn_plugin_text(facts["insn_plugin"]));
    return facts["insn_plugin"].value("ok", false) ? 0 : 1;
  }

  // Writes the spec's host CPU plan into facts["host_plan"]; returns it as text.
  std::string add_host_plan(json& facts) const {
    isolab::Spec spec = isolab::load_spec_file(spec_path);
    isolab::GuestDerivation g = isolab::derive_guest(spec);
    isolab::HostTopology host = isolab::read_host_topology();
    isolab::GuestCpuNeeds needs = isolab::guest_cpu_needs(spec, g, parse_parallel(parallel));
    isolab::HostPlan plan = isolab::plan_host(host, needs);
    facts["host_plan"] = isolab::to_json(plan);
    facts["host_plan"]["topology"] = isolab::to_json(host);
    return isolab::host_plan_text(host, needs, plan);
  }
};

// isolab cmdline LINE | -f FILE: the kernel command line analysed.
struct CmdlineCommand {
  std::string text, file;
  unsigned vcpus = 0;
  bool json_output = false;

  void declare(CLI::App& cl) {
    cl.add_option("line", text, "The command line (or dmesg text containing `Command line:`)");
    cl.add_option("-f,--file", file, "Read the command line or dmesg from a file ('-' for stdin)");
    cl.add_option("--vcpus", vcpus, "Override the derived vCPU count");
    cl.add_flag("--json", json_output, "JSON output");
  }

  int run() const {
    std::string input = read_input(text, file);
    if (input.empty()) throw isolab::Error("cmdline: give a command line, or --file FILE");
    isolab::AnalyzeOptions ao;
    if (vcpus) ao.vcpus = vcpus;
    isolab::Analysis a = isolab::analyze(input, ao);
    std::cout << (json_output ? isolab::json_text(isolab::to_json(a), 2) + "\n"
                              : isolab::to_text(a));
    return 0;
  }
};

// isolab import --tool T --label L FILE...: captured outputs as a run directory.
struct ImportCommand {
  isolab::ImportOptions opt;
  std::string output, results_dir = "results";
  std::vector<std::string> files, host;
  double window = 0;

  void declare(CLI::App& imp) {
    std::string tool_names;
    for (const auto& [name, parser] : isolab::import_tools())
      tool_names += (tool_names.empty() ? "" : "|") + name;
    imp.add_option("--tool", opt.tool, tool_names)->required();
    imp.add_option("files", files, "Captured outputs: one boot or measurement each")->required();
    imp.add_option("--label", opt.label, "Variant (and spec) name of the imported run")->required();
    imp.add_option("-o,--output", output, "Run directory to create (default RESULTS_DIR/<id>)");
    imp.add_option("--results-dir", results_dir, "Where the run directory is created")
        ->capture_default_str();
    imp.add_option("--workload", opt.workload,
                   "Metric prefix (default: the tool's name); use the workload name of the guest "
                   "spec to compare with, e.g. latency");
    imp.add_option("--window-s", window,
                   "interrupts: seconds between the two snapshots; trace: the measured window "
                   "(default: the trace's time span)")
        ->check(CLI::PositiveNumber);
    imp.add_option("--cpus", opt.cpus, "trace/interrupts: CPUs to report (default: all seen)");
    imp.add_option("--cmdline", opt.cmdline, "The machine's /proc/cmdline");
    imp.add_option("--kernel-release", opt.kernel_release, "The machine's uname -r");
    imp.add_option("--host", host,
                   "Host fact KEY=VALUE (cpu_model, host_kernel, nproc, ...); repeatable");
    imp.add_flag("--ns", opt.values_in_ns, "cyclictest text was printed with -N (nanoseconds)");
    imp.add_option("--exit-status", opt.exit_status,
                   "stress-ng: its exit status for every FILE (0 ok, 2 a stressor failed, 3 no "
                   "resources, 7 metrics untrustworthy, ...)")
        ->check(CLI::Range(0, 255));
  }

  int run() {
    for (const auto& f : files) opt.files.push_back(f);
    if (window > 0) opt.window_s = window;
    add_host_facts();
    fs::path dir = isolab::import_run(opt, output, results_dir, ISOLAB_SOURCE_DIR);
    with_history(dir.parent_path(), [&](isolab::HistoryDb& db) {
      isolab::index_run(db, isolab::load_result(dir), dir);
    });
    std::cout << dir.string() << std::endl;
    return 0;
  }

  // --host KEY=VALUE into opt.host; throws isolab::Error naming a malformed one.
  void add_host_facts() {
    for (const auto& kv : host) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        throw isolab::Error("--host " + kv + ": expected KEY=VALUE");
      opt.host[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
};

// isolab cache list | prune: the kernel cache.
struct CacheCommand {
  std::string cache_dir, max_size;
  int keep_last = -1;
  CLI::App* list = nullptr;

  void declare(CLI::App& cache) {
    cache.require_subcommand(1);
    list = cache.add_subcommand(
        "list", "Kernels, build slots and sources: size and last use, newest first.");
    list->add_option("--cache-dir", cache_dir,
                     "Cache directory (default $ISOLAB_CACHE_DIR or ~/.cache/isolab)");
    auto* prune = cache.add_subcommand(
        "prune",
        "Remove the least recently used entries; entries a run or build holds are skipped.");
    prune->add_option("--cache-dir", cache_dir,
                      "Cache directory (default $ISOLAB_CACHE_DIR or ~/.cache/isolab)");
    prune
        ->add_option("--keep-last", keep_last,
                     "Keep the N most recently used kernels, build slots and sources")
        ->check(CLI::Range(0, 1000000));
    prune->add_option("--max-size", max_size,
                      "Then remove the oldest entries until the cache is at most SIZE (e.g. "
                      "20G, 500M)");
  }

  int run() const {
    fs::path dir = cache_dir.empty() ? isolab::default_cache_dir() : fs::path(cache_dir);
    if (*list) {
      std::cout << isolab::cache_list_text(isolab::scan_cache(dir));
      return 0;
    }
    return prune(dir);
  }

  // isolab cache prune: what it removed and what it kept because a run or build holds it.
  int prune(const fs::path& dir) const {
    isolab::PrunePolicy policy;
    if (keep_last >= 0) policy.keep_last = keep_last;
    if (!max_size.empty()) policy.max_bytes = isolab::parse_size(max_size);
    isolab::PruneReport r = isolab::prune_cache(dir, policy);
    for (const auto& e : r.removed)
      std::cout << "removed " << e.kind << " " << e.id << " (" << isolab::format_size(e.bytes)
                << ")\n";
    for (const auto& e : r.busy)
      std::cout << "kept " << e.kind << " " << e.id << ": in use (" << e.lock.string()
                << " is held)\n";
    std::cout << "cache " << dir.string() << ": " << isolab::format_size(r.bytes_before) << " -> "
              << isolab::format_size(r.bytes_after) << "\n";
    return 0;
  }
};

// What a parsed subcommand runs: returns the exit status; may throw.
using Action = std::function<int()>;

// Declares Command's options on `sub`; the returned action runs it with the parsed values.
template <class Command>
Action declare(CLI::App& sub) {
  auto command = std::make_shared<Command>();
  command->declare(sub);
  return [command] { return command->run(); };
}

// One row of the subcommand table: name and description as `isolab --help` lists them, and
// the function that declares the subcommand's options.
struct Subcommand {
  const char* name;
  const char* description;
  Action (*declare)(CLI::App& sub);
};

// Every subcommand, in `isolab --help` order.
std::span<const Subcommand> subcommands() {
  static constexpr Subcommand table[] = {
      {"run", "Build, boot and measure every variant of a spec; prints the run directory last.",
       declare<RunCommand>},
      {"compare",
       "Compare the two variants of one run (RUN_DIR) or variant A of RUN_A with variant B of "
       "RUN_B.\n"
       "Exit status: 0 no primary metric regressed and no failure counted against B, 1 otherwise, "
       "2 error or invalid comparison.",
       declare<CompareCommand>},
      {"report",
       "One self-contained HTML page of a comparison (plots of every boot, latency histograms, "
       "interruptions per isolated CPU, gate, kernels, host): RUN_DIR, or RUN_A RUN_B.",
       declare<ReportCommand>},
      {"calibrate",
       "A/A calibration of one or more runs of one kernel: per metric the trend and split tests "
       "against boot order (drifting metrics named), spread, minimum detectable effect, noise "
       "floor; the runs' false-alarm rate.",
       declare<CalibrateCommand>},
      {"history", "Trend of one metric across the runs indexed in RESULTS_DIR/isolab.db.",
       declare<HistoryCommand>},
      {"doctor",
       "What this host can do: QEMU, KVM (really running guests?), libvirt, compiler, kernel "
       "source.",
       declare<DoctorCommand>},
      {"cmdline",
       "Understand a kernel command line as the kernel does and derive the guest for it.",
       declare<CmdlineCommand>},
      {"import",
       "Make outputs captured on a real machine into a run directory (result.json as `run` "
       "writes), one cell per FILE, for compare/report/history; prints the run directory.",
       declare<ImportCommand>},
      {"cache", "The kernel cache: list its entries, or prune it (safe while runs use it).",
       declare<CacheCommand>},
  };
  return table;
}

// Runs the chosen subcommand; an error becomes exit status 2 with its message on stderr.
int run_reporting_errors(const Action& action) {
  try {
    return action();
  } catch (const isolab::Error& e) {
    std::cerr << "isolab: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "isolab: internal error: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  isolab::install_teardown_handlers();
  CLI::App app{
      "isolab: A/B testing of Linux kernels for CPU isolation and latency under QEMU.\n"
      "Exit status: 0 success, 1 (compare) a primary metric regressed or a failure counts against "
      "B, 2 bad input or failure."};
  app.require_subcommand(1);
  std::vector<std::pair<const CLI::App*, Action>> actions;
  for (const Subcommand& s : subcommands()) {
    CLI::App* sub = app.add_subcommand(s.name, s.description);
    actions.emplace_back(sub, s.declare(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  for (const auto& [sub, action] : actions)
    if (*sub) return run_reporting_errors(action);
  return 0;
}
