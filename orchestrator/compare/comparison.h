// The model of one A/B comparison: its metric rows, tails, failures, gate, hosts and exit
// budget, as compare_runs (compare/compare.h) fills it and report/ renders it.
//
// Rows. Every metric gets a row of its per-cell aggregates. A count metric whose cells carry
// two or more "cpus" also gets one row per CPU, "<metric>[cpu5]", whose per-boot sample is the
// cell's value on that CPU (a change on the workload's CPU alone is not divided by the number of
// traced CPUs), judged with the count floor per CPU. A primary metric declared with "cpus" gets
// the row "<metric>[cpu<list>]" whose sample is the mean of the cell's values on those CPUs (the
// per-CPU row itself when it names one CPU of a count metric).
//
// Every other metric row than the declared primaries is secondary: tested two-sided, with a
// family-wise p by Westfall-Young min-P over joint relabellings of the boots
// (stats/multiplicity.h; the larger of that and the row's own p), reported, and never setting
// the exit status (compare/exit_status.h). Infrastructure, timeout and workload failures are
// listed; infrastructure ones also count in the retry channel. A metric missing (no value) in
// more contributing B boots than A boots is flagged (Comparison::missing_more_in_b), not an exit
// by itself.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "compare/budget.h"
#include "compare/metric_test.h"
#include "compare/profile_diff.h"
#include "compare/variant_data.h"
#include "compare/verdict.h"
#include "spec/compare_settings.h"
#include "spec/primary.h"
#include "stats/sample.h"

namespace isolab {

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

// How the two families of metric rows were adjusted.
struct FamilySummary {
  std::size_t primary = 0;       // rows in Holm's family
  std::size_t secondary = 0;     // rows in the Westfall-Young family
  std::size_t relabellings = 0;  // joint relabellings of the boots (0 when not computed)
  bool exact = true;             // every relabelling, not a seeded sample
};

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
  // What A's and B's result.json say that the answer must carry (cli/report.h
  // note_run_records): kind "unfinished" (a run that did not finish: the comparison rests on
  // the cells it recorded) or "undeclared-variant" (cells of a variant the run does not declare,
  // left out), and the sentence. Empty for whole runs.
  struct RunNote {
    std::string kind;
    std::string text;
  };
  std::vector<RunNote> run_notes;
  CompareSettings settings;
  std::vector<MetricRow> metrics;  // sorted by name
  std::vector<TailRow> tails;
  std::vector<CellIssue> issues;
  std::vector<UntrustedValues> untrusted;  // A's then B's, in cell order; not tested
  std::vector<GateSummaryRow> gate;        // in the order the checks first appear
  // The budgets' verdict each run recorded over A's and B's cells (results::
  // recorded_budget_verdict); "" when that run judged no budgets. Shown, never tested: the exit
  // status of compare does not rest on it (docs/verdicts.md "Budgets").
  std::string budget_a, budget_b;
  // How each run's guest stood for the customer's machine (results::fidelity_summary of A's and
  // B's run); "" for a run without a customer machine. Shown, never tested.
  std::string fidelity_a, fidelity_b;
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

}  // namespace isolab
