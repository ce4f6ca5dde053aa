// isolab: build vanilla and patched kernels, boot them under QEMU with CPU-isolation command
// lines, measure latency and noise on the isolated CPUs, and compare A against B.
//
// Exit status (every subcommand): 0 success; 2 bad input or failure, with a message on stderr
// that says what and where. `isolab compare` also returns 1 when at least one metric regressed.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "base/progress.h"
#include "cmdline/analyze.h"
#include "compare/commands.h"
#include "compare/history.h"
#include "kernel/cache.h"
#include "kernel/kernel.h"
#include "pipeline/doctor.h"
#include "pipeline/hostplan.h"
#include "pipeline/import.h"
#include "pipeline/plan.h"
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

}  // namespace

int main(int argc, char** argv) {
  isolab::install_teardown_handlers();
  CLI::App app{
      "isolab: A/B testing of Linux kernels for CPU isolation and latency under QEMU.\n"
      "Exit status: 0 success, 1 (compare) at least one regression, 2 bad input or failure."};
  app.require_subcommand(1);

  // run
  auto* run = app.add_subcommand(
      "run", "Build, boot and measure every variant of a spec; prints the run directory last.");
  std::string spec_path, results_dir = "results", accel = "auto", cache_dir, resume,
                         backend = "qemu";
  bool no_trace = false, dry_run = false, aa = false;
  int jobs = 0, repetitions = 0, warmups = -1;
  run->add_option("spec", spec_path, "Spec file (JSON); see README.md 'Spec'")->required();
  run->add_option("--results-dir", results_dir, "Where run directories are created")
      ->capture_default_str();
  run->add_option("--accel", accel, "auto (KVM if it really runs guests, else TCG), kvm or tcg")
      ->check(CLI::IsMember({"auto", "kvm", "tcg"}))
      ->capture_default_str();
  run->add_option("--cache-dir", cache_dir,
                  "Kernel and image cache (default $ISOLAB_CACHE_DIR or ~/.cache/isolab)");
  run->add_option("--resume", resume,
                  "Continue an interrupted run directory: finished cells are kept");
  run->add_option("--backend", backend, "qemu or libvirt")
      ->check(CLI::IsMember({"qemu", "libvirt"}))
      ->capture_default_str();
  std::string libvirt_uri;
  run->add_option("--libvirt-uri", libvirt_uri,
                  "libvirt connection for --backend libvirt (default $ISOLAB_LIBVIRT_URI, else "
                  "isolab's private driver: qemu:///embed?root=CACHE/libvirt)");
  std::vector<std::string> hosts;
  run->add_option("--host", hosts,
                  "libvirt host to place cells on (repeatable; replaces the spec's hosts): "
                  "qemu+ssh://HOST/system, qemu+tcp://..., qemu:///system, "
                  "qemu+unix:///session?socket=PATH. Whole A/B blocks go to one host.")
      ->allow_extra_args(false);
  run->add_option("-j,--jobs", jobs, "make -j for kernel builds (default: host CPUs)");
  std::string parallel;
  run->add_option("--parallel", parallel,
                  "Guests booted at once, each on its own host CPUs: N or auto (as many as the "
                  "host CPU plan fits); default: the spec's \"parallel\" (1)");
  run->add_flag("--no-trace", no_trace, "Do not trace the isolated CPUs during workloads");
  run->add_flag("--dry-run", dry_run,
                "Print the plan (guest, variants, cells, guest steps) and exit");
  run->add_option("--repetitions", repetitions,
                  "Override the spec's repetitions (boots per variant)")
      ->check(CLI::Range(1, 1000));
  run->add_option("--warmup", warmups, "Override the spec's warm-up repetitions")
      ->check(CLI::Range(0, 100));
  bool quiet = false;
  std::string progress_format = "text";
  run->add_flag("-q,--quiet", quiet, "No progress on stderr (errors and warnings only)");
  run->add_option("--progress", progress_format,
                  "text (a live line on a terminal, else a line at most every 10 s) or json "
                  "(one object per line on stderr, for CI)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  run->add_flag("--aa", aa,
                "A/A calibration run: the first variant's kernel as both A and B (then `isolab "
                "calibrate RUN_DIR`)");

  // compare
  auto* cmp = app.add_subcommand(
      "compare",
      "Compare the two variants of one run (RUN_DIR) or variant A of RUN_A with variant B of "
      "RUN_B.\n"
      "Exit status: 0 no regression, 1 at least one regression, 2 error or invalid comparison.");
  isolab::CompareCommandOptions copt;
  cmp->add_option("runs", copt.run_dirs, "RUN_DIR, or RUN_A RUN_B")->required()->expected(1, 2);
  cmp->add_option("--format", copt.format,
                  "text, json, markdown, junit or html (the page of `isolab report`)")
      ->check(CLI::IsMember({"text", "json", "markdown", "junit", "html"}))
      ->capture_default_str();
  cmp->add_option("--variant-a", copt.variant_a,
                  "Variant of the first run to use as A (default: its first)");
  cmp->add_option("--variant-b", copt.variant_b,
                  "Variant to use as B (default: the second of the run)");
  std::string noise_floor;
  cmp->add_option("--noise-floor", noise_floor, "Calibration JSON from `isolab calibrate`");
  cmp->add_flag("--force", copt.force,
                "Compare runs with a different accelerator, host, cmdline or workloads (shown in "
                "the report)");
  cmp->add_flag("--pool-hosts", copt.pool_hosts,
                "Combine cells of libvirt hosts whose fingerprints (CPU model, CPUs, libvirt and "
                "QEMU versions) differ (refused by default)");

  // report
  auto* rep = app.add_subcommand(
      "report",
      "One self-contained HTML page of a comparison (plots of every boot, latency histograms, "
      "interruptions per isolated CPU, gate, kernels, host): RUN_DIR, or RUN_A RUN_B.");
  isolab::ReportCommandOptions ropt;
  rep->add_option("runs", ropt.compare.run_dirs, "RUN_DIR, or RUN_A RUN_B")
      ->required()
      ->expected(1, 2);
  std::string rep_output, rep_noise_floor;
  rep->add_option("-o,--output", rep_output, "Write the page here (default: stdout)");
  rep->add_option("--variant-a", ropt.compare.variant_a, "As for compare");
  rep->add_option("--variant-b", ropt.compare.variant_b, "As for compare");
  rep->add_option("--noise-floor", rep_noise_floor, "As for compare");
  rep->add_flag("--force", ropt.compare.force, "As for compare");

  // calibrate
  auto* cal = app.add_subcommand("calibrate",
                                 "A/A calibration: noise floor and false-positive rate per metric "
                                 "from a run of one kernel as A and B.");
  isolab::CalibrateCommandOptions calopt;
  cal->add_option("run", calopt.run_dir, "A run directory whose two variants are the same kernel")
      ->required();
  cal->add_option("--format", calopt.format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  std::string cal_output;
  cal->add_option("--output", cal_output,
                  "Also write the calibration JSON here (for compare --noise-floor)");

  // history
  auto* hist = app.add_subcommand(
      "history", "Trend of one metric across the runs indexed in RESULTS_DIR/isolab.db.");
  isolab::HistoryCommandOptions hopt;
  hist->add_option("metric", hopt.metric, "Metric name, e.g. latency.latency_max_us")->required();
  std::string hist_variant, hist_spec;
  hist->add_option("--variant", hist_variant, "Only this variant");
  hist->add_option("--spec", hist_spec, "Only runs of this spec name");
  hopt.results_dir = "results";
  hist->add_option("--results-dir", hopt.results_dir, "Results directory holding isolab.db")
      ->capture_default_str();
  hist->add_option("--format", hopt.format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  // doctor
  auto* doc = app.add_subcommand("doctor",
                                 "What this host can do: QEMU, KVM (really running guests?), "
                                 "libvirt, compiler, kernel source.");
  bool doctor_json = false;
  doc->add_flag("--json", doctor_json, "Machine-readable output");
  std::string doctor_spec, doctor_parallel;
  doc->add_option("spec", doctor_spec,
                  "Also print the host CPU plan for this spec's guest (which host CPUs each "
                  "guest's vCPUs and QEMU threads get, how many guests at once)");
  doc->add_option("--parallel", doctor_parallel, "With a spec: N or auto, as for `run`");

  // cmdline
  auto* cl = app.add_subcommand(
      "cmdline",
      "Understand a kernel command line as the kernel does and derive the guest for it.");
  std::string cl_text, cl_file;
  unsigned cl_vcpus = 0;
  bool cl_json = false;
  cl->add_option("line", cl_text, "The command line (or dmesg text containing `Command line:`)");
  cl->add_option("-f,--file", cl_file,
                 "Read the command line or dmesg from a file ('-' for stdin)");
  cl->add_option("--vcpus", cl_vcpus, "Override the derived vCPU count");
  cl->add_flag("--json", cl_json, "JSON output");

  // import
  auto* imp = app.add_subcommand(
      "import",
      "Make outputs captured on a real machine into a run directory (result.json as `run` "
      "writes), one cell per FILE, for compare/report/history; prints the run directory.");
  isolab::ImportOptions iopt;
  std::string import_out, import_results = "results";
  std::vector<std::string> import_files, import_host;
  double import_window = 0;
  std::string import_tool_names;
  for (const auto& [name, parser] : isolab::import_tools())
    import_tool_names += (import_tool_names.empty() ? "" : "|") + name;
  imp->add_option("--tool", iopt.tool, import_tool_names)->required();
  imp->add_option("files", import_files, "Captured outputs: one boot or measurement each")
      ->required();
  imp->add_option("--label", iopt.label, "Variant (and spec) name of the imported run")->required();
  imp->add_option("-o,--output", import_out, "Run directory to create (default RESULTS_DIR/<id>)");
  imp->add_option("--results-dir", import_results, "Where the run directory is created")
      ->capture_default_str();
  imp->add_option("--workload", iopt.workload,
                  "Metric prefix (default: the tool's name); use the workload name of the guest "
                  "spec to compare with, e.g. latency");
  imp->add_option("--window-s", import_window,
                  "interrupts: seconds between the two snapshots; trace: the measured window "
                  "(default: the trace's time span)")
      ->check(CLI::PositiveNumber);
  imp->add_option("--cpus", iopt.cpus, "trace/interrupts: CPUs to report (default: all seen)");
  imp->add_option("--cmdline", iopt.cmdline, "The machine's /proc/cmdline");
  imp->add_option("--kernel-release", iopt.kernel_release, "The machine's uname -r");
  imp->add_option("--host", import_host,
                  "Host fact KEY=VALUE (cpu_model, host_kernel, nproc, ...); repeatable");
  imp->add_flag("--ns", iopt.values_in_ns, "cyclictest text was printed with -N (nanoseconds)");
  imp->add_option("--exit-status", iopt.exit_status,
                  "stress-ng: its exit status for every FILE (0 ok, 2 a stressor failed, 3 no "
                  "resources, 7 metrics untrustworthy, ...)")
      ->check(CLI::Range(0, 255));

  // cache
  auto* cache = app.add_subcommand(
      "cache", "The kernel cache: list its entries, or prune it (safe while runs use it).");
  cache->require_subcommand(1);
  std::string cache_cache_dir, cache_max_size;
  int cache_keep_last = -1;
  auto* cache_list = cache->add_subcommand(
      "list", "Kernels, build slots and sources: size and last use, newest first.");
  cache_list->add_option("--cache-dir", cache_cache_dir,
                         "Cache directory (default $ISOLAB_CACHE_DIR or ~/.cache/isolab)");
  auto* cache_prune = cache->add_subcommand(
      "prune", "Remove the least recently used entries; entries a run or build holds are skipped.");
  cache_prune->add_option("--cache-dir", cache_cache_dir,
                          "Cache directory (default $ISOLAB_CACHE_DIR or ~/.cache/isolab)");
  cache_prune
      ->add_option("--keep-last", cache_keep_last,
                   "Keep the N most recently used kernels, build slots and sources")
      ->check(CLI::Range(0, 1000000));
  cache_prune->add_option("--max-size", cache_max_size,
                          "Then remove the oldest entries until the cache is at most SIZE (e.g. "
                          "20G, 500M)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  try {
    if (*run) {
      isolab::Spec spec = isolab::load_spec_file(spec_path);
      // Overrides are written into the spec document too, so that result.json, --resume and
      // the comparability key see the spec that really ran.
      if (repetitions > 0) {
        spec.repetitions = repetitions;
        spec.raw["repetitions"] = repetitions;
      }
      if (warmups >= 0) {
        spec.warmup_repetitions = warmups;
        spec.raw["warmup_repetitions"] = warmups;
      }
      if (aa) {
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
      if (dry_run) {
        isolab::GuestDerivation g = isolab::derive_guest(spec);
        isolab::check_guest_cmdline_length(spec, g, !no_trace);
        json plan = isolab::describe_plan(spec, g);
        // The local host plan only for guests that run here (not on --host / "hosts").
        if (hosts.empty() && spec.hosts.empty())
          plan["host_plan"] = isolab::to_json(
              isolab::plan_host(isolab::read_host_topology(),
                                isolab::guest_cpu_needs(spec, g, parse_parallel(parallel))));
        std::cout << isolab::json_text(plan, 2) << "\n";
        return 0;
      }
      // From here a signal stops the children and the run records itself as interrupted.
      isolab::install_interrupt_handlers();
      auto runner = isolab::make_real_runner();
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
      isolab::Progress meter(isolab::progress_mode(progress_format, quiet, STDERR_FILENO),
                             std::cerr, isolab::monotonic_seconds);
      o.progress = [&meter](const std::string& s) { meter.message(s); };
      o.meter = &meter;
      isolab::RunSummary sum = isolab::run_spec(spec, o, *runner);
      if (sum.status == "interrupted") {
        std::cerr << "isolab: interrupted by signal " << sum.interrupt_signal
                  << "; finish with: isolab run " << spec_path << " --resume "
                  << sum.run_dir.string() << "\n";
        std::cout << sum.run_dir.string() << std::endl;
        return 128 + sum.interrupt_signal;  // what a shell reports for a death by that signal
      }
      // Nightly mode: find the baseline before this run joins the history.
      std::optional<fs::path> baseline;
      if (!spec.baseline_run.empty()) baseline = spec.baseline_run;
      try {
        auto db = isolab::HistoryDb::open_in(results_dir);
        if (spec.baseline_last_good)
          if (auto ref = isolab::last_good_run(db, spec.name, spec.baseline_variant))
            baseline = fs::path(ref->path);
        isolab::index_run(db, isolab::load_result(sum.run_dir), sum.run_dir);
      } catch (const std::exception& e) {
        std::cerr << "isolab: warning: history index: " << e.what() << "\n";
      }
      meter.message(sum.status + ": " + std::to_string(sum.cells_ok) + " ok, " +
                    std::to_string(sum.cells_invalid) + " invalid, " +
                    std::to_string(sum.cells_failed) + " failed");
      // A variant that could not be built (patch, config or compiler error) fails the run,
      // after every other variant has been measured and recorded.
      int status = sum.status == "failed" || !sum.build_failures.empty() ? 2 : 0;
      for (const auto& b : sum.build_failures) std::cerr << "isolab: error: variant " << b << "\n";
      if (spec.baseline_last_good || !spec.baseline_run.empty()) {
        if (!baseline) {
          std::cerr << "isolab: baseline: no earlier good run of " << spec.name << " in "
                    << results_dir << "; this run becomes the baseline if it is good\n";
        } else if (status == 0) {
          isolab::CompareCommandOptions c;
          c.run_dirs = {*baseline, sum.run_dir};
          c.variant_a = c.variant_b = spec.baseline_variant;
          c.history_db = fs::path(results_dir) / "isolab.db";
          std::cerr << "isolab: baseline " << baseline->string() << "\n";
          status = isolab::compare_command(c, std::cerr, std::cerr);
        }
      }
      std::cout << sum.run_dir.string() << std::endl;
      return status;
    }
    if (*cmp) {
      if (!noise_floor.empty()) copt.noise_floor_file = noise_floor;
      if (copt.format == "html") {
        isolab::ReportCommandOptions r;
        r.compare = copt;
        r.compare_status = true;
        return isolab::report_command(r, std::cout, std::cerr);
      }
      return isolab::compare_command(copt, std::cout, std::cerr);
    }
    if (*rep) {
      if (!rep_noise_floor.empty()) ropt.compare.noise_floor_file = rep_noise_floor;
      if (!rep_output.empty()) ropt.output = rep_output;
      return isolab::report_command(ropt, std::cout, std::cerr);
    }
    if (*cal) {
      if (!cal_output.empty()) calopt.output = cal_output;
      return isolab::calibrate_report_command(calopt, std::cout, std::cerr);
    }
    if (*hist) {
      if (!hist_variant.empty()) hopt.variant = hist_variant;
      if (!hist_spec.empty()) hopt.spec_name = hist_spec;
      return isolab::history_command(hopt, std::cout, std::cerr);
    }
    if (*doc) {
      auto runner = isolab::make_real_runner();
      json facts = isolab::doctor(*runner, find_vmstat_overhead());
      std::string plan_text;
      if (!doctor_spec.empty()) {
        isolab::Spec spec = isolab::load_spec_file(doctor_spec);
        isolab::GuestDerivation g = isolab::derive_guest(spec);
        isolab::HostTopology host = isolab::read_host_topology();
        isolab::GuestCpuNeeds needs =
            isolab::guest_cpu_needs(spec, g, parse_parallel(doctor_parallel));
        isolab::HostPlan plan = isolab::plan_host(host, needs);
        facts["host_plan"] = isolab::to_json(plan);
        facts["host_plan"]["topology"] = isolab::to_json(host);
        plan_text = isolab::host_plan_text(host, needs, plan);
      }
      std::cout << (doctor_json ? isolab::json_text(facts, 2) + "\n"
                                : isolab::doctor_text(facts) + plan_text);
      return 0;
    }
    if (*imp) {
      for (const auto& f : import_files) iopt.files.push_back(f);
      if (import_window > 0) iopt.window_s = import_window;
      for (const auto& kv : import_host) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0)
          throw isolab::Error("--host " + kv + ": expected KEY=VALUE");
        iopt.host[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      fs::path dir = isolab::import_run(iopt, import_out, import_results, ISOLAB_SOURCE_DIR);
      try {
        auto db = isolab::HistoryDb::open_in(dir.parent_path());
        isolab::index_run(db, isolab::load_result(dir), dir);
      } catch (const std::exception& e) {
        std::cerr << "isolab: warning: history index: " << e.what() << "\n";
      }
      std::cout << dir.string() << std::endl;
      return 0;
    }
    if (*cache) {
      fs::path dir =
          cache_cache_dir.empty() ? isolab::default_cache_dir() : fs::path(cache_cache_dir);
      if (*cache_list) {
        std::cout << isolab::cache_list_text(isolab::scan_cache(dir));
        return 0;
      }
      isolab::PrunePolicy policy;
      if (cache_keep_last >= 0) policy.keep_last = cache_keep_last;
      if (!cache_max_size.empty()) policy.max_bytes = isolab::parse_size(cache_max_size);
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
    if (*cl) {
      std::string text = read_input(cl_text, cl_file);
      if (text.empty()) throw isolab::Error("cmdline: give a command line, or --file FILE");
      isolab::AnalyzeOptions ao;
      if (cl_vcpus) ao.vcpus = cl_vcpus;
      isolab::Analysis a = isolab::analyze(text, ao);
      std::cout << (cl_json ? isolab::json_text(isolab::to_json(a), 2) + "\n" : isolab::to_text(a));
      return 0;
    }
  } catch (const isolab::Error& e) {
    std::cerr << "isolab: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "isolab: internal error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
