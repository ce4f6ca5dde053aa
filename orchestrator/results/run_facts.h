// The run-level facts other areas read from result.json, outside the typed fields of
// results/result.h: what decides whether two runs compare (comparison_key, host, hosts,
// spec.workloads), the run's accelerator, spec.overcommit, the host as the report lists it and
// the workloads' windows. Then the readers of an unchecked document: what code that holds a
// result.json document reads before, or instead of, result_from_json (the variants to compare,
// the cells to relabel, the boot order), each exactly as lenient as it says.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "results/result.h"

namespace isolab::results {

// comparison_key: field name -> value as written (strings, integers, null).
using ComparisonKey = std::map<std::string, nlohmann::json>;

// One of spec.workloads, as comparison_key's workloads_sha256 hashes it.
struct SpecWorkload {
  nlohmann::json name, tool;  // as written; null when absent
  bool imported = false;      // "imported": true (a workload of isolab import)
};

// One element of "hosts" (a run on libvirt hosts, vm/libvirt_host.h to_json(HostFingerprint)).
struct LibvirtHost {
  bool reachable = true;  // false when it carries a non-null "error": it measured nothing
  nlohmann::json cpu_model, cpus, hypervisor, hypervisor_version;  // as written; null when absent
};

// What decides whether two runs compare (compare/comparable.h).
struct RunFacts {
  std::optional<ComparisonKey> comparison_key;  // nullopt when absent or no object
  std::vector<SpecWorkload> workloads;          // spec.workloads; empty when none or no array
  // host's fields behind host_fingerprint_sha256 (results/host.h kHostFingerprintFields), in
  // that order, each as written (null when absent or when host is no object).
  std::vector<std::pair<std::string, nlohmann::json>> host_fingerprint;
  nlohmann::json host_cpu_model;                  // host.cpu_model as written; null when absent
  std::optional<std::vector<LibvirtHost>> hosts;  // when "hosts" is an array
};
// From a document, leniently (a document that is no object has no facts); never throws.
RunFacts run_facts(const nlohmann::json& doc);
// The same from a document read by result_from_json.
RunFacts run_facts(const RunResult& r);

// The run's accelerator: host.accelerator when it is a non-empty string, else
// comparison_key.accelerator; "" when neither is.
std::string run_accelerator(const RunResult& r);

// spec.overcommit: false when absent or no boolean.
bool spec_overcommit(const RunResult& r);

// host as the report lists it: each field and its value's scalar text (results/lenient.h), in
// key order; empty when host is no object.
std::vector<std::pair<std::string, std::string>> host_fields(const RunResult& r);
// host.accelerator_reason (why this accelerator), as scalar text.
std::string accelerator_reason(const RunResult& r);

// spec.workloads as written ([] when spec has none), for the windows of their steps.
struct SpecWorkloads {
  nlohmann::json list;

  // duration_s (seconds) of the last workload object of `list` named `name`; 0 when there is
  // none. Throws nlohmann::json::type_error (as json::value does) when such an object's name is
  // no string, or the matching one's duration_s is no number.
  double duration_s(const std::string& name) const;
};
// Throws nlohmann::json::type_error (as json::value does) when spec is present and no object.
SpecWorkloads spec_workloads(const RunResult& r);

// One row of "fidelity" (pipeline/fidelity.h FidelityRow, docs/RESULT_SCHEMA.md): how the guest
// stands for one fact of the customer's machine. Each field as written; "" when absent or no
// string.
struct FidelityFact {
  std::string fact, customer, guest;
  std::string fidelity;  // "same", "scaled" or "not reproduced"
  std::string why;       // the rule (scaled) or the reason (not reproduced); "" for same
};
// The rows of "fidelity" that are objects, in order; empty when the run has none (no customer
// machine) or it is no array. Never throws.
std::vector<FidelityFact> fidelity_facts(const RunResult& r);
// The fidelity table in one phrase, by fidelity in the order same, scaled, not reproduced, the
// scaled and not reproduced facts named: "16 facts the same, 2 scaled (CPUs,
// kernel command line), 3 not reproduced (kernel, TuneD profile, IRQs on isolated CPUs)"; a
// group with no fact is left out; "" when the run has no fidelity rows. Never throws.
std::string fidelity_summary(const RunResult& r);

// The budgets' verdict the run recorded over one variant's cells (result.json
// budgets.variants.<variant>, budgets/judge.h: "within budget", "over budget on CPU 3 by ...");
// "" when the run judged no budgets or the entry is no string. Never throws.
std::string recorded_budget_verdict(const RunResult& r, const std::string& variant);

// ---- readers of an unchecked document (before or without result_from_json)

// run_id; "" when doc is no object or run_id is absent or no string. Never throws.
std::string run_id_of(const nlohmann::json& doc);
// run_id, or `fallback` when absent. doc must be an object; throws nlohmann::json::type_error
// when run_id is no string (json::value's rule).
std::string run_id_or(const nlohmann::json& doc, const std::string& fallback);

// The strings of variant_order in order (other entries skipped); empty when doc is no object or
// variant_order is no array. Never throws.
std::vector<std::string> variant_order_of(const nlohmann::json& doc);
// variant_order's first two entries (A, B) when it is an array whose first two are strings.
std::optional<std::pair<std::string, std::string>> compared_variants(const nlohmann::json& doc);
// Whether variant_order (as variant_order_of reads it) names the variant, or variants is an
// object with that key.
bool names_variant(const nlohmann::json& doc, const std::string& variant);
// Whether variants is an object with that key.
bool records_variant(const nlohmann::json& doc, const std::string& variant);
// Whether cells is an array.
bool has_cells(const nlohmann::json& doc);

// A run that did not finish: "status" is "interrupted" or "running" (results/result.h RunStatus),
// with the number of elements of cells (0 when cells is no array).
struct UnfinishedRun {
  std::string status;
  std::size_t cells = 0;
};
// nullopt when doc is no object or its status is absent, no string or another. Never throws.
std::optional<UnfinishedRun> unfinished_run(const nlohmann::json& doc);

// What relabelling, resuming and finishing a cell needs, per element of cells (in order; none
// when cells is no array).
struct CellLabel {
  std::string variant;   // "" when absent or no string (or the cell is no object)
  bool warmup = false;   // "warmup": true
  std::string host_uri;  // host.uri; "" when absent or no string
  std::string block;     // the block it belongs to (pipeline/placement.h); "" as variant
  std::string status;    // "ok", "invalid", "failed", ...; "" as variant
};
std::vector<CellLabel> cell_labels(const nlohmann::json& doc);

// The cells' variants (strings only) in the order they first appear.
std::vector<std::string> cell_variants_of(const nlohmann::json& doc);

// When each cell began, per element of cells that is an object (in order).
struct CellStart {
  std::optional<std::string> started_at;  // UTC; nullopt when absent, empty or no string
  std::string id;                         // "" when absent
};
// Throws nlohmann::json::type_error (as json::value does) for an id that is no string.
std::vector<CellStart> cell_starts(const nlohmann::json& doc);

// What run --resume reopens of an earlier run's record (pipeline/run.cc), and the boot order
// seed a run recorded. Never throws.
struct Interruption {
  std::string at, by;  // interrupted_at (UTC), interrupted_by (signal name); "" when absent
};
struct ResumeFacts {
  std::string spec_sha256;                       // "" when absent or no string
  std::optional<std::uint64_t> boot_order_seed;  // boot_order.seed when an unsigned integer
  std::optional<Interruption> interruption;      // when status is "interrupted"
};
ResumeFacts resume_facts(const nlohmann::json& doc);

// The time of one boot (pipeline/timings.h boot_phases), per element of cells that is an object
// with "wall_seconds" (in order).
struct CellTime {
  double wall_seconds = 0;               // 0 when no number
  std::map<std::string, double> phases;  // the numeric entries of "phases" (seconds) by name
};
std::vector<CellTime> cell_times(const nlohmann::json& doc);

// The run's "timings" (pipeline/timings.h run_timings) as `isolab run` prints them; every
// number 0 and string "" when absent or of another type. Never throws.
struct TimingStage {
  std::string stage;
  double seconds = 0;
  std::vector<std::pair<std::string, double>> parts;  // "parts": (stage, seconds), in order
};
struct RecordedTimings {
  std::vector<TimingStage> stages;
  std::size_t boot_count = 0;
  double boot_seconds = 0;                    // boots.seconds
  std::map<std::string, double> boot_median;  // boots.median's numeric entries
  double total_s = 0;
};
// nullopt when doc is no object or its timings is absent or no object.
std::optional<RecordedTimings> recorded_timings(const nlohmann::json& doc);
// timings.stages as written; [] when absent or no array (the stages a resumed run keeps).
nlohmann::json timing_stages_json(const nlohmann::json& doc);

// Whether doc has a comparison_key (of any type, null included).
bool has_comparison_key(const nlohmann::json& doc);
// comparison_key as written; null when absent. doc must be an object.
nlohmann::json comparison_key_json(const nlohmann::json& doc);

// spec.compare (the spec's compare section, spec/compare_settings.h) when spec is an object that
// has one; nullptr otherwise.
const nlohmann::json* compare_section(const nlohmann::json& doc);

}  // namespace isolab::results
