// isolab budget RUN_DIR: a recorded or imported run judged against budgets (budgets/judge.h),
// those of its own spec or of --spec FILE.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "cli/subcommand.h"

namespace isolab {

struct BudgetCommandOptions {
  std::filesystem::path run_dir;  // a run directory or its result.json
  // "" = the budgets of the run's own spec; else a spec file (validated whole, as `isolab run`
  // does) or a file {"budgets": [...]} alone.
  std::filesystem::path spec;
  std::string format = "text";  // text | json (budgets/judge.h to_json)
};

// Prints the judgement on `out`. Exit status (budgets/judge.h budget_exit_status): 0 within
// budget, 4 over budget, 3 no enforced budget judged; 2 on an error (no budgets, an unreadable
// run, a bad spec: the message names the file and the JSON pointer), written on `err`.
int budget_command(const BudgetCommandOptions& options, std::ostream& out, std::ostream& err);

// Declares `isolab budget`'s options (CLI11) on `sub`; the action runs it and returns its exit
// status.
Action declare_budget(CLI::App& sub);

}  // namespace isolab
