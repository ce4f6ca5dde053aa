#include "history/history.h"

#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "history/equivalence.h"
#include "results/result.h"
#include "results/run_facts.h"

namespace isolab {

namespace {

struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};

// A prepared statement with 1-based bind helpers.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) {
      const std::string msg = sqlite3_errmsg(db);
      sqlite3_finalize(s);
      throw Error(std::string("history db: cannot prepare statement: ") + msg);
    }
    stmt_.reset(s);
  }
  Stmt& bind(int i, const std::string& v) {
    check(
        sqlite3_bind_text(stmt_.get(), i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Stmt& bind(int i, double v) {
    check(sqlite3_bind_double(stmt_.get(), i, v));
    return *this;
  }
  Stmt& bind(int i, std::int64_t v) {
    check(sqlite3_bind_int64(stmt_.get(), i, v));
    return *this;
  }
  Stmt& bind_null(int i) {
    check(sqlite3_bind_null(stmt_.get(), i));
    return *this;
  }
  Stmt& bind_opt(int i, const std::optional<std::string>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }
  // Returns true when a row is available.
  bool step() {
    const int rc = sqlite3_step(stmt_.get());
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw Error(std::string("history db: ") + sqlite3_errmsg(db_));
  }
  void run() {
    step();
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_.get(), col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), col)))
             : std::string();
  }
  double real(int col) const { return sqlite3_column_double(stmt_.get(), col); }
  std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_.get(), col); }
  bool is_null(int col) const { return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL; }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) throw Error(std::string("history db: bind: ") + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  std::unique_ptr<sqlite3_stmt, StmtFinalizer> stmt_;
};

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    throw Error("history db: " + msg);
  }
}

// BEGIN IMMEDIATE ... COMMIT, rolled back if not committed.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) { exec(db_, "BEGIN IMMEDIATE"); }
  void commit() {
    exec(db_, "COMMIT");
    done_ = true;
  }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }

 private:
  sqlite3* db_;
  bool done_ = false;
};

// Migration from version k to k+1 is kMigrations[k].
const char* const kMigrations[] = {
    R"sql(
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY, spec_name TEXT, spec_sha256 TEXT, started_at TEXT,
  finished_at TEXT, status TEXT, accelerator TEXT, path TEXT, result_sha256 TEXT,
  variant_a TEXT, variant_b TEXT, indexed_at TEXT);
CREATE INDEX runs_spec_started ON runs(spec_name, started_at);
CREATE TABLE run_variants (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE, variant TEXT NOT NULL,
  kernel_release TEXT, build_key TEXT, config_sha256 TEXT, PRIMARY KEY (run_id, variant));
CREATE TABLE cells (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE, cell_id TEXT NOT NULL,
  variant TEXT, repetition INTEGER, warmup INTEGER, status TEXT, failure_class TEXT,
  reason TEXT, PRIMARY KEY (run_id, cell_id));
CREATE TABLE cell_values (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE, cell_id TEXT NOT NULL,
  variant TEXT NOT NULL, metric TEXT NOT NULL, unit TEXT, better TEXT, value REAL NOT NULL,
  PRIMARY KEY (run_id, cell_id, metric));
CREATE INDEX cell_values_metric ON cell_values(metric, variant);
CREATE TABLE comparisons (
  run_id TEXT NOT NULL, baseline_run_id TEXT NOT NULL, variant_a TEXT NOT NULL,
  variant_b TEXT NOT NULL, regressions INTEGER NOT NULL, forced INTEGER NOT NULL,
  summary_json TEXT, recorded_at TEXT,
  PRIMARY KEY (run_id, baseline_run_id, variant_a, variant_b));
)sql",
    // 1 -> 2: whether B was equivalent to A (history/equivalence.h); NULL for records made
    // before it was kept.
    "ALTER TABLE comparisons ADD COLUMN equivalent INTEGER;",
};
static_assert(std::size(kMigrations) == HistoryDb::kSchemaVersion);

int read_schema_version(sqlite3* db) {
  Stmt has(db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'");
  has.step();
  if (has.integer(0) == 0) return 0;
  Stmt q(db, "SELECT value FROM meta WHERE key='schema_version'");
  if (!q.step()) return 0;
  const std::string v = q.text(0);
  try {
    return std::stoi(v);
  } catch (...) {
    throw Error("history db: meta.schema_version is not a number: " + sanitize_excerpt(v, 40));
  }
}

std::string now_utc() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

void HistoryDb::Closer::operator()(sqlite3* db) const { sqlite3_close_v2(db); }

HistoryDb::HistoryDb(std::unique_ptr<sqlite3, Closer> db, std::filesystem::path path)
    : db_(std::move(db)), path_(std::move(path)) {}
HistoryDb::HistoryDb(HistoryDb&&) noexcept = default;
HistoryDb& HistoryDb::operator=(HistoryDb&&) noexcept = default;
HistoryDb::~HistoryDb() = default;

HistoryDb HistoryDb::open(const std::filesystem::path& db_path) {
  if (db_path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(db_path.parent_path(), ec);
  }
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(db_path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<sqlite3, Closer> db(raw);
  if (rc != SQLITE_OK) {
    throw Error("history db " + db_path.string() +
                ": cannot open: " + (raw ? sqlite3_errmsg(raw) : "out of memory"));
  }
  sqlite3_busy_timeout(db.get(), 5000);
  try {
    exec(db.get(), "PRAGMA foreign_keys = ON");
    exec(db.get(), "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)");
    int version = read_schema_version(db.get());
    if (version > kSchemaVersion) {
      throw Error("schema version " + std::to_string(version) +
                  " is newer than this isolab supports (" + std::to_string(kSchemaVersion) + ")");
    }
    if (version < 0) throw Error("negative schema version " + std::to_string(version));
    while (version < kSchemaVersion) {
      Transaction tx(db.get());
      exec(db.get(), kMigrations[version]);
      ++version;
      Stmt(db.get(), "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?1)")
          .bind(1, std::to_string(version))
          .run();
      tx.commit();
    }
  } catch (const Error& e) {
    throw Error("history db " + db_path.string() + ": " + e.what());
  }
  return HistoryDb(std::move(db), db_path);
}

HistoryDb HistoryDb::open_in(const std::filesystem::path& results_dir) {
  return open(results_dir / "isolab.db");
}

int HistoryDb::schema_version() const { return read_schema_version(db_.get()); }

namespace {

// The runs row. The accelerator is the host's, else the comparison key's.
void insert_run(sqlite3* h, const results::RunResult& r, const std::vector<std::string>& variants,
                const std::filesystem::path& run_dir, const std::string& sha) {
  const std::string accelerator = results::run_accelerator(r);
  const std::string status = r.status ? std::string(results::to_string(*r.status)) : "";
  Stmt(h,
       "INSERT OR REPLACE INTO runs(run_id, spec_name, spec_sha256, started_at, finished_at, "
       "status, accelerator, path, result_sha256, variant_a, variant_b, indexed_at) "
       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)")
      .bind(1, *r.run_id)
      .bind(2, r.spec_name.value_or(""))
      .bind(3, r.spec_sha256.value_or(""))
      .bind(4, r.started_at.value_or(""))
      .bind(5, r.finished_at.value_or(""))
      .bind(6, status)
      .bind(7, accelerator)
      .bind(8, run_dir.string())
      .bind(9, sha)
      .bind(10, !variants.empty() ? variants[0] : std::string())
      .bind(11, variants.size() > 1 ? variants[1] : std::string())
      .bind(12, now_utc())
      .run();
}

// One run_variants row per variant ("" for what a variant does not record).
void insert_variants(sqlite3* h, const results::RunResult& r,
                     const std::vector<std::string>& variants) {
  Stmt ins(h,
           "INSERT OR REPLACE INTO run_variants(run_id, variant, kernel_release, "
           "build_key, config_sha256) VALUES (?1, ?2, ?3, ?4, ?5)");
  for (const auto& v : variants) {
    const results::VariantRecord none;
    const results::VariantRecord* vr = r.variant(v) ? r.variant(v) : &none;
    ins.bind(1, *r.run_id)
        .bind(2, v)
        .bind(3, vr->kernel_release.value_or(""))
        .bind(4, vr->build_key.value_or(""))
        .bind(5, vr->config_sha256.value_or(""))
        .run();
  }
}

// One cells row per cell, whatever its status ("cell <i>" for a cell without an id).
void insert_cells(sqlite3* h, const results::RunResult& r) {
  Stmt ins(h,
           "INSERT OR REPLACE INTO cells(run_id, cell_id, variant, repetition, warmup, "
           "status, failure_class, reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  for (std::size_t i = 0; i < r.cells.size(); ++i) {
    const results::CellRecord& c = r.cells[i];
    ins.bind(1, *r.run_id).bind(2, c.id_or("cell " + std::to_string(i)));
    ins.bind(3, c.variant.value_or(""));
    if (c.repetition)
      ins.bind(4, *c.repetition);
    else
      ins.bind_null(4);
    ins.bind(5, std::int64_t{c.is_warmup()})
        .bind(6, c.status ? std::string(results::to_string(*c.status)) : "")
        .bind(7, c.failure_class_name())
        .bind(8, c.reason.value_or(""))
        .run();
  }
}

// The cell_values rows: each contributing cell's aggregate of each metric.
void insert_values(sqlite3* h, const std::string& run_id, const std::vector<VariantData>& data) {
  Stmt ins(h,
           "INSERT OR REPLACE INTO cell_values(run_id, cell_id, variant, metric, unit, "
           "better, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  for (const auto& d : data)
    for (const auto& [metric, s] : d.metrics)
      for (std::size_t k = 0; k < s.values.size(); ++k)
        ins.bind(1, run_id)
            .bind(2, s.cell_ids[k])
            .bind(3, d.variant)
            .bind(4, metric)
            .bind(5, s.unit)
            .bind(6, s.better)
            .bind(7, s.values[k])
            .run();
}

}  // namespace

bool index_run(HistoryDb& db, const nlohmann::json& result, const std::filesystem::path& run_dir) {
  if (!result.is_object()) throw Error("index: result.json top level must be an object");
  const std::string run_id = results::run_id_of(result);
  if (run_id.empty()) throw SpecError("/run_id", "result.json has no run_id");
  const std::string sha =
      sha256_hex(result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  sqlite3* h = db.handle();
  {
    Stmt q(h, "SELECT result_sha256, path FROM runs WHERE run_id = ?1");
    q.bind(1, run_id);
    if (q.step() && q.text(0) == sha && q.text(1) == run_dir.string()) return false;
  }
  // Read and gather everything first so a malformed document writes nothing.
  const results::RunResult r = results::result_from_json(result);
  const std::vector<std::string> variants = r.variant_names();
  std::vector<VariantData> data;
  for (const auto& v : variants) data.push_back(extract_variant(r, v));

  Transaction tx(h);
  Stmt(h, "DELETE FROM cell_values WHERE run_id = ?1").bind(1, run_id).run();
  Stmt(h, "DELETE FROM cells WHERE run_id = ?1").bind(1, run_id).run();
  Stmt(h, "DELETE FROM run_variants WHERE run_id = ?1").bind(1, run_id).run();
  insert_run(h, r, variants, run_dir, sha);
  insert_variants(h, r, variants);
  insert_cells(h, r);
  insert_values(h, run_id, data);
  tx.commit();
  return true;
}

void record_comparison(HistoryDb& db, const Comparison& c, const nlohmann::json& summary) {
  Stmt(db.handle(),
       "INSERT OR REPLACE INTO comparisons(run_id, baseline_run_id, variant_a, variant_b, "
       "regressions, forced, summary_json, recorded_at, equivalent) "
       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
      .bind(1, c.run_b)
      .bind(2, c.run_a)
      .bind(3, c.variant_a)
      .bind(4, c.variant_b)
      .bind(5, static_cast<std::int64_t>(c.regressions()))
      .bind(6, std::int64_t{c.forced})
      .bind(7, json_text(summary))
      .bind(8, now_utc())
      .bind(9, std::int64_t{not_equivalent_reason(c).empty()})
      .run();
}

std::vector<HistoryRow> history(HistoryDb& db, const std::string& metric,
                                const std::optional<std::string>& variant,
                                const std::optional<std::string>& spec_name) {
  Stmt q(db.handle(),
         "SELECT r.run_id, r.started_at, v.variant, v.value, v.unit, v.better, r.accelerator "
         "FROM cell_values v "
         "JOIN runs r ON r.run_id = v.run_id "
         "JOIN cells c ON c.run_id = v.run_id AND c.cell_id = v.cell_id "
         "WHERE v.metric = ?1 AND (?2 IS NULL OR v.variant = ?2) "
         "AND (?3 IS NULL OR r.spec_name = ?3) AND c.status = 'ok' AND c.warmup = 0 "
         "ORDER BY r.started_at, r.run_id, v.variant");
  q.bind(1, metric).bind_opt(2, variant).bind_opt(3, spec_name);
  std::vector<HistoryRow> rows;
  std::vector<std::vector<double>> samples;
  while (q.step()) {
    const std::string run = q.text(0), var = q.text(2);
    if (rows.empty() || rows.back().run_id != run || rows.back().variant != var) {
      HistoryRow r;
      r.run_id = run;
      r.started_at = q.text(1);
      r.variant = var;
      r.unit = q.text(4);
      r.better = q.text(5);
      r.accelerator = q.text(6);
      rows.push_back(r);
      samples.emplace_back();
    }
    samples.back().push_back(q.real(3));
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].n = samples[i].size();
    rows[i].median = median_of(samples[i]);
  }
  return rows;
}

namespace {

// The first run the query `where_order` (after the complete runs of spec ?1 with variant ?2)
// selects.
std::optional<RunRef> first_run(HistoryDb& db, const std::string& spec_name,
                                const std::string& variant, const char* where_order) {
  const std::string sql =
      std::string(
          "SELECT r.run_id, r.started_at, r.path FROM runs r "
          "WHERE r.spec_name = ?1 AND r.status = 'complete' "
          "AND EXISTS (SELECT 1 FROM run_variants rv WHERE rv.run_id = r.run_id "
          "            AND rv.variant = ?2) ") +
      where_order;
  Stmt q(db.handle(), sql.c_str());
  q.bind(1, spec_name).bind(2, variant);
  if (!q.step()) return std::nullopt;
  return RunRef{q.text(0), q.text(1), q.text(2)};
}

}  // namespace

std::optional<RunRef> last_good_run(HistoryDb& db, const std::string& spec_name,
                                    const std::string& variant) {
  // The newest run whose variant was found equivalent to its baseline (a record of schema 1
  // counts when it had no regression).
  if (auto moved = first_run(db, spec_name, variant,
                             "AND EXISTS (SELECT 1 FROM comparisons c WHERE c.run_id = r.run_id "
                             "  AND c.variant_b = ?2 AND (c.equivalent = 1 OR "
                             "  (c.equivalent IS NULL AND c.regressions = 0))) "
                             "ORDER BY r.started_at DESC, r.run_id DESC LIMIT 1"))
    return moved;
  // Else the anchor: the oldest run that no recorded comparison found regressed.
  return first_run(db, spec_name, variant,
                   "AND NOT EXISTS (SELECT 1 FROM comparisons c WHERE c.run_id = r.run_id "
                   "  AND c.regressions > 0) "
                   "ORDER BY r.started_at ASC, r.run_id ASC LIMIT 1");
}

}  // namespace isolab
