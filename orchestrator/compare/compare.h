// A/B comparison of result.json documents (schema_version 1, see RESULT_SCHEMA.md).
//
// Per metric, the sample of a variant is one value per cell: aggregate(values) of that cell's
// metric (mean|max|min|sum; JSON null values are missing and skipped, a cell whose values are
// all null contributes nothing to that metric). A metric may carry "kind" ("count" or
// "timing"; see verdict.h for how the kind is decided when it is absent) and, for per-CPU
// counts, "cpus" (the traced isolated CPUs its values belong to); "counts" and "window_s" are
// not read. A cell's metric marked "untrustworthy" contributes nothing and is listed
// (Comparison::untrusted) with its reason. Only cells with status "ok" and warmup false
// contribute. Cells that are "invalid" or "failed" are listed as issues with their reason and
// failed gate rows; a kernel failure (failure_class build, boot, panic, oops, warning,
// rcu_stall or lockup) of a B cell counts as one regression of its own. Infrastructure,
// timeout and workload failures, and gate-invalid cells, are listed but are not regressions.
//
// Exit status contract of the compare command (compare_exit_status):
//   0 no regression, 1 at least one regression, 2 error or invalid/refused comparison.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "compare/stats.h"
#include "compare/verdict.h"
#include "kernel/build_log.h"

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
  std::vector<std::string> hosts;           // parallel to values: cells[].host.uri ("" = none)

  MetricKind metric_kind() const { return metric_kind_of(kind, unit); }
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
};

// The values of one metric in one ok cell that were left out because the cell marked them
// "untrustworthy" (parse/metrics.h; stress-ng exit status 7, case S3).
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
};

// Extracts a variant's samples. Throws isolab::Error if run is not a result.json object of
// schema_version 1 or the variant is not in it, and isolab::SpecError with the JSON pointer
// (e.g. "/cells/3/metrics/latency.latency_max_us/values/1") for a malformed field: a value
// that is neither a number nor null, an unknown aggregate, an unknown status, a "kind" other
// than "count"/"timing", a "cpus" entry that is not a CPU number (0..8191), a negative value
// of a count metric, or unit/better/kind differing between cells of the variant.
VariantData extract_variant(const nlohmann::json& run, const std::string& variant);

// True for the failure classes that are the kernel's fault (build, boot, panic, oops, warning,
// rcu_stall, lockup).
bool is_kernel_failure_class(const std::string& failure_class);

// Differences of the comparison_key objects of two runs, one line each
// ("accelerator: A=tcg, B=kvm"), over the union of their keys; a missing comparison_key is a
// difference. Hashed keys are shown by what they hash: workloads_sha256 as "workloads:
// A=latency (cyclictest), ...; B=latency (cyclictest, imported)" (from spec.workloads), and
// host_fingerprint_sha256 as "host: cpu_model A=X, B=Y; ..." (the host fields that differ), or,
// when either run used several libvirt hosts ("hosts"), as "host: hosts A=<cpu_model> x<cpus>
// (<hypervisor> <version>) + ..., B=this machine (<cpu_model>)". Also a
// difference: the accelerators the contributing cells actually used.
std::vector<std::string> comparison_key_differences(const nlohmann::json& run_a,
                                                    const nlohmann::json& run_b);

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
  std::string name;
  std::string unit;
  std::string better;
  MetricKind kind = MetricKind::timing;
  std::vector<unsigned> cpus;  // union of the cells' "cpus" over both sides, sorted
  bool tcg = false;            // a contributing cell of either side ran under TCG
  std::vector<double> a_values;
  std::vector<double> b_values;
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
  std::vector<HostSummary> hosts;               // sorted by URI; empty for single-host runs
  bool stratified = false;                      // two or more hosts: host is a blocking factor
  // Hosts whose fingerprints differ were combined because settings.pool_hosts was set; the
  // differences are listed in host_differences.
  bool pooled_unlike_hosts = false;
  std::vector<std::string> host_differences;

  std::size_t count(Verdict v) const;
  std::size_t kernel_failures_b() const;
  // New build warnings of B in files B's series touches.
  std::size_t new_warnings_in_touched_files() const;
  // Metric regressions plus kernel-failure cells of B plus new warnings in touched files.
  std::size_t regressions() const;
};

// 0 when comparison.regressions() == 0, else 1.
int compare_exit_status(const Comparison& c);

// Compares variant_b of run_b against variant_a of run_a (A is the baseline). Each metric is
// tested by its kind and judged by decide_metric_verdict (verdict.h). When the contributing
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
