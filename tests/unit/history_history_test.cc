#include "cli/history.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <random>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "calibrate/calibrate.h"
#include "calibrate/calibration_json.h"
#include "cli/calibrate.h"
#include "cli/compare.h"
#include "compare/noise_floors.h"
#include "history/cusum.h"
#include "history/equivalence.h"
#include "history/history.h"
#include "report/history.h"
#include "report/json.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

nlohmann::json cell(const std::string& variant, int rep, double cycles,
                    const std::string& status = "ok") {
  return {
      {"id", variant + "-r" + std::to_string(rep)},
      {"variant", variant},
      {"repetition", rep},
      {"warmup", false},
      {"status", status},
      {"accelerator", "kvm"},  // under TCG the 4-10% shifts below would be within 25%
      {"metrics",
       {{"vmstat-syscall.cycles_per_syscall",
         {{"unit", "cycles"}, {"better", "lower"}, {"aggregate", "mean"}, {"values", {cycles}}}}}}};
}

// The spec's compare section of these runs: cycles per syscall is the primary metric (the exit
// status rests on it; without it no metric sets exit status 1).
nlohmann::json compare_section() {
  return {{"primary", {{{"metric", "vmstat-syscall.cycles_per_syscall"}, {"bad", "higher"}}}}};
}

// cycles[v] are the per-cell values of variant v (vanilla, patched).
nlohmann::json run_doc(const std::string& id, const std::string& started,
                       const std::vector<double>& vanilla, const std::vector<double>& patched,
                       const std::string& status = "complete") {
  nlohmann::json cells = nlohmann::json::array();
  for (std::size_t i = 0; i < vanilla.size(); ++i) cells.push_back(cell("vanilla", i, vanilla[i]));
  for (std::size_t i = 0; i < patched.size(); ++i) cells.push_back(cell("patched", i, patched[i]));
  return {{"schema_version", 1},
          {"run_id", id},
          {"spec_name", "vmstat-nohz"},
          {"spec_sha256", "s1"},
          {"started_at", started},
          {"status", status},
          {"host", {{"accelerator", "kvm"}}},
          {"spec", {{"compare", compare_section()}}},
          {"comparison_key", {{"accelerator", "kvm"}, {"vcpus", 2}}},
          {"variants",
           {{"vanilla", {{"kernel_release", "6.1.158-a"}, {"build_key", "k1"}}},
            {"patched", {{"kernel_release", "6.1.158-b"}, {"build_key", "k2"}}}}},
          {"variant_order", {"vanilla", "patched"}},
          {"cells", cells}};
}

class HistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("isolab-history-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(HistoryTest, NewDatabaseIsMigratedToTheCurrentSchema) {
  HistoryDb db = HistoryDb::open_in(dir_);
  EXPECT_EQ(db.path(), dir_ / "isolab.db");
  EXPECT_EQ(db.schema_version(), HistoryDb::kSchemaVersion);
  // Reopening does not migrate again.
  HistoryDb again = HistoryDb::open_in(dir_);
  EXPECT_EQ(again.schema_version(), HistoryDb::kSchemaVersion);
}

// A database of schema 1 (comparisons without the equivalent column) is migrated on open; its
// records count as they did: a comparison without regression moves the baseline.
TEST_F(HistoryTest, Schema1DatabaseIsMigratedAndItsRecordsKeepTheirMeaning) {
  std::vector<double> base = {7400, 7410, 7390, 7405, 7395};
  {
    HistoryDb db = HistoryDb::open_in(dir_);
    for (const auto& r : {run_doc("run-1", "2026-11-27T03:00:00Z", base, base),
                          run_doc("run-2", "2026-11-28T03:00:00Z", base, base)})
      index_run(db, r, dir_ / r["run_id"].get<std::string>());
    auto c = compare_run_variants(run_doc("run-2", "2026-11-28T03:00:00Z", base, base),
                                  settings_from_json(compare_section()));
    record_comparison(db, c, render_json(c)["summary"]);
    ASSERT_EQ(sqlite3_exec(db.handle(),
                           "ALTER TABLE comparisons DROP COLUMN equivalent; "
                           "UPDATE meta SET value='1' WHERE key='schema_version'",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  HistoryDb db = HistoryDb::open_in(dir_);
  EXPECT_EQ(db.schema_version(), HistoryDb::kSchemaVersion);
  ASSERT_TRUE(last_good_run(db, "vmstat-nohz", "patched"));
  EXPECT_EQ(last_good_run(db, "vmstat-nohz", "patched")->run_id, "run-2");
}

TEST_F(HistoryTest, NewerSchemaAndNonDatabaseFilesAreRefused) {
  {
    HistoryDb db = HistoryDb::open_in(dir_);
    sqlite3_exec(db.handle(), "UPDATE meta SET value='7' WHERE key='schema_version'", nullptr,
                 nullptr, nullptr);
  }
  try {
    HistoryDb::open_in(dir_);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("schema version 7 is newer"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("isolab.db"));
  }
  write_file_atomic(dir_ / "junk.db", std::string(4096, 'x'));
  EXPECT_THROW(HistoryDb::open(dir_ / "junk.db"), Error);
}

TEST_F(HistoryTest, IndexTwoRunsAndQueryTheTrend) {
  HistoryDb db = HistoryDb::open_in(dir_);
  const auto r1 = run_doc("run-1", "2026-11-28T03:00:00Z", {7400, 7410, 7390}, {7000, 7010});
  auto r2 = run_doc("run-2", "2026-11-29T03:00:00Z", {7500, 7520, 7480}, {6900, 6950, 6910});
  r2["cells"].push_back(cell("patched", 9, 99999, "invalid"));  // does not count
  EXPECT_TRUE(index_run(db, r2, dir_ / "run-2"));
  EXPECT_TRUE(index_run(db, r1, dir_ / "run-1"));
  EXPECT_FALSE(index_run(db, r1, dir_ / "run-1"));  // unchanged: nothing written

  const auto rows = history(db, "vmstat-syscall.cycles_per_syscall");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].run_id, "run-1");
  EXPECT_EQ(rows[0].variant, "patched");
  EXPECT_EQ(rows[0].n, 2u);
  EXPECT_DOUBLE_EQ(rows[0].median, 7005);
  EXPECT_EQ(rows[1].variant, "vanilla");
  EXPECT_DOUBLE_EQ(rows[1].median, 7400);
  EXPECT_EQ(rows[2].run_id, "run-2");
  EXPECT_EQ(rows[2].n, 3u);
  EXPECT_DOUBLE_EQ(rows[2].median, 6910);
  EXPECT_EQ(rows[3].started_at, "2026-11-29T03:00:00Z");
  EXPECT_EQ(rows[3].unit, "cycles");

  const auto vanilla = history(db, "vmstat-syscall.cycles_per_syscall", "vanilla");
  ASSERT_EQ(vanilla.size(), 2u);
  EXPECT_DOUBLE_EQ(vanilla[1].median, 7500);
  EXPECT_TRUE(history(db, "vmstat-syscall.cycles_per_syscall", std::nullopt, "other").empty());
  EXPECT_TRUE(history(db, "no.such_metric").empty());

  const std::string text = render_history_text("vmstat-syscall.cycles_per_syscall", rows);
  EXPECT_THAT(text, HasSubstr("run-2"));
  EXPECT_THAT(text, HasSubstr("6910"));
  EXPECT_EQ(history_to_json("m", rows)["rows"][0]["median"], 7005);
}

TEST_F(HistoryTest, ReindexingAChangedRunReplacesItsRows) {
  HistoryDb db = HistoryDb::open_in(dir_);
  auto r = run_doc("run-1", "2026-11-28T03:00:00Z", {7400, 7410, 7390}, {});
  index_run(db, r, dir_ / "run-1");
  r["cells"].erase(r["cells"].begin());
  EXPECT_TRUE(index_run(db, r, dir_ / "run-1"));
  const auto rows = history(db, "vmstat-syscall.cycles_per_syscall", "vanilla");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].n, 2u);
  EXPECT_DOUBLE_EQ(rows[0].median, 7400);
}

TEST_F(HistoryTest, LastGoodRunSkipsPartialAndRegressedRuns) {
  HistoryDb db = HistoryDb::open_in(dir_);
  std::vector<double> base = {7400, 7410, 7390, 7405, 7395};
  std::vector<double> slow;
  for (double x : base) slow.push_back(x * 1.1);
  const auto good = run_doc("run-1", "2026-11-27T03:00:00Z", base, base);
  const auto partial = run_doc("run-2", "2026-11-28T03:00:00Z", base, base, "partial");
  const auto regressed = run_doc("run-3", "2026-11-29T03:00:00Z", base, slow);
  for (const auto& r : {good, partial, regressed}) {
    index_run(db, r, dir_ / r["run_id"].get<std::string>());
  }
  // Before any verdict is recorded the oldest complete run is the baseline (the anchor).
  ASSERT_TRUE(last_good_run(db, "vmstat-nohz", "patched"));
  EXPECT_EQ(last_good_run(db, "vmstat-nohz", "patched")->run_id, "run-1");
  const Comparison c = compare_run_variants(regressed, settings_from_json(compare_section()));
  ASSERT_EQ(c.regressions(), 1u);
  record_comparison(db, c, render_json(c)["summary"]);
  const auto last = last_good_run(db, "vmstat-nohz", "patched");
  ASSERT_TRUE(last);
  EXPECT_EQ(last->run_id, "run-1");
  EXPECT_EQ(last->path, (dir_ / "run-1").string());
  EXPECT_FALSE(last_good_run(db, "vmstat-nohz", "nonesuch"));
  EXPECT_FALSE(last_good_run(db, "other-spec", "patched"));
}

// Nights of one spec, each comparing tonight's patched kernel with the baseline: the baseline
// moves only to a night found equivalent ("no significant change" on every primary). A night
// 1% slower than its baseline (significant, inside the 2% margin: changed, below threshold) or
// too spread to tell (inconclusive) leaves it where it was, so such nights cannot add up.
TEST_F(HistoryTest, BaselineMovesOnlyOnEquivalence) {
  HistoryDb db = HistoryDb::open_in(dir_);
  const std::vector<double> base = {7400, 7410, 7390, 7405, 7395};
  std::vector<double> slower;
  for (double x : base) slower.push_back(x * 1.01);
  const std::vector<double> spread = {7000, 7800, 7400, 6900, 7900};
  const auto settings = settings_from_json(compare_section());
  auto night = [&](const std::string& id, const std::string& day, const std::vector<double>& b) {
    const auto r = run_doc(id, "2026-11-" + day + "T03:00:00Z", base, b);
    index_run(db, r, dir_ / id);
    const Comparison c = compare_run_variants(r, settings);
    record_comparison(db, c, render_json(c)["summary"]);
    return c;
  };
  const auto anchor = run_doc("night-0", "2026-11-20T03:00:00Z", base, base);
  index_run(db, anchor, dir_ / "night-0");
  auto baseline = [&] { return last_good_run(db, "vmstat-nohz", "patched")->run_id; };
  ASSERT_TRUE(last_good_run(db, "vmstat-nohz", "patched"));
  EXPECT_EQ(baseline(), "night-0");

  const Comparison below = night("night-1", "21", slower);
  EXPECT_EQ(compare_exit_status(below), 0);
  EXPECT_EQ(not_equivalent_reason(below),
            "vmstat-syscall.cycles_per_syscall is changed, below threshold");
  EXPECT_EQ(baseline(), "night-0");

  const Comparison same = night("night-2", "22", base);
  EXPECT_EQ(not_equivalent_reason(same), "");
  EXPECT_EQ(baseline(), "night-2");

  const Comparison wide = night("night-3", "23", spread);
  EXPECT_EQ(not_equivalent_reason(wide), "vmstat-syscall.cycles_per_syscall is inconclusive");
  EXPECT_EQ(baseline(), "night-2");
}

TEST_F(HistoryTest, IndexRejectsDocumentsWithoutRunIdWithoutWriting) {
  HistoryDb db = HistoryDb::open_in(dir_);
  auto r = run_doc("run-1", "2026-11-28T03:00:00Z", {1, 2, 3}, {});
  r.erase("run_id");
  EXPECT_THROW(index_run(db, r, dir_), SpecError);
  auto bad = run_doc("run-2", "2026-11-28T03:00:00Z", {1, 2, 3}, {});
  bad["cells"][0]["metrics"]["vmstat-syscall.cycles_per_syscall"]["values"][0] = "x";
  EXPECT_THROW(index_run(db, bad, dir_), SpecError);
  EXPECT_TRUE(history(db, "vmstat-syscall.cycles_per_syscall").empty());
}

TEST_F(HistoryTest, CommandScansTheResultsDirectory) {
  write_file_atomic(dir_ / "run-1" / "result.json",
                    run_doc("run-1", "2026-11-28T03:00:00Z", {7400, 7410, 7390}, {}).dump());
  write_file_atomic(dir_ / "run-2" / "result.json",
                    run_doc("run-2", "2026-11-29T03:00:00Z", {7500, 7520, 7480}, {}).dump());
  write_file_atomic(dir_ / "broken" / "result.json", "{not json");
  HistoryCommandOptions o;
  o.results_dir = dir_;
  o.metric = "vmstat-syscall.cycles_per_syscall";
  o.variant = "vanilla";
  std::ostringstream out, err;
  EXPECT_EQ(history_command(o, out, err), 0);
  EXPECT_THAT(err.str(), HasSubstr("skipping"));
  EXPECT_THAT(err.str(), HasSubstr("broken"));
  EXPECT_THAT(out.str(), HasSubstr("run-1"));
  EXPECT_THAT(out.str(), HasSubstr("7500"));
  o.format = "json";
  out.str("");
  EXPECT_EQ(history_command(o, out, err), 0);
  EXPECT_EQ(nlohmann::json::parse(out.str())["rows"].size(), 2u);
  o.last_good = true;
  o.spec_name = "vmstat-nohz";
  out.str("");
  EXPECT_EQ(history_command(o, out, err), 0);
  EXPECT_EQ(nlohmann::json::parse(out.str())["run_id"], "run-1");  // the anchor: none compared
  o.results_dir = dir_ / "nonesuch";
  EXPECT_EQ(history_command(o, out, err), 2);
}

// Six nights of one variant on KVM: the anchor, then cycles per syscall 0.9 margins above it
// each night (the KVM timing margin is compare's threshold_pct): the CUSUM alarms and the
// command exits 1; --margin-pct 10 makes the same nights harmless.
TEST_F(HistoryTest, CommandRunsTheCusumOfAVariantAndExits1OnACreep) {
  const double margin_pct =
      default_cusum_settings("vmstat-syscall.cycles_per_syscall", "cycles", "lower", "kvm")
          .margin_pct;
  for (int night = 0; night < 6; ++night) {
    const double v = 7400 * (1 + (night ? 0.9 * margin_pct / 100 : 0));
    const std::string id = "night-" + std::to_string(night);
    write_file_atomic(
        dir_ / id / "result.json",
        run_doc(id, "2026-11-2" + std::to_string(night) + "T03:00:00Z", {v, v, v}, {}).dump());
  }
  HistoryCommandOptions o;
  o.results_dir = dir_;
  o.metric = "vmstat-syscall.cycles_per_syscall";
  o.variant = "vanilla";
  std::ostringstream out, err;
  EXPECT_EQ(history_command(o, out, err), 1) << err.str();
  EXPECT_THAT(out.str(),
              HasSubstr("cusum of vmstat-syscall.cycles_per_syscall against run night-0"));
  EXPECT_THAT(out.str(), HasSubstr("ALARM"));
  o.format = "json";
  out.str("");
  EXPECT_EQ(history_command(o, out, err), 1);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["cusum"]["points"].size(), 5u);
  EXPECT_FALSE(j["cusum"]["points"][2]["alarm"]);
  EXPECT_TRUE(j["cusum"]["points"][3]["alarm"]);
  o.margin_pct = 10 * margin_pct;
  out.str("");
  EXPECT_EQ(history_command(o, out, err), 0);
  EXPECT_FALSE(nlohmann::json::parse(out.str())["cusum"]["alarm"]);
}

TEST_F(HistoryTest, CompareCommandRecordsItsVerdict) {
  std::vector<double> base = {7400, 7410, 7390, 7405, 7395};
  std::vector<double> slow;
  for (double x : base) slow.push_back(x * 1.1);
  write_file_atomic(dir_ / "run-3" / "result.json",
                    run_doc("run-3", "2026-11-29T03:00:00Z", base, slow).dump());
  CompareCommandOptions o;
  o.run_dirs = {dir_ / "run-3"};
  o.history_db = dir_ / "isolab.db";
  std::ostringstream out, err;
  EXPECT_EQ(compare_command(o, out, err), 1) << err.str();
  HistoryDb db = HistoryDb::open_in(dir_);
  EXPECT_FALSE(last_good_run(db, "vmstat-nohz", "patched"));
}

// ---- A/A calibration ----

// An A/A run: every cell of both variants drawn from the same normal distribution.
nlohmann::json aa_run(std::size_t cells_per_variant, double cv, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(10000, 10000 * cv);
  std::vector<double> a, b;
  for (std::size_t i = 0; i < cells_per_variant; ++i) {
    a.push_back(d(rng));
    b.push_back(d(rng));
  }
  auto r = run_doc("aa", "2026-11-28T03:00:00Z", a, b);
  r["variants"]["patched"] = r["variants"]["vanilla"];
  return r;
}

TEST(Calibrate, NoiseFloorTracksTheNoise) {
  CalibrationOptions opt;
  opt.splits = 400;
  opt.power_replicates = 50;
  const Calibration quiet = calibrate_runs({aa_run(10, 0.01, 1)}, CompareSettings{}, opt);
  const Calibration noisy = calibrate_runs({aa_run(10, 0.05, 1)}, CompareSettings{}, opt);
  ASSERT_EQ(quiet.metrics.size(), 1u);
  EXPECT_EQ(quiet.metrics[0].runs[0].n, 20u);
  EXPECT_TRUE(quiet.runs[0].warnings.empty());
  // Halves of 10 cells, CV 1%: sd of a median difference is about 1.25*1%*sqrt(2/10) = 0.56%,
  // so its 95th percentile of |change| is about 1.1%; with CV 5% five times that.
  EXPECT_GT(quiet.metrics[0].noise_floor_pct, 0.5);
  EXPECT_LT(quiet.metrics[0].noise_floor_pct, 2.0);
  EXPECT_GT(noisy.metrics[0].noise_floor_pct, 3 * quiet.metrics[0].noise_floor_pct);
  // Pure noise: nothing drifts, and the detectable effect grows with the noise.
  EXPECT_TRUE(quiet.runs[0].drifting_metrics.empty());
  EXPECT_LT(quiet.metrics[0].runs[0].mde.delta_pct, noisy.metrics[0].runs[0].mde.delta_pct);
  // Repeatable by seed.
  const Calibration again = calibrate_runs({aa_run(10, 0.01, 1)}, CompareSettings{}, opt);
  EXPECT_DOUBLE_EQ(again.metrics[0].noise_floor_pct, quiet.metrics[0].noise_floor_pct);
}

TEST(Calibrate, OneVariantSplitAndTooFewCells) {
  CalibrationOptions opt;
  opt.splits = 100;
  opt.variants = {"vanilla"};
  const Calibration c = calibrate_runs({aa_run(3, 0.01, 2)}, CompareSettings{}, opt);
  ASSERT_EQ(c.metrics.size(), 1u);
  EXPECT_EQ(c.metrics[0].runs[0].n, 3u);
  EXPECT_TRUE(std::isnan(c.metrics[0].noise_floor_pct));
  EXPECT_TRUE(
      calibration_to_json(c)["metrics"]["vmstat-syscall.cycles_per_syscall"]["noise_floor_pct"]
          .is_null());
}

TEST(Calibrate, WarnsWhenVariantsAreDifferentKernels) {
  auto r = aa_run(6, 0.01, 3);
  r["variants"]["patched"]["build_key"] = "other";
  CalibrationOptions opt;
  opt.splits = 50;
  EXPECT_EQ(calibrate_runs({r}, CompareSettings{}, opt).runs[0].warnings.size(), 1u);
}

TEST_F(HistoryTest, CalibrationFeedsCompareNoiseFloor) {
  // Noisy A/A run (CV 5%; floor about 1.96 * 1.25 * 5% * sqrt(2/12) = 5%), then an A/B run with a
  // real 4% shift at CV 1.5%: above the default 2% threshold but within the calibrated noise floor.
  write_file_atomic(dir_ / "aa" / "result.json", aa_run(12, 0.05, 4).dump());
  CalibrateCommandOptions co;
  co.run_dirs = {dir_ / "aa"};
  co.splits = 400;
  co.output = dir_ / "floors.json";
  std::ostringstream out, err;
  EXPECT_EQ(calibrate_report_command(co, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("noise floor for compare --noise-floor"));
  const auto floors =
      noise_floors_from_json(nlohmann::json::parse(read_file(dir_ / "floors.json")));
  ASSERT_EQ(floors.count("vmstat-syscall.cycles_per_syscall"), 1u);
  const double floor = floors.at("vmstat-syscall.cycles_per_syscall");
  EXPECT_GT(floor, 4.0);

  std::mt19937_64 rng(5);
  std::normal_distribution<double> d(0, 0.015);
  std::vector<double> a, b;
  for (int i = 0; i < 8; ++i) {
    a.push_back(10000 * (1 + d(rng)));
    b.push_back(10400 * (1 + d(rng)));
  }
  write_file_atomic(dir_ / "ab" / "result.json",
                    run_doc("ab", "2026-11-29T03:00:00Z", a, b).dump());
  CompareCommandOptions o;
  o.run_dirs = {dir_ / "ab"};
  out.str("");
  EXPECT_EQ(compare_command(o, out, err), 1) << out.str();  // default 2% threshold: regressed
  o.noise_floor_file = dir_ / "floors.json";
  out.str("");
  EXPECT_EQ(compare_command(o, out, err), 0) << out.str();  // within the A/A noise floor

  write_file_atomic(dir_ / "notcal.json", "{\"metrics\":{}}");
  o.noise_floor_file = dir_ / "notcal.json";
  err.str("");
  EXPECT_EQ(compare_command(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("not an isolab calibration"));
}

}  // namespace
}  // namespace isolab
