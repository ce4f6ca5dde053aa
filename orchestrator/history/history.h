// Run history: an embedded SQLite database at <results_dir>/isolab.db.
//
// Schema (version 2; `meta` table key/value with key 'schema_version'; migrations run in order
// from the version found, 0 meaning a new or empty file, each in one transaction):
//   runs(run_id PK, spec_name, spec_sha256, started_at, finished_at, status, accelerator, path,
//        result_sha256, variant_a, variant_b, indexed_at)
//   run_variants(run_id, variant, kernel_release, build_key, config_sha256; PK run_id+variant)
//   cells(run_id, cell_id, variant, repetition, warmup, status, failure_class, reason;
//         PK run_id+cell_id)
//   cell_values(run_id, cell_id, metric, unit, better, value; PK run_id+cell_id+metric):
//         aggregate(values) of each metric of each contributing cell (status ok, not warmup),
//         as extract_variant() computes it
//   comparisons(run_id, baseline_run_id, variant_a, variant_b, regressions, forced,
//         summary_json, recorded_at, equivalent; PK run_id+baseline_run_id+variant_a+variant_b):
//         baseline_run_id = run_id for a one-run comparison; equivalent 1 when B was
//         equivalent to A (history/equivalence.h), 0 when not, NULL for a record of schema 1
// All SQL uses prepared statements with bound values.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare.h"

struct sqlite3;

namespace isolab {

// An open history database (RAII: closes on destruction). Not thread-safe.
class HistoryDb {
 public:
  static constexpr int kSchemaVersion = 2;

  // Opens or creates the database file and migrates it to kSchemaVersion. Throws isolab::Error
  // naming the path when it cannot be opened, is not an SQLite database, or has a newer schema
  // version than this isolab knows.
  static HistoryDb open(const std::filesystem::path& db_path);
  // open(results_dir / "isolab.db").
  static HistoryDb open_in(const std::filesystem::path& results_dir);

  HistoryDb(HistoryDb&&) noexcept;
  HistoryDb& operator=(HistoryDb&&) noexcept;
  ~HistoryDb();

  int schema_version() const;
  sqlite3* handle() const { return db_.get(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  struct Closer {
    void operator()(sqlite3* db) const;
  };
  HistoryDb(std::unique_ptr<sqlite3, Closer> db, std::filesystem::path path);
  std::unique_ptr<sqlite3, Closer> db_;
  std::filesystem::path path_;
};

// Indexes one result.json (idempotent: re-indexing the same run_id replaces its runs,
// run_variants, cells and cell_values rows in one transaction; recorded comparisons are kept).
// run_dir is stored as the run's path. Returns false when the run was already indexed with the
// same result.json content (sha256 of its canonical dump) and nothing was written. Throws
// isolab::Error for a document without a run_id, or as extract_variant does.
bool index_run(HistoryDb& db, const nlohmann::json& result, const std::filesystem::path& run_dir);

// Records the outcome of a comparison of run c.run_b against c.run_a (regressions count, forced,
// summary JSON: the "summary" object of report/json.h render_json(c), and whether B was
// equivalent to A). Replaces an earlier record of the same pair and variants.
void record_comparison(HistoryDb& db, const Comparison& c, const nlohmann::json& summary);

struct HistoryRow {
  std::string run_id;
  std::string started_at;
  std::string variant;
  std::size_t n = 0;  // ok, non-warmup cells with a value
  double median = 0;
  std::string unit;
  std::string better;       // the metric's "better" ("lower", "higher", "")
  std::string accelerator;  // the run's (runs.accelerator)
};

// Trend of one metric: one row per (run, variant) that has values, ordered by started_at then
// run_id then variant; only ok, non-warmup cells count. variant / spec_name filter when given.
std::vector<HistoryRow> history(HistoryDb& db, const std::string& metric,
                                const std::optional<std::string>& variant = std::nullopt,
                                const std::optional<std::string>& spec_name = std::nullopt);

struct RunRef {
  std::string run_id;
  std::string started_at;
  std::string path;
};

// The baseline of a nightly job: among the complete runs of spec_name that have the variant,
// the newest one whose variant a recorded comparison (as B) found equivalent to its own baseline
// (history/equivalence.h; a record of schema 1, made before equivalence was kept, counts when it
// had no regression); when there is none, the anchor: the oldest run for which no recorded
// comparison has regressions > 0. So the baseline moves only on equivalence: a night that is
// inconclusive, or changed within the margin, leaves it where it was. nullopt when there is none.
std::optional<RunRef> last_good_run(HistoryDb& db, const std::string& spec_name,
                                    const std::string& variant);

}  // namespace isolab
