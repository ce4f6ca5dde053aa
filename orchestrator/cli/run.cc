#include "cli/run.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "base/progress.h"
#include "budgets/record.h"
#include "cli/common.h"
#include "cli/compare.h"
#include "cli/source_dir.h"
#include "compare/request.h"
#include "history/history.h"
#include "kernel/kernel.h"
#include "pipeline/apply_check.h"
#include "pipeline/baseline.h"
#include "pipeline/host_cpu_plan.h"
#include "pipeline/mailed_series.h"
#include "pipeline/plan_budget.h"
#include "pipeline/plan_facts.h"
#include "pipeline/plan_json.h"
#include "pipeline/plan_text.h"
#include "pipeline/run.h"
#include "pipeline/run_plan.h"
#include "pipeline/timings.h"
#include "results/result_file.h"
#include "results/run_facts.h"
#include "spec/spec.h"
#include "sys/process.h"

namespace isolab {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

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
    run.add_option("-j,--jobs", jobs, "make -j for kernel builds (default: host CPUs)")
        ->check(CLI::Range(1, 4096));
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
      // A mailed series is split and checked before anything is built.
      isolab::expand_mailed_series(
          spec, cache_dir.empty() ? isolab::default_cache_dir() : fs::path(cache_dir),
          *isolab::make_real_runner());
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
    warn_budget(spec);
    const bool nightly = spec.baseline_last_good || !spec.baseline_run.empty();
    const NightlyBaseline baseline = nightly ? boot_baseline_beside(spec, o) : NightlyBaseline{};
    isolab::Progress meter(isolab::progress_mode(progress_format, quiet, STDERR_FILENO), std::cerr,
                           isolab::monotonic_seconds);
    o.progress = [&meter](const std::string& s) { meter.message(s); };
    o.meter = &meter;
    // A spec error the guest or this host shows is said before the series apply check, which
    // unpacks the kernel source when the cache does not hold it yet.
    isolab::check_spec_before_builds(spec, o);
    const auto t_check = std::chrono::steady_clock::now();
    check_series_before_builds(spec, o, *runner);
    o.stages_before.emplace_back(
        "series apply check",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_check).count());
    isolab::RunSummary sum = isolab::run_spec(spec, o, *runner);
    if (sum.status == "interrupted") return report_interrupted(sum);
    with_history(results_dir, [&](isolab::HistoryDb& db) {
      isolab::index_run(db, isolab::load_result(sum.run_dir), sum.run_dir);
    });
    meter.message(sum.status + ": " + std::to_string(sum.cells_ok) + " ok, " +
                  std::to_string(sum.cells_invalid) + " invalid, " +
                  std::to_string(sum.cells_failed) + " failed");
    // JSON progress keeps stderr one object per line: the table is in result.json there.
    if (!quiet && progress_format != "json") print_timings(sum.run_dir);
    int status = build_status(sum);
    if (nightly) status = compare_with_baseline(spec, baseline, sum, status);
    status = judge_budgets_of(spec, sum, status);
    std::cout << sum.run_dir.string() << std::endl;
    return status;
  }

  // The spec's budgets judged on the run (result.json "budgets"), the verdict on stderr. The
  // run's status becomes 4 when an enforced budget is over and it was 0 or 3 (a build failure,
  // an error or a regression keeps its own status: docs/verdicts.md "Budgets").
  static int judge_budgets_of(const isolab::Spec& spec, const isolab::RunSummary& sum, int status) {
    if (spec.budgets.empty() || sum.cells_ok == 0) return status;
    const isolab::BudgetVerdict v = isolab::record_budgets(sum.run_dir, spec.budgets);
    std::cerr << isolab::budget_verdict_text(v);
    return v.over && (status == 0 || status == 3) ? 4 : status;
  }

  // Before the first kernel build: how each mailed series was read (every message left out
  // listed), then every patched variant's series applied to its base in a temporary index.
  void check_series_before_builds(const isolab::Spec& spec, const isolab::RunOptions& o,
                                  isolab::ProcessRunner& runner) const {
    const std::string readings = isolab::mailed_series_text(spec);
    if (!readings.empty()) std::cerr << readings;
    isolab::ApplyCheckOptions c;
    c.cache_dir = cache_dir.empty() ? isolab::default_cache_dir() : fs::path(cache_dir);
    c.progress = o.progress;
    c.meter = o.meter;
    for (const auto& [name, kernel] : o.baseline_kernels) c.skip.insert(name);
    isolab::check_patched_variants(spec, runner, c);
  }

  // Where the run's time went (result.json "timings"), on stderr.
  static void print_timings(const fs::path& run_dir) {
    try {
      if (const auto t = isolab::results::recorded_timings(isolab::load_result(run_dir)))
        std::cerr << isolab::timings_table(*t);
    } catch (const isolab::Error& e) {
      std::cerr << "isolab: no timings: " << e.what() << "\n";
    }
  }

  // What the exit status cannot detect at these boots, said loudly before hours of boots
  // (docs/verdicts.md): the run goes on, and compare will say it again (exit status 3).
  static void warn_budget(const isolab::Spec& spec) {
    for (const auto& w : isolab::plan_budget(spec).warnings)
      std::cerr << "isolab: WARNING: " << w << "\n";
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
  // Refuses what the run refuses before any build (run_spec's own checks, the same functions).
  int print_plan(const isolab::Spec& spec) const {
    isolab::check_spec_before_builds(spec, run_options());
    isolab::GuestDerivation g = isolab::derive_guest(spec);
    for (const auto& w : g.analysis.value("warnings", json::array()))
      std::cerr << "isolab: guest command line: " << w.get<std::string>() << "\n";
    if (!json_plan) {
      auto runner = isolab::make_real_runner();
      std::cout << isolab::plan_text(spec, g,
                                     isolab::gather_plan_facts(
                                         spec, g,
                                         {cache_dir, accel, !hosts.empty() || !spec.hosts.empty(),
                                          !no_trace, parse_parallel(parallel)},
                                         *runner))
                << isolab::mailed_series_text(spec);
      return 0;
    }
    json plan = isolab::describe_plan(spec, g);
    for (std::size_t i = 0; i < spec.variants.size(); ++i)
      plan["variants"][i]["mailed_series"] = spec.variants[i].mailed_series;
    plan["budget"] = isolab::to_json(isolab::plan_budget(spec));
    for (const auto& b : spec.budgets)
      plan["budgets"].push_back(
          {{"budget", isolab::budget_text(b)},
           {"kind", b.kind == isolab::BudgetKind::timing ? "timing" : "count"}});
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
    isolab::RunOptions o = guest_tool_run_options();
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
      std::cerr
          << "isolab: baseline: no earlier good run of " << spec.name << " in " << results_dir
          << "; this run, if complete and not regressed, is the anchor: the baseline of later runs "
             "until one of them is found equivalent to its own (docs/verdicts.md)\n";
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
}  // namespace

RunOptions guest_tool_run_options() {
  RunOptions o;
  o.source_dir = isolab_source_dir();
  o.vmstat_overhead = beside_isolab("ISOLAB_VMSTAT_OVERHEAD", "vmstat-overhead");
  o.page_fault_bench = beside_isolab("ISOLAB_PAGE_FAULT_BENCH", "page-fault-bench");
  o.madvise_pressure = beside_isolab("ISOLAB_MADVISE_PRESSURE", "madvise-pressure");
  o.isolab_mark = beside_isolab("ISOLAB_MARK", "isolab-mark");
  o.wake_marker = beside_isolab("ISOLAB_WAKE_MARKER", "libisolab-wake-marker.so");
  o.insn_plugin = find_insn_plugin_files(self_dir());
  return o;
}

Action declare_run(CLI::App& sub) { return declare_command<RunCommand>(sub); }

}  // namespace isolab
