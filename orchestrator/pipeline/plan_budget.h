// What a spec's exit status can detect, worked out before anything is built (docs/verdicts.md
// "What the exit status rests on"): the alpha budget at the spec's repetitions, whether each
// declared primary can reach the step-down's level, the range rule's shares, and for each
// primary that declares "detect" a Poisson power calculation (compare/power.h). The dry run
// prints it (pipeline/plan_text.h); `run` prints its warnings on stderr before it starts.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "spec/spec.h"

namespace isolab {

struct PlannedPrimary {
  std::string row;         // PrimaryMetric::row_name
  bool range = false;      // a calibrated jitter: the range rule decides while it holds
  double range_bound = 0;  // its share (range_rule_bound at the planned boots)
  double best_p = 1;       // 1 / C(2n, n): the exact test's smallest one-sided p
  bool reachable = false;  // best_p < the step-down's level / m, or the range rule
  std::string power;       // the detect line (count_power_line), "" without detect
};

struct PlanBudget {
  std::size_t per_side = 0;  // the spec's repetitions
  double alpha = 0.05;
  double range_share = 0;        // the range rows' declared share
  double level = 0.05;           // alpha - range_share
  double per_hypothesis = 0.05;  // level / m: the first level when every primary can reach it
  std::vector<PlannedPrimary> primaries;
  bool none_reachable = false;  // primaries declared and none can reach (compare would exit 3)
  // The fewest boots a side (up to 40) at which every primary's exact test can reach the first
  // level of that many boots; nullopt when none up to 40 can.
  std::optional<std::size_t> fewest_per_side;
  std::vector<std::string> warnings;  // one line per primary that cannot reach, and the total
};

// The budget of the spec's compare section at spec.repetitions boots per variant. Throws
// SpecError as settings_from_json does.
PlanBudget plan_budget(const Spec& spec);

// The dry run's lines for it (each ends with a newline, indented by two).
std::string plan_budget_text(const PlanBudget& b);

// {"per_side","alpha","range_share","level","per_hypothesis","none_reachable",
//  "fewest_per_side" (null: none up to
//  40),"warnings","primaries":[{"row","range","range_bound","best_p","reachable","power"}]} (`run
//  --dry-run
// --json`'s "budget").
nlohmann::json to_json(const PlanBudget& b);

}  // namespace isolab
