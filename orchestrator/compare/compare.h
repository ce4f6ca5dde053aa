// A/B comparison of result.json documents (schema_version 1, see docs/RESULT_SCHEMA.md), read
// through results/result.h.
//
// Per metric, the sample of a variant is one value per cell: aggregate(values) of that cell's
// metric (mean|max|min|sum; JSON null values are missing and skipped, a cell whose values are
// all null contributes nothing to that metric). A metric may carry "kind" ("count", "timing" or
// "instructions"; see verdict.h for how the kind is decided when it is absent) and, for per-CPU
// metrics, "cpus" (the CPUs its values belong to, parallel to "values"); "counts" and
// "window_s" are not read. A cell's metric marked "untrustworthy" contributes nothing and is
// listed (Comparison::untrusted) with its reason. Only cells with status "ok" and warmup false
// contribute values.
//
// Rows. Every metric gets a row of its per-cell aggregates. A count metric whose cells carry
// two or more "cpus" also gets one row per CPU, "<metric>[cpu5]", whose per-boot sample is the
// cell's value on that CPU (a change on the workload's CPU alone is not divided by the number of
// traced CPUs), judged with the count floor per CPU. A primary metric declared with "cpus" gets
// the row "<metric>[cpu<list>]" whose sample is the mean of the cell's values on those CPUs (the
// per-CPU row itself when it names one CPU of a count metric).
//
// What decides the exit status (compare_exit_status), and nothing else: one alpha budget over
// every channel that can set it (compare/budget.h; docs/verdicts.md "What the exit status rests
// on"):
//  - the declared primary metrics (CompareSettings::primary, verdict.h): each tested one-sided
//    in its bad direction with an exact test; "regressed" only when rejected by the budget's
//    step-down and beyond its threshold; with a calibrated jitter, the range rule
//    (compare/range_rule.h) decides while the boots agree within it, on its declared share;
//  - kernel-correctness failure classes (build, boot, boot_timeout, panic, oops, warning,
//    rcu_stall, lockup), each as B's rate against A's over every cell of each side (warm-ups
//    included), one-sided Fisher exact test;
//  - isolation-gate checks, each as B's failure rate against A's, one-sided Fisher exact test;
//  - retried boots (infrastructure failures booted again, cells[].earlier_attempts) per boot,
//    one-sided exact permutation test;
//  - new build warnings of B in files B's series touches (not sampled: no share).
// Every other metric row is secondary: tested two-sided, with a family-wise p by Westfall-Young
// min-P over joint relabellings of the boots (multiplicity.h; the larger of that and the row's
// own p), reported, and never setting the exit status. Infrastructure, timeout and workload
// failures are listed; infrastructure ones also count in the retry channel. A metric missing (no
// value) in more contributing B boots than A boots is flagged (Comparison::missing_more_in_b),
// not an exit by itself.
//
// Exit status contract of the compare command (compare_exit_status):
//   1 something counted against B (a primary regressed, a failure class, gate check or the retry
//     rate rejected by the step-down, a new build warning in a touched file);
//   3 primary metrics are declared, nothing is counted against B, and none of them could have
//     reached alpha with these boots (ExitBudget::unreachable_primaries names them);
//   0 otherwise; 2 error or invalid/refused comparison.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "compare/budget.h"
#include "compare/profile_diff.h"
#include "compare/stats.h"
#include "compare/verdict.h"
#include "kernel/build_log.h"
#include "results/result.h"

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
  // cells[].host of the contributing cells by host URI (runs on several libvirt hosts; see
  // vm/libvirt_host.h to_json(HostFingerprint)). Empty for single-host runs.
  std::map<std::string, nlohmann::json> hosts;
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

// True for the failure classes that are the kernel's fault (build, boot, panic, oops, warning,
// rcu_stall, lockup).
bool is_kernel_failure_class(const std::string& failure_class);

// The class a kernel failure is weighed under: its failure_class, except "boot_timeout" for a
// boot failure whose reason names a VM timeout (boot_timeout, silence_timeout, wall_timeout:
// the guest never reached init in time, which an overloaded host can cause); "" for a cell that
// is not a kernel failure.
std::string failure_weight_class(const CellRecord& cell);

// The kernel-failure classes of one comparison: how many cells of each side had it, its rate
// test, and whether it counts against B (the budget's step-down, compare/budget.h).
struct FailureRow {
  std::string failure_class;             // failure_weight_class
  std::size_t a_cells = 0, a_total = 0;  // cells with the class / all cells of the variant
  std::size_t b_cells = 0, b_total = 0;
  double p = 1;      // one-sided Fisher exact p (B's rate above A's)
  double p_min = 1;  // the smallest p the margins allow (budget.h fisher_min_p)
  bool against_b = false;
  // "B 1 of 5 boots, A 0 of 5 boots; one-sided Fisher p = 0.5 (smallest possible 0.5)", and
  // after the budget ": counted against B (step-down p = ...)" or ": not counted against B".
  std::string reason;
};

// The kernel failures of both sides as rates (rules at the top of this file), against_b left
// to apply_exit_budget. Rows in the order build, boot, boot_timeout, panic, oops, warning,
// rcu_stall, lockup; only classes some cell had. (budget.cc)
std::vector<FailureRow> weigh_failures(const std::vector<CellRecord>& a,
                                       const std::vector<CellRecord>& b);

// The retry channel of both sides' cells (budget.h RetryRow); against_b left to the budget.
RetryRow weigh_retries(const std::vector<CellRecord>& a, const std::vector<CellRecord>& b);

// Differences of the comparison_key objects of two runs, one line each
// ("accelerator: A=tcg, B=kvm"), over the union of their keys; a missing comparison_key is a
// difference. Hashed keys are shown by what they hash: workloads_sha256 as "workloads:
// A=latency (cyclictest), ...; B=latency (cyclictest, imported)" (from spec.workloads), and
// host_fingerprint_sha256 as "host: cpu_model A=X, B=Y; ..." (the host fields that differ), or,
// when either run used several libvirt hosts ("hosts"), as "host: hosts A=<cpu_model> x<cpus>
// (<hypervisor> <version>) + ..., B=this machine (<cpu_model>)". Also a
// difference: the accelerators the contributing cells actually used, and, per metric, the
// source of its values (metric_source_differences).
std::vector<std::string> comparison_key_differences(const nlohmann::json& run_a,
                                                    const nlohmann::json& run_b);

// One line per metric whose "source" differs between the sides or within one side (an
// instruction count from the TCG plugin is not the guest PMU's; parse/metrics.h):
//   "metric vmstat-syscall.insns_per_syscall: source A=tcg-plugin, B=pmu"
// (a side with several sources lists them joined by ","). Metrics with no source on a side
// (older results, timings) are not differences. Like a differing accelerator, each is a
// reason to refuse the comparison unless forced.
std::vector<std::string> metric_source_differences(const VariantData& a, const VariantData& b);

// Thrown when two runs are not comparable and force was not given; what() lists every
// difference and names --force.
class ComparisonRefused : public Error {
 public:
  // option: the command-line option that overrides the refusal, named in what().
  explicit ComparisonRefused(std::vector<std::string> differences,
                             const std::string& option = "--force");
  const std::vector<std::string>& differences() const { return differences_; }

 private:
  std::vector<std::string> differences_;
};

// One metric on one host: the cells of that host only, tested as a single-host comparison
// (test_metric without CI; verdict by decide_metric_verdict, informational).
struct HostMetricRow {
  std::string host;  // URI
  MetricTest test;
  double change_pct = 0;
  VerdictResult verdict;
};

// A host that contributed cells (runs on several libvirt hosts).
struct HostSummary {
  std::string uri;
  std::string hostname;
  std::string cpu_model;
  std::string fingerprint_sha256;  // of the comparable fields (vm/libvirt_host.h)
  std::size_t cells_a = 0, cells_b = 0;
};

struct MetricRow {
  std::string name;    // the row: the metric, or "<metric>[cpu<list>]"
  std::string metric;  // the result.json metric it is of
  std::string unit;
  std::string better;
  MetricKind kind = MetricKind::timing;
  // The metric's row: union of the cells' "cpus" over both sides, sorted; a per-CPU or CPU
  // selection row: its CPUs.
  std::vector<unsigned> cpus;
  bool derived = false;  // a per-CPU or CPU selection row (not the cells' aggregate)
  bool tcg = false;      // a contributing cell of either side ran under TCG
  std::vector<double> a_values;
  std::vector<double> b_values;
  // Parallel to a_values / b_values: the cell's position among its side's contributing cells.
  std::vector<std::size_t> a_cells, b_cells;
  // Contributing cells of each side without a value (metric absent, null or untrustworthy).
  std::size_t missing_a = 0, missing_b = 0;
  bool primary = false;
  std::optional<PrimaryMetric> declared;  // set for primary rows
  // A declared instruction metric that neither side could measure (VariantData::
  // insn_counts_unavailable): why. Such a row has no values, no test and no part in the exit.
  std::string not_measured;
  // test.family_p: primary rows Holm's adjusted one-sided p, secondary rows the larger of the
  // Westfall-Young adjusted p and the row's own p (unset with settings.exit_status_only).
  MetricTest test;
  double change_pct = 0;  // NaN when undefined; +inf for a count metric going from 0 to > 0
  std::optional<double> ci_low_pct;
  std::optional<double> ci_high_pct;
  VerdictResult verdict;
  // Cells from two or more hosts: the per-host tests, in the order of Comparison::hosts; the
  // verdict above then comes from the stratified test (test.stratified).
  std::vector<HostMetricRow> per_host;
};

// Tail latencies of one histogram, per variant, from the histograms merged over contributing
// cells (nearest-rank, see histogram_percentile). Informational: tails do not move the verdict,
// since a merged histogram is one sample, with no replication to test against.
struct TailRow {
  std::string histogram;
  std::string unit;
  HistogramTail a;
  HistogramTail b;
};

// The isolation gate per check: in how many (non-warm-up) cells of each variant it passed,
// out of the cells that ran it. From cells[].gate.rows of result.json.
struct GateSummaryRow {
  std::string check;
  std::size_t a_pass = 0, a_total = 0;
  std::size_t b_pass = 0, b_total = 0;
  double p = 1;            // one-sided Fisher exact p that B fails it more often than A
  double p_min = 1;        // the smallest p the margins allow
  bool against_b = false;  // rejected by the budget's step-down
  std::string reason;      // "" when B never failed it
};

// Sets p, p_min and reason of each row (against_b false: the budget sets it). (budget.cc)
void weigh_gate(std::vector<GateSummaryRow>& rows);

// How the two families of metric rows were adjusted.
struct FamilySummary {
  std::size_t primary = 0;       // rows in Holm's family
  std::size_t secondary = 0;     // rows in the Westfall-Young family
  std::size_t relabellings = 0;  // joint relabellings of the boots (0 when not computed)
  bool exact = true;             // every relabelling, not a seeded sample
};

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

// The max-latency trace of one cell's latency_tracer step (result.json
// cells[].latency_traces.<workload>, workload/workload.h). Informational: the metric
// "<workload>.<tracer>.max_latency_us" carries the test; this names the path that made it.
struct LatencyTraceRow {
  int side = 0;  // 0 = A, 1 = B
  std::string cell_id;
  std::string workload;
  std::string tracer;               // "wakeup_rt"
  double max_latency_us = 0;        // tracing_max_latency
  std::string task;                 // woken task, "cyclictest-250"
  std::optional<int> cpu;           // its CPU
  std::vector<std::string> frames;  // switch-side stack, innermost first, "+0x../0x.." cut
  std::string file;                 // the trace file, run-dir relative ("" if not kept)
};

struct Comparison {
  std::string spec_name;
  std::string run_a;
  std::string run_b;
  std::string variant_a;
  std::string variant_b;
  std::string kernel_a;
  std::string kernel_b;
  bool same_run = false;
  std::size_t cells_a = 0;  // contributing cells
  std::size_t cells_b = 0;
  bool forced = false;
  std::vector<std::string> differences;  // non-empty only when forced
  CompareSettings settings;
  std::vector<MetricRow> metrics;  // sorted by name
  std::vector<TailRow> tails;
  std::vector<CellIssue> issues;
  std::vector<UntrustedValues> untrusted;  // A's then B's, in cell order; not tested
  std::vector<GateSummaryRow> gate;        // in the order the checks first appear
  // Warnings B's build adds over A's; nullopt when either side recorded none (not comparable).
  std::optional<std::vector<NewBuildWarning>> new_warnings;
  std::vector<LatencyTraceRow> latency_traces;  // A cells then B cells, in cell order
  // The kernel functions whose instructions on the isolated CPUs changed most between A and B
  // (compare/profile_diff.h; informational, never tested); empty without profiles.
  std::vector<ProfileChange> profile_changes;
  std::vector<HostSummary> hosts;  // sorted by URI; empty for single-host runs
  bool stratified = false;         // two or more hosts: host is a blocking factor
  // Hosts whose fingerprints differ were combined because settings.pool_hosts was set; the
  // differences are listed in host_differences.
  bool pooled_unlike_hosts = false;
  std::vector<std::string> host_differences;
  // The tools whose recorded versions differ between A's and B's contributing cells (one
  // line each, "latency: cyclictest A=2.40, B=2.50"; "(none)" for a side that recorded none);
  // informational, never refused: a different tool can explain a difference a kernel does not.
  std::vector<std::string> version_differences;
  std::vector<FailureRow> failures;  // kernel-failure classes of either side
  RetryRow retries;                  // infrastructure failures booted again, per side
  bool host_sensitive = false;       // a cell ran under TCG or overcommitted
  FamilySummary family;
  ExitBudget budget;  // what the exit status rests on, and how alpha was spent
  // Why the spec's calibration was not applied (made under another accelerator, command line,
  // guest or workloads); "" when applied or there is none.
  std::string calibration_note;
  // Secondary rows decided by the range rule, and the sum of their two-sided bounds; 0 rows
  // when that sum would exceed alpha (then none is).
  std::size_t secondary_range_rows = 0;
  double secondary_range_bound = 0;

  std::size_t count(Verdict v) const;                // every row
  std::size_t count(Verdict v, bool primary) const;  // primary or secondary rows
  std::size_t primary_regressions() const;
  std::size_t kernel_failures_b() const;  // B cells whose failure class is a kernel failure
  std::size_t kernel_failure_regressions() const;  // FailureRow::against_b
  std::size_t gate_regressions() const;            // GateSummaryRow::against_b
  std::size_t retry_regressions() const;           // RetryRow::against_b (0 or 1)
  // New build warnings of B in files B's series touches.
  std::size_t new_warnings_in_touched_files() const;
  // What the exit status rests on: primary regressions, failure classes, gate checks and the
  // retry rate counted against B, new warnings in touched files.
  std::size_t regressions() const;
  // Metric rows (not derived) missing in more contributing B boots than A boots.
  std::vector<const MetricRow*> missing_more_in_b() const;
};

// 1 when comparison.regressions() > 0; else 3 when budget.no_primary_reachable; else 0.
int compare_exit_status(const Comparison& c);

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
Comparison compare_runs(const nlohmann::json& run_a, const std::string& variant_a,
                        const nlohmann::json& run_b, const std::string& variant_b,
                        const CompareSettings& settings, bool force);

// One run's two variants: variant_order[0] (A) against variant_order[1] (B). Throws
// isolab::Error when variant_order has fewer than two entries.
Comparison compare_run_variants(const nlohmann::json& run, const CompareSettings& settings);

}  // namespace isolab
