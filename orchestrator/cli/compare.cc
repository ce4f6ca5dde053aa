#include "cli/compare.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "base/error.h"
#include "calibrate/relabel_aa.h"
#include "cli/report.h"
#include "compare/host_load.h"
#include "history/history.h"
#include "report/aa_relabel.h"
#include "report/host_load.h"
#include "report/json.h"
#include "report/render.h"
#include "results/result_file.h"

namespace isolab {

namespace {

int relabel_aa_command(const CompareCommandOptions& o, std::ostream& out) {
  if (o.run_dirs.size() != 1)
    throw Error("compare --relabel-aa: give one run directory (an A/A run)");
  if (o.format != "text" && o.format != "json")
    throw Error("--format: --relabel-aa writes text or json, not '" + o.format + "'");
  const nlohmann::json run = load_result(o.run_dirs[0]);
  AaRelabelOptions ro;
  ro.variant_a = o.variant_a;
  ro.variant_b = o.variant_b;
  const AaRelabelResult r = relabel_aa(run, comparison_settings(o, run, run, std::cerr), ro);
  out << (o.format == "json" ? aa_relabel_to_json(r).dump(2) + "\n" : render_aa_relabel_text(r));
  return 0;
}

// compare's host-load flag (compare/host_load.h) as a line of its own; "" when neither side
// recorded cells[].host_load.
std::string host_load_line(const LoadedComparison& l) {
  const auto a = variant_host_loads(l.result_a, l.variant_a);
  const auto b = variant_host_loads(l.result_b, l.variant_b);
  if (a.empty() && b.empty()) return "";
  return host_load_flag_line(compare_host_loads(a, b, l.comparison.settings.alpha)) + "\n";
}

}  // namespace

int compare_command(const CompareCommandOptions& o, std::ostream& out, std::ostream& err) {
  try {
    if (o.relabel_aa) return relabel_aa_command(o, out);
    const ReportFormat format = parse_report_format(o.format);
    LoadedComparison l;
    try {
      l = load_comparison(o, err);
    } catch (const ComparisonRefused& e) {
      err << "isolab compare: " << e.what() << "\n";
      return 2;
    }
    note_run_records(l, err, "isolab compare");
    out << (format == ReportFormat::text ? render_text(l.comparison, {.all_rows = o.all_rows})
                                         : render(l.comparison, format));
    if (o.format == "text" || o.format == "markdown") out << host_load_line(l);
    if (o.history_db) {
      HistoryDb db = HistoryDb::open(*o.history_db);
      index_run(db, l.run_a, l.dir_a);
      if (o.run_dirs.size() == 2) index_run(db, l.run_b, l.dir_b);
      record_comparison(db, l.comparison, render_json(l.comparison)["summary"]);
    }
    return compare_exit_status(l.comparison);
  } catch (const std::exception& e) {
    err << "isolab compare: error: " << e.what() << "\n";
    return 2;
  }
}

namespace {

// The flags that let runs of unlike hosts be compared, in the order --help lists them.
struct BoolFlag {
  const char* name;
  bool CompareCommandOptions::*member;
  const char* help;
};
constexpr BoolFlag kHostFlags[] = {
    {"--force", &CompareCommandOptions::force,
     "Compare runs with a different accelerator, host, cmdline, workloads, isolab build or guest "
     "image (shown in the report), or use a calibration made under another comparison key"},
    {"--pool-hosts", &CompareCommandOptions::pool_hosts,
     "Combine cells of libvirt hosts whose fingerprints (CPU model, CPUs, libvirt and QEMU "
     "versions) differ (refused by default)"}};

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
    cmp.footer(
        "Exit status: 0 no regression; 1 something counted against B (a primary regressed, a "
        "kernel failure class, gate check or retry rate, a new build warning in a file B's "
        "series touches); 3 primaries declared, nothing counted against B, and none could reach "
        "alpha with these boots (boot more: the run's dry run says how many); 2 error or refused "
        "comparison. docs/verdicts.md says what each rests on.");
    cmp.add_flag("--all", opt.all_rows,
                 "Text: list every metric row (by default the primaries and the rows that "
                 "changed; the other formats hold every row)");
    cmp.add_option("--variant-a", opt.variant_a,
                   "Variant of the first run to use as A (default: its first)");
    cmp.add_option("--variant-b", opt.variant_b,
                   "Variant to use as B (default: one run, its second variant; two runs, the "
                   "variant of B's run named as A's when it has one, else its first)");
    cmp.add_option("--noise-floor", noise_floor, "Calibration JSON from `isolab calibrate`");
    for (const auto& f : kHostFlags) cmp.add_flag(f.name, opt.*f.member, f.help);
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

}  // namespace

Action declare_compare(CLI::App& sub) { return declare_command<CompareCommand>(sub); }

}  // namespace isolab
