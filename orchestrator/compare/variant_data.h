// The samples of one variant of one run, as compare reads them from result.json (schema_version
// 1, docs/RESULT_SCHEMA.md) through results/ (result.h; a cell's metrics through
// metric_record.h, its histograms through histogram.h, the rest through cell_facts.h).
//
// Per metric, the sample of a variant is one value per cell: aggregate(values) of that cell's
// metric (mean|max|min|sum; JSON null values are missing and skipped, a cell whose values are
// all null contributes nothing to that metric). A metric may carry "kind" ("count", "timing" or
// "instructions"; see verdict.h for how the kind is decided when it is absent) and, for per-CPU
// metrics, "cpus" (the CPUs its values belong to, parallel to "values"); "counts" and
// "window_s" are not read. A cell's metric marked "untrustworthy" contributes nothing and is
// listed (Comparison::untrusted) with its reason. Only cells with status "ok" and warmup false
// contribute values.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compare/verdict.h"
#include "kernel/build_log.h"
#include "results/cell_facts.h"
#include "results/result.h"
#include "stats/sample.h"

namespace isolab {

// The values of one metric in one variant of one run.
struct MetricSamples {
  std::string unit;
  std::string better;                       // as written in result.json ("lower", "higher", ...)
  std::string kind;                         // "count", "timing", or "" when absent
  std::vector<double> values;               // one per contributing cell that had a value
  std::vector<std::string> cell_ids;        // parallel to values
  std::vector<std::vector<unsigned>> cpus;  // parallel to values: the cell's "cpus" (or empty)
  std::set<std::string> accelerators;       // cells[].accelerator of the contributing cells
  // The metric's "source" in the contributing cells ("tcg-plugin", "pmu"; parse/metrics.h),
  // cells without one left out.
  std::set<std::string> sources;
  std::vector<std::string> hosts;  // parallel to values: cells[].host.uri ("" = none)
  // Parallel to values: the cell's own "values" array (NaN for null), per CPU when cpus is set.
  std::vector<std::vector<double>> cell_values;
  // Parallel to values: the cell's position among the variant's contributing cells
  // (VariantData::ok_cell_ids).
  std::vector<std::size_t> ok_index;

  MetricKind metric_kind() const { return metric_kind_of(kind, unit); }
};

// A cell of a variant, whatever its status (warm-ups included), for the failure rates.
struct CellRecord {
  std::string id;
  std::string status;         // "ok" | "invalid" | "failed"
  std::string failure_class;  // "" when null
  std::string reason;
  std::string accelerator;     // cells[].accelerator, "" when absent
  bool overcommitted = false;  // cells[].overcommitted
  bool warmup = false;
  // Infrastructure failures of this cell's boots: its earlier_attempts, plus 1 when the cell
  // itself failed as infrastructure (the retry channel of compare/budget.h).
  std::size_t retries = 0;
};

// A cell that did not contribute because it was invalid or failed.
struct CellIssue {
  std::string side;  // "A" or "B"
  std::string variant;
  std::string cell_id;
  std::string status;         // "invalid" | "failed"
  std::string failure_class;  // "" when null
  std::string reason;
  std::vector<std::string> gate_failures;  // "check: expected X, effective Y (detail)"
  bool kernel_failure = false;             // see the class list at the top of this file
  bool against_b = false;                  // B cell whose failure class counts against B
};

// The values of one metric in one ok cell that were left out because the cell marked them
// "untrustworthy" (parse/metrics.h; stress-ng exit status 7, docs/sources.md [s3]).
struct UntrustedValues {
  std::string side;  // "A" or "B" (set by compare_runs)
  std::string cell_id;
  std::string metric;
  std::string reason;
};

// Everything compare needs from one variant of one run.
struct VariantData {
  std::string run_id;
  std::string variant;
  std::string kernel_release;  // variants.<v>.kernel_release, "" when absent
  std::size_t cells_ok = 0;    // contributing cells (status ok, not warmup)
  std::map<std::string, MetricSamples> metrics;
  std::map<std::string, Histogram> histograms;  // merged over contributing cells
  std::map<std::string, std::string> histogram_units;
  std::vector<CellIssue> issues;           // side left empty; compare_runs fills it
  std::vector<UntrustedValues> untrusted;  // not in `metrics`; side left empty
  std::set<std::string> cell_accelerators;
  // variants.<v>.build_warnings (kernel/build_log.h JSON form); nullopt when the run did not
  // record them (older results, or the log was unreadable).
  std::optional<std::vector<BuildWarning>> build_warnings;
  // variants.<v>.touched_files: the files the variant's patch series changes.
  std::set<std::string> touched_files;
  // cells[].host of the contributing cells by host URI (runs on several libvirt hosts). Empty
  // for single-host runs.
  std::map<std::string, results::CellHost> hosts;
  std::vector<std::string> ok_cell_ids;    // the contributing cells, in run order
  std::vector<std::string> ok_cell_hosts;  // parallel: cells[].host.uri ("" = none)
  std::vector<CellRecord> cells;           // every cell of the variant, in run order
  bool spec_overcommit = false;            // the run's spec "overcommit"
  // Non-empty when every contributing cell recorded that it measured no instruction counts
  // (cells[].insn_counts with "source": null, e.g. a KVM boot without a guest PMU): the first
  // such cell's "reason". An instruction metric absent on both sides is then "not measured".
  std::string insn_counts_unavailable;
  // cells[].tool_versions of the contributing cells: "<workload>: <tool>" -> every version
  // string recorded, as printed ({"latency: cyclictest": {"2.40"}}).
  std::map<std::string, std::set<std::string>> tool_versions;
};

// Extracts a variant's samples. Throws isolab::Error if run is not a result.json object of
// schema_version 1 or the variant is not in it, and isolab::SpecError with the JSON pointer
// (e.g. "/cells/3/metrics/latency.latency_max_us/values/1") for a malformed field: a value
// that is neither a number nor null, an unknown aggregate, an unknown status, a "kind" other
// than "count"/"timing"/"instructions", a "cpus" entry that is not a CPU number (0..8191), a
// negative value of a count or instruction metric, or unit/better/kind differing between cells
// of the variant; and for whatever results::result_from_json refuses (results/result.h).
VariantData extract_variant(const nlohmann::json& run, const std::string& variant);
// The same from a document already read (results::result_from_json has then refused what is
// malformed outside the metrics; the rest is checked here as above).
VariantData extract_variant(const results::RunResult& run, const std::string& variant);

// The samples of `metric` in d.metrics, or nullptr when the variant has none.
const MetricSamples* find_samples(const VariantData& d, const std::string& metric);

// True for the failure classes that are the kernel's fault (build, boot, panic, oops, warning,
// rcu_stall, lockup).
bool is_kernel_failure_class(const std::string& failure_class);

// A build warning of B that A's build did not have (matched by file, class and message, not by
// line or column: a patch shifts lines), as kernel test robots report them.
struct NewBuildWarning {
  BuildWarning warning;
  bool in_touched_file = false;  // in a file B's series changes: counts against B
};

// The warnings of b not in a (file + class + message), in b's order; in_touched_file from
// touched (B's series).
std::vector<NewBuildWarning> new_build_warnings(const std::vector<BuildWarning>& a,
                                                const std::vector<BuildWarning>& b,
                                                const std::set<std::string>& touched);

}  // namespace isolab
