#include "cli/budget.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "base/error.h"
#include "base/json_text.h"
#include "budgets/judge.h"
#include "results/result_file.h"
#include "spec/json_object.h"
#include "spec/spec.h"

namespace isolab {

namespace {

// The budgets of FILE: a whole spec (it has "variants": loaded and validated as `isolab run`
// does), or a document {"budgets": [...]} alone (imported runs have no spec to add them to).
std::vector<BudgetSpec> budgets_of_file(const std::filesystem::path& file) {
  const nlohmann::json doc = read_json_file(file);
  if (doc.is_object() && doc.contains("variants")) return load_spec_file(file).budgets;
  try {
    SpecObject o(doc, "");
    const nlohmann::json* b = o.get("budgets");
    if (!b) throw SpecError("/budgets", "missing: give a spec or {\"budgets\": [...]}");
    o.finish();
    return parse_budgets(*b, "/budgets");
  } catch (const SpecError& e) {
    throw spec_error_in_file(e, file);
  }
}

// The budgets judged: --spec FILE's, else the run's own.
std::vector<BudgetSpec> budgets_for(const BudgetCommandOptions& o, const nlohmann::json& result) {
  if (!o.spec.empty()) {
    std::vector<BudgetSpec> b = budgets_of_file(o.spec);
    if (b.empty()) throw Error(o.spec.string() + ": /budgets: no budgets");
    return b;
  }
  std::vector<BudgetSpec> b;
  try {
    b = budgets_of_run(result);
  } catch (const SpecError& e) {
    throw Error(result_file(o.run_dir).string() + ": " + e.what());
  }
  if (b.empty())
    throw Error(result_file(o.run_dir).string() +
                ": /spec/budgets: the run's spec has no budgets; give --spec FILE");
  return b;
}

}  // namespace

int budget_command(const BudgetCommandOptions& o, std::ostream& out, std::ostream& err) {
  try {
    const nlohmann::json result = load_result(o.run_dir);
    const BudgetVerdict v = judge_budgets(budgets_for(o, result), result);
    if (o.format == "json")
      out << json_text(to_json(v), 2) << "\n";
    else
      out << budget_verdict_text(v);
    return budget_exit_status(v);
  } catch (const std::exception& e) {
    err << "isolab budget: error: " << e.what() << "\n";
    return 2;
  }
}

namespace {

// isolab budget RUN_DIR [--spec FILE] [--format text|json].
struct BudgetCommand {
  BudgetCommandOptions opt;

  void declare(CLI::App& sub) {
    sub.add_option("run_dir", opt.run_dir,
                   "Run directory (or its result.json), recorded or imported")
        ->required();
    sub.add_option(
        "--spec", opt.spec,
        "Judge the budgets of this spec (docs/spec.md 'budgets') instead of the run's own");
    sub.add_option("--format", opt.format, "text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  int run() const { return budget_command(opt, std::cout, std::cerr); }
};

}  // namespace

Action declare_budget(CLI::App& sub) { return declare_command<BudgetCommand>(sub); }

}  // namespace isolab
