// The budgets' verdict of a finished run, written into its result.json as "budgets"
// (docs/RESULT_SCHEMA.md) by `isolab run`.
#pragma once

#include <filesystem>
#include <vector>

#include "budgets/judge.h"
#include "spec/budgets.h"

namespace isolab {

// Judges `budgets` on run_dir's result.json (budgets/judge.h), stores to_json(verdict) as its
// top-level "budgets" (replacing an earlier one, e.g. of a resumed run) and returns the verdict.
// Throws isolab::Error naming the file when result.json cannot be read or written.
BudgetVerdict record_budgets(const std::filesystem::path& run_dir,
                             const std::vector<BudgetSpec>& budgets);

}  // namespace isolab
