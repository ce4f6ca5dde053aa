// The JSON form of a Comparison (what `isolab compare --format json` prints and the history
// index records the summary of).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compare/compare.h"

namespace isolab {

// {"schema":"isolab-comparison","version":1, "run_a","run_b","variant_a","variant_b",
//  "kernel_a","kernel_b","spec_name","forced","differences","run_notes":[{"kind" ("unfinished"|
//  "undeclared-variant"),"text"}],"settings":{...},"host_sensitive",
//  "metrics":[{"name","metric","unit","better","kind","cpus","derived","tcg","role",
//              "a":{n,median,mean,stddev,min,max,cv,values},"b":{...},"missing_a","missing_b",
//              "change_pct","ci_low_pct","ci_high_pct","interval":{"low","high","low_bounded",
//              "high_bounded","level","unit" ("percent" or the metric's),"reassignments"},
//              "test" ("midrank-permutation"|"permutation-mean"|"stratified-..."),"p_value",
//              "p_exact","min_p","one_sided_p","family_p","family" ("holm"|"westfall-young"),
//              "permutation_p","mann_whitney_p","threshold_pct","margin","margin_relative",
//              "cannot_exclude","cannot_exclude_unbounded","verdict","reason",
//              primary rows: "bad","declared"; counts and instructions: "count":{"mean_a",
//              "mean_b","diff","diff_ci_low","diff_ci_high","relative_change_pct" (null when A
//              was 0),"new","min_p","reassignments","floor"}}],
//  "tails":[{"histogram","unit","a":{samples,overflows,p99,p99_9,max},"b":{...}}],
//  "profile_changes":[{"step","cpu","function","a","b","cells_a","cells_b"}] (kernel
//                      instructions per boot, compare/profile_diff.h),
//  "latency_traces":[{"variant","side":"A"|"B","cell_id","workload","tracer","max_latency_us",
//                     "task","cpu","frames","file"}] (compare.h LatencyTraceRow),
//  "gate":[{"check","a_pass","a_total","b_pass","b_total","p","against_b","reason"}],
//  "failures":[{"failure_class","a_cells","a_total","b_cells","b_total","as_rates","p",
//               "against_b","reason"}],
//  "issues":[{"side","variant","cell_id","status","failure_class","reason","gate_failures",
//             "kernel_failure","against_b"}],
//  "summary":{"improved","regressed","no_change","inconclusive" (every row),"primary":{...},
//             "secondary":{...} (the same four per role),"primary_regressions",
//             "kernel_failures_b","kernel_failure_regressions","gate_regressions",
//             "new_warnings_in_touched_files","regressions","exit_status","basis" (text),
//             "family":{"primary","secondary","relabellings","exact"},"missing_more_in_b":
//             [{"metric","missing_a","missing_b"}],"lines":[summarize() details, in order]}}
// Undefined numbers (NaN, infinite) are null.
nlohmann::json render_json(const Comparison& c);

}  // namespace isolab
