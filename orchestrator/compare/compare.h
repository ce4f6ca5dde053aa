// isolab compare's door: A/B comparison of result.json documents (schema_version 1,
// docs/RESULT_SCHEMA.md). The samples: compare/variant_data.h; whether two runs may be compared:
// compare/comparable.h; the model filled: compare/comparison.h; each metric's test and verdict:
// compare/metric_test.h, compare/verdict_rules.h; the exit status: compare/exit_status.h.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compare/comparable.h"
#include "compare/comparison.h"
#include "compare/exit_status.h"
#include "results/result.h"
#include "spec/compare_settings.h"

namespace isolab {

// Compares variant_b of run_b against variant_a of run_a (A is the baseline). Each row is
// tested by its kind and judged by decide_primary_verdict or decide_metric_verdict (verdict.h)
// with its family-wise p (above); the failures and the gate are weighed. Throws
// isolab::SpecError (the primary's pointer + "/cpus") when a primary metric's CPUs are not
// among a cell's "cpus" for that metric, and isolab::Error naming the declaration when a primary
// metric is in no contributing cell although both sides have some. When the contributing
// cells come from two or more hosts (cells[].host.uri), the host is a blocking factor: each
// metric gets per-host rows and its verdict comes from the stratified test over the hosts
// (test_metric_stratified); cells without a host form a stratum of their own. Unless
// settings.pool_hosts, throws ComparisonRefused (option --pool-hosts) when the hosts'
// fingerprint_sha256 differ, listing each host's fingerprint. Throws isolab::Error when
// A and B disagree on a metric's unit, better or kind. Unless force,
// throws ComparisonRefused when comparison_key_differences() is non-empty; with force the
// result carries forced = true and the differences. Throws isolab::Error when the two sides
// are the same variant of the same run, or as extract_variant does.
// run_a and run_b are the same run when they are one object or share a non-empty run_id.
Comparison compare_runs(const results::RunResult& run_a, const std::string& variant_a,
                        const results::RunResult& run_b, const std::string& variant_b,
                        const CompareSettings& settings, bool force);
// The same of two documents, read by results::result_from_json (A's first; one document passed
// twice is read once and is the same run).
Comparison compare_runs(const nlohmann::json& run_a, const std::string& variant_a,
                        const nlohmann::json& run_b, const std::string& variant_b,
                        const CompareSettings& settings, bool force);

// One run's two variants: variant_order[0] (A) against variant_order[1] (B). Throws
// isolab::Error when variant_order has fewer than two entries.
Comparison compare_run_variants(const results::RunResult& run, const CompareSettings& settings);
Comparison compare_run_variants(const nlohmann::json& run, const CompareSettings& settings);

}  // namespace isolab
