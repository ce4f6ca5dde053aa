// The result.json model: one typed document per run, written by `isolab run`
// (pipeline/run.cc, pipeline/cell.cc) and `isolab import` (pipeline/import.cc) through
// write_result(), and read through result_from_json(). docs/RESULT_SCHEMA.md describes every
// field.
//
// Typed here: the fields the writers build and the readers branch on (ids, variants, cell
// status and failure class, repetition, warm-up, accelerator, the variant's kernel). Left as
// nlohmann::json inside the records, because their shape is open-ended per workload or per tool
// and typing them would change what is written: cells[].metrics (parse/metrics.h Metric objects
// by name), cells[].histograms, the per-workload blobs (noise, notes, latency_traces,
// insn_counts, ...), spec, host, hosts, comparison_key, and variants.<v>.build_warnings. Every
// field without a typed member is kept in the record's `rest` object, so that reading a document
// and writing it back gives the same JSON (with "schema_version" added when the document had
// none). Key order is nlohmann::json's: sorted, as it always was.
//
// Other areas read those open-ended parts only through the readers beside this file, each with
// its checks: metric_record.h (a cell's metrics), histogram.h (its histograms), cell_facts.h (the
// rest of a cell), variant_facts.h (a variant's build, patches, booted kernel) and run_facts.h
// (the run's comparison key, host, spec, and what is read of a document before
// result_from_json).
//
// Optional members: std::nullopt means the field is absent. Nullable<T> members are JSON null
// when the inner optional is empty ("failure_class": null in a cell that did not fail).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isolab::results {

// The schema this isolab writes and reads; a document without "schema_version" is read as 1.
inline constexpr int kSchemaVersion = 1;

// JSON null <-> std::nullopt.
template <typename T>
using Nullable = std::optional<T>;

// cells[].status.
enum class CellStatus { ok, invalid, failed };
std::string_view to_string(CellStatus s);
std::optional<CellStatus> cell_status_from_string(std::string_view s);

// cells[].failure_class of a failed cell: build (the variant's kernel did not build), boot,
// panic, oops, warning, rcu_stall, lockup (the kernel's fault: compare weighs them against B),
// infrastructure (QEMU, pinning, a starved guest: retried), configuration (QEMU refused the
// topology), workload, timeout, host_lost (no libvirt host left to run the cell).
enum class FailureClass {
  build,
  boot,
  panic,
  oops,
  warning,
  rcu_stall,
  lockup,
  infrastructure,
  configuration,
  workload,
  timeout,
  host_lost
};
std::string_view to_string(FailureClass c);
std::optional<FailureClass> failure_class_from_string(std::string_view s);

// The run's "status": running (being measured), interrupted (a signal stopped it; --resume
// continues it), failed (no measured cell ok), partial (some measured cell not ok), complete.
enum class RunStatus { running, interrupted, failed, partial, complete };
std::string_view to_string(RunStatus s);
std::optional<RunStatus> run_status_from_string(std::string_view s);

// One element of "cells" (or "superseded_cells"): one boot of one variant, or one imported file.
struct CellRecord {
  std::optional<std::string> id;       // "<variant>-r<k>" ("-w<k>" for a warm-up)
  std::optional<std::string> variant;  // a key of "variants"
  std::optional<std::int64_t> repetition;
  std::optional<bool> warmup;
  std::optional<std::int64_t> attempt;  // 1..3: the boot of the cell that is recorded
  std::optional<CellStatus> status;     // absent only while the cell is being measured
  std::optional<Nullable<FailureClass>> failure_class;  // null unless status is failed
  std::optional<std::string> reason;                    // "" when ok
  std::optional<std::string> accelerator;               // "kvm", "tcg" or "bare-metal"
  std::optional<std::string> raw_dir;                   // run-dir relative: cells/<id>
  std::optional<Nullable<bool>> overcommitted;          // null on a remote (libvirt host) slot
  std::optional<std::string> block;                     // multi-host runs: the block of the cell
  // Name -> metric object (parse/metrics.h to_json(Metric)); units are the metrics' own "unit".
  std::optional<nlohmann::json> metrics;
  std::optional<nlohmann::json> histograms;        // name -> parse/cyclictest histogram object
  nlohmann::json rest = nlohmann::json::object();  // every other field, as written

  // Convenience readings with the defaults compare, history and report use.
  std::string id_or(const std::string& fallback) const { return id.value_or(fallback); }
  bool is_warmup() const { return warmup.value_or(false); }
  bool is_ok() const { return status == CellStatus::ok; }
  // The failure class name, "" when absent or null.
  std::string failure_class_name() const;
  // rest[key] when present, else null.
  const nlohmann::json& field(const std::string& key) const;
};

// One element of "variants": the variant's kernel (or why it did not build).
struct VariantRecord {
  std::optional<std::string> kernel_release;     // uname -r of the built kernel
  std::optional<std::string> build_key;          // kernel/cache.h key of the build
  std::optional<std::string> config_sha256;      // of the final .config
  std::optional<std::string> build_error;        // set instead of the above when the build failed
  std::optional<std::string> cmdline;            // the guest command line of the variant
  std::optional<nlohmann::json> patches;         // [{"path", "sha256", "subject"}]
  std::optional<nlohmann::json> build_warnings;  // kernel/build_log.h JSON array, or null
  std::optional<nlohmann::json> touched_files;   // sorted file paths the patches change
  nlohmann::json rest = nlohmann::json::object();
};

// The whole document.
struct RunResult {
  int schema_version = kSchemaVersion;  // written always; 1 when the document had none
  std::optional<std::string> run_id;    // "<UTC>-<spec name>-<token>" or "<UTC>-<label>-import"
  std::optional<std::string> spec_name;
  std::optional<std::string> spec_sha256;  // sha256 of the compact spec JSON
  std::optional<std::string> started_at;   // UTC, ISO 8601
  std::optional<std::string> finished_at;
  std::optional<RunStatus> status;
  std::optional<nlohmann::json> spec;            // the spec as given (or the import's)
  std::optional<nlohmann::json> host;            // results/host.h host_fingerprint and more
  std::optional<nlohmann::json> comparison_key;  // what two runs must share to be compared
  std::optional<std::vector<std::string>> variant_order;
  std::optional<std::map<std::string, VariantRecord>> variants;
  std::vector<CellRecord> cells;
  nlohmann::json rest = nlohmann::json::object();

  // variant_order, then the other keys of variants, then the cells' variants not named yet,
  // each once ("" for a cell without one is skipped).
  std::vector<std::string> variant_names() const;
  // variants[name], or nullptr.
  const VariantRecord* variant(const std::string& name) const;
};

// A cell that never booted: its variant's kernel did not build (FailureClass::build), or no
// libvirt host was left to run it (host_lost). Status failed, the class and reason, empty
// metrics.
CellRecord unbooted_cell(const std::string& id, const std::string& variant, int repetition,
                         bool warmup, FailureClass failure, const std::string& reason);

// Writers. to_json gives the document (its "schema_version" is always kSchemaVersion);
// write_result writes it atomically to `file` with `indent` spaces per level and a final
// newline, replacing invalid UTF-8 by U+FFFD (base/json_text.h). Throws isolab::Error when the
// file cannot be written.
nlohmann::json to_json(const CellRecord& c);
nlohmann::json to_json(const VariantRecord& v);
nlohmann::json to_json(const RunResult& r);
void write_result(const std::filesystem::path& file, const RunResult& r, int indent);

// Readers. `pointer` is the JSON pointer of the value, for errors. Throws isolab::Error
// "result.json: top level must be an object" for a document that is not an object, and
// isolab::SpecError with the pointer of the bad field otherwise: "/schema_version" when it is
// not 1, "/cells" when there is no cells array, a cell or variant that is not an object, a typed
// field of the wrong JSON type, a "status" that is not ok/invalid/failed (or, for the run,
// running/interrupted/failed/partial/complete), an unknown "failure_class".
CellRecord cell_from_json(const nlohmann::json& j, const std::string& pointer);
VariantRecord variant_from_json(const nlohmann::json& j, const std::string& pointer);
RunResult result_from_json(const nlohmann::json& j);
// Parses and reads `file` (read_json_file's limits and errors, results/result_file.h); the
// readers' errors are prefixed with the file name.
RunResult read_result(const std::filesystem::path& file);

}  // namespace isolab::results
