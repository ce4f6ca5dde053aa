#include "cli/report.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <map>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "compare/exit_status.h"
#include "report/data.h"
#include "report/html.h"
#include "results/run_facts.h"
#include "spec/spec.h"

namespace isolab {

namespace {

// Whether the spec file at `path` is no longer the spec the run began with (its sha256 differs
// from result.json's spec_sha256, as `run --resume` checks), or cannot be read as a spec.
bool spec_changed_since(const nlohmann::json& run, const std::string& path) {
  try {
    return results::resume_facts(run).spec_sha256 !=
           sha256_hex(json_text(load_spec_file(path).raw));
  } catch (const std::exception&) {
    return true;
  }
}

// "`isolab run SPEC --resume DIR` finishes it", with the spec's path when result.json records
// it, and what stands in the way when that file has changed since the run began.
std::string resume_command(const nlohmann::json& run, const std::filesystem::path& dir) {
  const auto p = run.find("spec_path");
  const bool known = p != run.end() && p->is_string() && !p->get<std::string>().empty();
  const std::string spec = known ? p->get<std::string>() : "SPEC";
  std::string s = "`isolab run " + spec + " --resume " + dir.string() + "` finishes it";
  if (known && spec_changed_since(run, spec))
    s += " with the spec the run began with (" + spec +
         " has changed since, or cannot be read: result.json's spec_sha256 differs, and "
         "`run --resume` refuses another spec)";
  return s;
}

}  // namespace

std::string unfinished_run_text(const nlohmann::json& run, const std::filesystem::path& dir) {
  const std::optional<results::UnfinishedRun> u = results::unfinished_run(run);
  if (!u) return "";
  return "run " + dir.string() + " did not finish (status \"" + u->status + "\", " +
         std::to_string(u->cells) + " cells recorded): the comparison rests on those cells; " +
         resume_command(run, dir);
}

void refuse_unfinished_without_cells(const nlohmann::json& run, const std::filesystem::path& dir) {
  const std::optional<results::UnfinishedRun> u = results::unfinished_run(run);
  if (u && u->cells == 0)
    throw Error("run " + dir.string() + " did not finish (status \"" + u->status +
                "\") and recorded no cell: nothing to compare; " + resume_command(run, dir));
}

std::string undeclared_variant_text(const nlohmann::json& run, const std::filesystem::path& dir) {
  std::map<std::string, std::size_t> cells;
  for (const auto& label : results::cell_labels(run))
    if (!results::names_variant(run, label.variant)) ++cells[label.variant];
  std::string list;
  for (const auto& [variant, n] : cells)
    list += (list.empty() ? "" : ", ") + std::to_string(n) + " of variant '" +
            sanitize_excerpt(variant, 80) + "'";
  if (list.empty()) return "";
  return "run " + dir.string() + " has cells of variants it does not declare (variant_order, " +
         "variants): " + list + "; they are left out of the comparison";
}

void refuse_side_without_cells(const Comparison& c) {
  if (compare_exit_status(c) == 1) return;  // what counted against B is the answer
  const std::pair<const char*, std::size_t> sides[] = {{"A", c.cells_a}, {"B", c.cells_b}};
  for (const auto& [name, ok] : sides) {
    if (ok > 0) continue;
    const std::string side = name;  // a copy: clang 14 cannot capture a structured binding
    const std::string variant = side == "A" ? c.variant_a : c.variant_b;
    const auto others = std::count_if(c.issues.begin(), c.issues.end(),
                                      [&](const CellIssue& i) { return i.side == side; });
    throw Error(side + " (" + sanitize_excerpt(variant, 80) + ") has no cell that counts (" +
                std::to_string(others) +
                " recorded cells invalid or failed, none ok): nothing was measured on that side, "
                "and nothing counted against B");
  }
}

void note_run_records(LoadedComparison& l, std::ostream& err, const std::string& who) {
  refuse_unfinished_without_cells(l.run_a, l.dir_a);
  refuse_unfinished_without_cells(l.run_b, l.dir_b);
  for (int side = 0; side < (l.dir_b != l.dir_a ? 2 : 1); ++side) {
    const nlohmann::json& run = side == 0 ? l.run_a : l.run_b;
    const std::filesystem::path& dir = side == 0 ? l.dir_a : l.dir_b;
    const std::pair<const char*, std::string> notes[] = {
        {"unfinished", unfinished_run_text(run, dir)},
        {"undeclared-variant", undeclared_variant_text(run, dir)}};
    for (const auto& [kind, text] : notes) {
      if (text.empty()) continue;
      err << who << ": note: " << text << "\n";
      l.comparison.run_notes.push_back({kind, text});
    }
  }
  refuse_side_without_cells(l.comparison);
}

int report_command(const ReportCommandOptions& o, std::ostream& out, std::ostream& err) {
  const char* who = o.compare_status ? "isolab compare" : "isolab report";
  try {
    ReportData d;
    try {
      d = gather_report(o.compare);
    } catch (const ComparisonRefused& e) {
      err << who << ": " << e.what() << "\n";
      return 2;
    }
    note_run_records(d.loaded, err, who);
    const std::string page = render_html_report(d);
    if (!o.output || o.output->string() == "-") {
      out << page;
    } else {
      write_file_atomic(*o.output, page);
      err << who << ": wrote " << o.output->string() << "\n";
    }
    return o.compare_status ? compare_exit_status(d.loaded.comparison) : 0;
  } catch (const std::exception& e) {
    err << who << ": error: " << e.what() << "\n";
    return 2;
  }
}

namespace {

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

}  // namespace

Action declare_report(CLI::App& sub) { return declare_command<ReportCommand>(sub); }

}  // namespace isolab
