#include "budgets/record.h"

#include "results/result.h"
#include "results/result_file.h"

namespace isolab {

BudgetVerdict record_budgets(const std::filesystem::path& run_dir,
                             const std::vector<BudgetSpec>& budgets) {
  const std::filesystem::path file = result_file(run_dir);
  const nlohmann::json doc = load_result(file);
  BudgetVerdict v = judge_budgets(budgets, doc);
  results::RunResult r = results::read_result(file);
  r.rest["budgets"] = to_json(v);
  results::write_result(file, r, 2);  // isolab run's indentation
  return v;
}

}  // namespace isolab
