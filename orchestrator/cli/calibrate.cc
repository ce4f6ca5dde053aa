#include "cli/calibrate.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "calibrate/calibrate.h"
#include "calibrate/calibration_json.h"
#include "compare/request.h"
#include "report/calibration_text.h"
#include "results/result_file.h"

namespace isolab {

int calibrate_report_command(const CalibrateCommandOptions& o, std::ostream& out,
                             std::ostream& err) {
  try {
    if (o.format != "text" && o.format != "json") {
      throw Error("--format: calibrate writes text or json, not '" + o.format + "'");
    }
    if (o.run_dirs.empty()) throw Error("calibrate: give one or more A/A run directories");
    std::vector<nlohmann::json> runs;
    for (const auto& d : o.run_dirs) runs.push_back(load_result(d));
    CalibrationOptions co;
    co.splits = o.splits;
    co.seed = o.seed;
    co.variants = o.variants;
    const CompareSettings settings = run_compare_settings(runs.front(), o.run_dirs.front());
    const Calibration cal = calibrate_runs(runs, settings, co);
    const std::string text = json_text(calibration_to_json(cal), 2) + "\n";
    if (o.output) write_file_atomic(*o.output, text);
    out << (o.format == "json" ? text : render_calibration_text(cal));
    return 0;
  } catch (const std::exception& e) {
    err << "isolab calibrate: error: " << e.what() << "\n";
    return 2;
  }
}

namespace {

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

}  // namespace

Action declare_calibrate(CLI::App& sub) { return declare_command<CalibrateCommand>(sub); }

}  // namespace isolab
