// The calibration document (`isolab calibrate --format json`, `--output FILE`): what compare
// --noise-floor and a spec's compare.calibration read back (compare/noise_floors.h).
#pragma once

#include <nlohmann/json.hpp>

#include "calibrate/calibrate.h"

namespace isolab {

// {"schema":"isolab-calibration","version":3,"comparison_key","seed","splits","alpha","power",
//  "method":{...},"warnings",
//  "runs":[{"run_id","variants","boot_order","boot_order_source","testable_metrics",
//           "drifting_metrics","compare_exit_status","compare_note","warnings"}],
//  "false_alarms":{"alarms","comparisons","unreachable","rate","ci_low","ci_high","level"}|null,
//  "power":[line...],
//  "metrics":{"<name>":{"unit","kind","threshold_pct","noise_floor_pct","jitter","jitter_runs",
//     "runs":[{"run_id","n","mean","cv","within_sd","dispersion" (null for timings),
//              "trend":{"s","kendall_tau","p"},"odd_even":{"statistic","p"},
//              "halves":{"statistic","p"},"drift_p","drift_p_holm","drifting","testable",
//              "exact","permutations",
//              "mde":{"boots_per_side","delta","delta_pct","power","replicates","reached"},
//              "noise_floor_pct","span"}|null],
//     "between_runs":{"run_means","means_cv","within_sd","between_sd","icc"}|null}}};
// NaN is null.
nlohmann::json calibration_to_json(const Calibration& c);

}  // namespace isolab
