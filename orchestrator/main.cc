// isolab: build vanilla and patched kernels, boot them under QEMU with CPU-isolation command
// lines, measure latency and noise on the isolated CPUs, and compare A against B.
//
// Exit status (every subcommand): 0 success; 2 bad input or failure, with a message on stderr
// that says what and where. `isolab compare` also returns 1 when a declared primary metric
// regressed or B has a kernel failure, gate failure or build warning counted against it
// (compare/compare.h). `isolab budget` (and `isolab run` of a spec with budgets) returns 4 when
// a budget enforced on this run is over (budgets/judge.h; docs/verdicts.md "Budgets").
//
// Layout: one file per subcommand in cli/ (its options and what it does once parsed); the table
// subcommands() below lists them in `isolab --help` order, and main() registers them and runs
// the one chosen.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <span>
#include <utility>
#include <vector>

#include "base/error.h"
#include "cli/bisect.h"
#include "cli/budget.h"
#include "cli/cache.h"
#include "cli/calibrate.h"
#include "cli/cmdline.h"
#include "cli/compare.h"
#include "cli/doctor.h"
#include "cli/history.h"
#include "cli/import.h"
#include "cli/machine.h"
#include "cli/report.h"
#include "cli/run.h"
#include "sys/process.h"

namespace {

// One row of the subcommand table: name and description as `isolab --help` lists them, and
// the function that declares the subcommand's options.
struct Subcommand {
  const char* name;
  const char* description;
  isolab::Action (*declare)(CLI::App& sub);
};

// Every subcommand, in `isolab --help` order.
std::span<const Subcommand> subcommands() {
  static constexpr Subcommand table[] = {
      {"run", "Build, boot and measure every variant of a spec; prints the run directory last.",
       isolab::declare_run},
      {"compare",
       "Compare the two variants of one run (RUN_DIR) or variant A of RUN_A with variant B of "
       "RUN_B.\n"
       "Exit status: 0 no regression, 1 something counted against B, 3 nothing counted against "
       "B and no primary could reach alpha, 2 error or refused comparison (below).",
       isolab::declare_compare},
      {"budget",
       "Judge a recorded or imported run against budgets (its spec's, or --spec FILE's): each "
       "budget on each CPU of each cell passes or is over; timing budgets are enforced on KVM and "
       "real machines only.\n"
       "Exit status: 0 within budget, 4 over budget, 3 no enforced budget could be judged, 2 "
       "error.",
       isolab::declare_budget},
      {"report",
       "One self-contained HTML page of a comparison (plots of every boot, latency histograms, "
       "interruptions per isolated CPU, gate, kernels, host): RUN_DIR, or RUN_A RUN_B.",
       isolab::declare_report},
      {"bisect",
       "Find the first patch of B's series that moves a metric: runs of A against prefixes of "
       "the series, judged by compare; prints each step and the bisect directory last.\n"
       "Exit status: 0 a patch named, 1 none (the series does not move the metric, or a step "
       "stayed inconclusive), 2 error.",
       isolab::declare_bisect},
      {"calibrate",
       "A/A calibration of one or more runs of one kernel: per metric the trend and split tests "
       "against boot order (drifting metrics named), spread, minimum detectable effect, noise "
       "floor; the runs' false-alarm rate.",
       isolab::declare_calibrate},
      {"history", "Trend of one metric across the runs indexed in RESULTS_DIR/isolab.db.",
       isolab::declare_history},
      {"doctor",
       "What this host can do: QEMU, KVM (really running guests?), libvirt, compiler, kernel "
       "source.",
       isolab::declare_doctor},
      {"cmdline",
       "Understand a kernel command line as the kernel does and derive the guest for it.",
       isolab::declare_cmdline},
      {"machine",
       "Read what a customer hands over (sos report, must-gather, PerformanceProfile, TuneD "
       "variables) and print the machine: CPUs, topology, isolation, TuneD, sysctls, IRQs on "
       "isolated CPUs, each with its source, and what could not be read.",
       isolab::declare_machine},
      {"import",
       "Make outputs captured on a real machine into a run directory (result.json as `run` "
       "writes), one cell per FILE, for compare/report/history; prints the run directory.",
       isolab::declare_import},
      {"cache", "The kernel cache: list its entries, or prune it (safe while runs use it).",
       isolab::declare_cache},
  };
  return table;
}

// Runs the chosen subcommand; an error becomes exit status 2 with its message on stderr.
int run_reporting_errors(const isolab::Action& action) {
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
      "B, 4 (run, budget) over budget, 2 bad input or failure."};
  app.require_subcommand(1);
  std::vector<std::pair<const CLI::App*, isolab::Action>> actions;
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
