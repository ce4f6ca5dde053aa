#include "cli/import.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "base/error.h"
#include "cli/common.h"
#include "cli/source_dir.h"
#include "compare/request.h"
#include "history/history.h"
#include "pipeline/import.h"
#include "results/result_file.h"

namespace isolab {

namespace fs = std::filesystem;

namespace {

// isolab import --tool T --label L FILE...: captured outputs as a run directory.
struct ImportCommand {
  isolab::ImportOptions opt;
  std::string output, results_dir = "results";
  std::vector<std::string> files, host;
  double window = 0;

  void declare(CLI::App& imp) {
    std::string tool_names;
    for (const auto& [name, tool] : isolab::import_tools())
      tool_names += (tool_names.empty() ? "" : "|") + name;
    imp.add_option("--tool", opt.tool, tool_names + " (the formats each reads: below)")->required();
    imp.footer("--tool and the formats it reads:\n" + isolab::import_formats_text());
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
    for (const auto& f : files) opt.files.emplace_back(f);
    if (window > 0) opt.window_s = window;
    add_host_facts();
    fs::path dir = isolab::import_run(opt, output, results_dir, isolab::isolab_source_dir());
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
}  // namespace

Action declare_import(CLI::App& sub) { return declare_command<ImportCommand>(sub); }

}  // namespace isolab
