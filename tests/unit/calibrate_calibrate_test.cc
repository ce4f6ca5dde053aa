// A/A calibration on a captured run (tests/data/runs/planted-regression-kqin12: vanilla and
// planted 6.1 under TCG, 5 boots each, planted-r1 failed). It is not an A/A run, so its two
// variants are pooled as strata: the drift tests reorder boots within a variant only, and a
// host drift or step added in boot order to one metric must be told apart from the run as
// captured.
#include "calibrate/calibrate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/files.h"
#include "calibrate/calibration_json.h"
#include "cli/compare.h"
#include "compare/compare.h"
#include "compare/noise_floors.h"
#include "report/calibration_text.h"
#include "results/result_file.h"

namespace isolab {
namespace {

const std::string kRun = std::string(ISOLAB_TEST_DATA_DIR) + "/runs/planted-regression-kqin12";
const std::string kMetric = "vmstat-idle.cycles_per_idle_loop";

// The captured planted run, with vmstat_update on the CPU of each step declared primary (the
// run was recorded before specs declared any, and before instructions were counted): its own
// comparison then exits 1.
nlohmann::json captured() {
  static const nlohmann::json run = [] {
    nlohmann::json r = load_result(kRun);
    r["spec"]["compare"]["primary"] = nlohmann::json::parse(R"([
      {"metric": "vmstat-syscall.noise.vmstat_update_per_s", "cpus": "5", "bad": "higher"},
      {"metric": "vmstat-idle.noise.vmstat_update_per_s", "cpus": "6", "bad": "higher"},
      {"metric": "latency.noise.vmstat_update_per_s", "bad": "higher"}])");
    return r;
  }();
  return run;
}

// The compare settings of the captured run's spec (its primary metrics).
CompareSettings declared() { return settings_from_json(captured()["spec"]["compare"]); }

// Multiplies every value of `metric` in cell k (cells[] order, the run's boot order) by
// factor(k).
template <class F>
nlohmann::json with_factor(const std::string& metric, F factor) {
  nlohmann::json run = captured();
  auto& cells = run["cells"];
  for (std::size_t k = 0; k < cells.size(); ++k) {
    auto& m = cells[k]["metrics"];
    if (!m.contains(metric)) continue;
    for (auto& v : m[metric]["values"])
      if (v.is_number()) v = v.get<double>() * factor(k);
  }
  return run;
}

nlohmann::json drifted() {
  return with_factor(kMetric, [](std::size_t k) { return 1 + 0.1 * double(k); });
}

nlohmann::json stepped() {
  const std::size_t half = captured()["cells"].size() / 2;
  return with_factor(kMetric, [&](std::size_t k) { return k < half ? 1.5 : 1.0; });
}

CalibrationOptions fast() {
  CalibrationOptions o;
  o.power_replicates = 100;
  return o;
}

const RunMetricCalibration& metric(const Calibration& c, const std::string& name) {
  for (const auto& m : c.metrics)
    if (m.name == name) return m.runs.at(0);
  throw Error("no metric " + name);
}

TEST(CalibrateCaptured, UntouchedRunNamesNoDriftingMetric) {
  const Calibration c = calibrate_runs({captured()}, declared(), fast());
  ASSERT_EQ(c.runs.size(), 1u);
  const RunCalibration& r = c.runs[0];
  EXPECT_EQ(r.variants, (std::vector<std::string>{"vanilla", "planted"}));
  EXPECT_EQ(r.boot_order_source, "cells[] order");
  EXPECT_EQ(r.boot_order.front(), "vanilla-r0");
  EXPECT_EQ(r.boot_order.size(), 9u);  // planted-r1 failed
  EXPECT_TRUE(r.drifting_metrics.empty());
  EXPECT_GT(r.testable_metrics, 30u);
  // Not A/A: warned, and its own comparison (vanilla vs planted) finds the planted regression.
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.compare_exit_status, 1);
  EXPECT_EQ(c.comparison_key, captured()["comparison_key"]);
  const RunMetricCalibration& m = metric(c, kMetric);
  EXPECT_EQ(m.n, 9u);
  EXPECT_TRUE(m.drift.exact);
  EXPECT_EQ(m.drift.permutations, 2880u);  // 5! * 4!
  EXPECT_GT(m.drift.combined_p, 0.05);
}

TEST(CalibrateCaptured, DriftInBootOrderIsNamed) {
  const Calibration plain = calibrate_runs({captured()}, CompareSettings{}, fast());
  const Calibration c = calibrate_runs({drifted()}, CompareSettings{}, fast());
  EXPECT_EQ(c.runs[0].drifting_metrics, std::vector<std::string>{kMetric});
  const RunMetricCalibration& m = metric(c, kMetric);
  // Fully ordered within both variants: S = 10 + 6, reached by 2 of 2880 orders.
  EXPECT_DOUBLE_EQ(m.drift.trend.statistic, 16);
  EXPECT_DOUBLE_EQ(m.drift.trend.p, 2.0 / 2880);
  EXPECT_DOUBLE_EQ(m.drift.kendall_tau, 1.0);
  EXPECT_TRUE(m.drifting);
  EXPECT_LT(m.drift_p_holm, 0.05);
  EXPECT_NE(m.drift.trend.p, metric(plain, kMetric).drift.trend.p);
  EXPECT_GT(m.spread.cv, metric(plain, kMetric).spread.cv);
  const std::string text = render_calibration_text(c);
  EXPECT_NE(
      text.find("drifting metrics (Holm over each run's testable metrics, alpha 0.05): " + kMetric),
      std::string::npos)
      << text;
}

TEST(CalibrateCaptured, StepInTheFirstHalfReachesTheSmallestHalvesP) {
  // The first half of the run is boots 0-4: vanilla r0-r2 and planted r0 (r1 failed). Within
  // the variants that is 3 of 5 and 1 of 4 boots, so of the C(5,3) * C(4,1) = 40 ways to
  // choose them the two extremes give the smallest halves p, 2/40 = 0.05. The step reaches it
  // (from 0.95), but 5 + 4 boots cannot name it after any correction over 38 metrics: see
  // StepIsNamedWithTenBootsPerVariant for a run that can.
  const Calibration plain = calibrate_runs({captured()}, CompareSettings{}, fast());
  const Calibration c = calibrate_runs({stepped()}, CompareSettings{}, fast());
  const RunMetricCalibration& m = metric(c, kMetric);
  const RunMetricCalibration& p = metric(plain, kMetric);
  EXPECT_DOUBLE_EQ(m.drift.halves.p, 2.0 / 40);
  EXPECT_GT(p.drift.halves.p, 0.9);
  EXPECT_LT(m.drift.combined_p, p.drift.combined_p);
  EXPECT_GT(m.spread.cv, 3 * p.spread.cv);
  // The MDE is compare's rule now, the 25% TCG timing margin included (the quiet run's MDE is
  // held up by it: 34%, where the test alone needed about 11%).
  EXPECT_GT(m.mde.delta_pct, p.mde.delta_pct);
  EXPECT_GT(p.mde.delta_pct, 25);
  EXPECT_TRUE(c.runs[0].drifting_metrics.empty());
}

// An A/A run of `boots` boots per variant, interleaved a b a b ..., with `metrics` metrics of
// seeded noise (timings CV 5%, counts Poisson(20)); metric "m00" gets factor(k) in cell k.
template <class F>
nlohmann::json synthetic_aa(std::size_t boots, std::size_t metrics, F factor) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> timing(1000, 50);
  std::poisson_distribution<int> count(20);
  nlohmann::json cells = nlohmann::json::array();
  for (std::size_t k = 0; k < 2 * boots; ++k) {
    nlohmann::json ms = nlohmann::json::object();
    for (std::size_t i = 0; i < metrics; ++i) {
      const bool is_count = i % 2 == 1;
      double v = is_count ? double(count(rng)) : timing(rng);
      if (i == 0) v *= factor(k);
      const std::string name = (i < 10 ? "m0" : "m") + std::to_string(i);
      ms[name] = {{"unit", is_count ? "count" : "cycles"},
                  {"better", "lower"},
                  {"aggregate", "mean"},
                  {"values", {v}}};
    }
    const char* v = k % 2 ? "b" : "a";
    cells.push_back({{"id", std::string(v) + "-r" + std::to_string(k / 2)},
                     {"variant", v},
                     {"warmup", false},
                     {"status", "ok"},
                     {"accelerator", "kvm"},
                     {"metrics", ms}});
  }
  return {{"schema_version", 1},
          {"run_id", "aa"},
          {"comparison_key", {{"accelerator", "kvm"}}},
          {"variants", {{"a", {{"build_key", "k"}}}, {"b", {{"build_key", "k"}}}}},
          {"variant_order", {"a", "b"}},
          {"cells", cells}};
}

TEST(CalibrateSynthetic, StepIsNamedWithTenBootsPerVariant) {
  // 10 + 10 boots: C(10,5)^2 = 63504 ways to choose the first halves; sampled (5000 orders),
  // the smallest p is 1/5001, below Holm's 0.05/40.
  const auto none = [](std::size_t) { return 1.0; };
  const auto step = [](std::size_t k) { return k < 10 ? 1.5 : 1.0; };
  CalibrationOptions o = fast();
  o.power_replicates = 20;
  o.drift_resamples = 5000;
  const Calibration plain = calibrate_runs({synthetic_aa(10, 40, none)}, {}, o);
  const Calibration c = calibrate_runs({synthetic_aa(10, 40, step)}, {}, o);
  EXPECT_TRUE(plain.runs[0].warnings.empty());
  EXPECT_TRUE(plain.runs[0].drifting_metrics.empty());
  EXPECT_EQ(c.runs[0].drifting_metrics, std::vector<std::string>{"m00"});
  const RunMetricCalibration& m = metric(c, "m00");
  EXPECT_FALSE(m.drift.exact);
  EXPECT_DOUBLE_EQ(m.drift.halves.p, 1.0 / 5001);
}

// A nightly pair: the baseline variant boots the stored run's kernel as a prebuilt image, whose
// own build key differs; its baseline_of record names the kernel, the same as tonight's.
TEST(CalibrateSynthetic, NightlyPairOfOneKernelIsAnAARun) {
  const auto none = [](std::size_t) { return 1.0; };
  nlohmann::json run = synthetic_aa(5, 2, none);
  run["variants"]["a"] = {{"build_key", "prebuilt"},
                          {"kernel_release", "6.1-x"},
                          {"baseline_of", {{"build_key", "k"}, {"run_id", "stored"}}}};
  run["variants"]["b"] = {{"build_key", "k"}, {"kernel_release", "6.1-x"}};
  EXPECT_TRUE(calibrate_runs({run}, {}, fast()).runs[0].warnings.empty());
  run["variants"]["a"]["baseline_of"]["build_key"] = "other";
  const Calibration c = calibrate_runs({run}, {}, fast());
  ASSERT_EQ(c.runs[0].warnings.size(), 1u);
  EXPECT_NE(c.runs[0].warnings[0].find("not an A/A run"), std::string::npos);
}

TEST(CalibrateCaptured, OneVariantIsComparedByAlternateBoots) {
  CalibrationOptions o = fast();
  o.variants = {"vanilla"};
  const Calibration c = calibrate_runs({captured()}, CompareSettings{}, o);
  const RunCalibration& r = c.runs[0];
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.boot_order.size(), 5u);
  EXPECT_NE(r.compare_note.find("boots 1,3,5"), std::string::npos);
  EXPECT_GE(r.compare_exit_status, 0);
  const RunMetricCalibration& m = metric(c, kMetric);
  EXPECT_EQ(m.mde.per_side, 5u);  // the run's boots per variant
  EXPECT_EQ(m.drift.permutations, 120u);
}

TEST(CalibrateCaptured, SeveralRunsGiveBetweenRunSpreadAndFalseAlarmInterval) {
  nlohmann::json second = drifted();
  second["run_id"] = "second";
  const Calibration c = calibrate_runs({captured(), second}, declared(), fast());
  ASSERT_EQ(c.runs.size(), 2u);
  EXPECT_TRUE(c.runs[0].drifting_metrics.empty());
  EXPECT_EQ(c.runs[1].drifting_metrics, std::vector<std::string>{kMetric});
  for (const auto& m : c.metrics)
    if (m.name == kMetric) {
      ASSERT_TRUE(m.between_runs.has_value());
      EXPECT_EQ(m.between_runs->run_means.size(), 2u);
      EXPECT_GT(m.between_runs->between_sd, 0);
    }
  ASSERT_TRUE(c.false_alarms.has_value());
  EXPECT_EQ(c.false_alarms->comparisons, 2u);
  EXPECT_EQ(c.false_alarms->alarms, 2u);  // the planted regression, in both
  EXPECT_NEAR(c.false_alarms->interval.low, std::pow(0.025, 0.5), 1e-9);
  const nlohmann::json j = calibration_to_json(c);
  EXPECT_EQ(j["version"], 3);
  EXPECT_EQ(j["false_alarms"]["alarms"], 2);
  EXPECT_EQ(j["metrics"][kMetric]["runs"][1]["drifting"], true);
  EXPECT_TRUE(j["metrics"][kMetric]["between_runs"].is_object());
}

TEST(CalibrateCaptured, RunsOfAnotherComparisonKeyAreNotPooled) {
  nlohmann::json other = captured();
  other["comparison_key"]["isolab_revision"] = "0123abc";
  try {
    calibrate_runs({captured(), other}, CompareSettings{}, fast());
    FAIL() << "pooled runs of two comparison keys";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("isolab_revision"), std::string::npos) << e.what();
  }
}

TEST(CalibrationKey, CompareRefusesACalibrationOfAnotherKey) {
  const nlohmann::json cal = calibration_to_json(calibrate_runs({captured()}, {}, fast()));
  EXPECT_TRUE(calibration_key_differences(cal, captured()).empty());
  nlohmann::json moved = captured();
  moved["comparison_key"]["guest_image_sha256"] = "feed";
  const auto d = calibration_key_differences(cal, moved);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], "guest_image_sha256: calibration=(absent), run=\"feed\"");
  nlohmann::json old = cal;
  old.erase("comparison_key");
  EXPECT_EQ(calibration_key_differences(old, captured()).size(), 1u);

  const auto dir = std::filesystem::temp_directory_path() / "isolab-calib-key-test";
  std::filesystem::create_directories(dir);
  write_file_atomic(dir / "cal.json", cal.dump());
  write_file_atomic(dir / "result.json", moved.dump());
  CompareCommandOptions o;
  o.run_dirs = {dir};
  o.noise_floor_file = dir / "cal.json";
  std::ostringstream out, err;
  EXPECT_EQ(compare_command(o, out, err), 2);
  EXPECT_NE(err.str().find("guest_image_sha256"), std::string::npos) << err.str();
  o.force = true;
  std::ostringstream out2, err2;
  EXPECT_EQ(compare_command(o, out2, err2), 1);  // the planted regression
  EXPECT_NE(err2.str().find("applied because of --force"), std::string::npos) << err2.str();
  std::filesystem::remove_all(dir);
}

TEST(NoiseFloors, ReadFromTheCalibration) {
  const nlohmann::json cal = calibration_to_json(calibrate_runs({captured()}, {}, fast()));
  const auto floors = noise_floors_from_json(cal);
  ASSERT_TRUE(floors.count(kMetric));
  EXPECT_GT(floors.at(kMetric), 0);
  EXPECT_THROW(noise_floors_from_json(nlohmann::json::object()), SpecError);
}

}  // namespace
}  // namespace isolab

namespace isolab {
namespace {

// An A/A run of 5 + 5 boots of instructions per syscall, as the default's plugin counts it:
// 14163.0, and 14163.5 in one boot of six; instructions per second of an idle CPU that vary.
nlohmann::json insn_aa(const std::string& id, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> sixth(0, 5);
  std::normal_distribution<double> idle(2e5, 4e4);
  nlohmann::json cells = nlohmann::json::array();
  for (int k = 0; k < 10; ++k) {
    const char* v = k % 2 ? "b" : "a";
    cells.push_back({{"id", std::string(v) + "-r" + std::to_string(k / 2)},
                     {"variant", v},
                     {"warmup", false},
                     {"status", "ok"},
                     {"accelerator", "tcg"},
                     {"metrics",
                      {{"s.insns_per_syscall",
                        {{"unit", "instructions"},
                         {"better", "lower"},
                         {"kind", "instructions"},
                         {"values", {14163.0 + (sixth(rng) == 0 ? 0.5 : 0.0)}}}},
                       {"s.noise.kernel_insns_per_s",
                        {{"unit", "instructions/s"},
                         {"better", "lower"},
                         {"kind", "instructions"},
                         {"values", {idle(rng)}}}}}}});
  }
  return {{"schema_version", 1},
          {"run_id", id},
          {"comparison_key", {{"accelerator", "tcg"}}},
          {"spec",
           {{"compare", {{"primary", {{{"metric", "s.insns_per_syscall"}, {"bad", "higher"}}}}}}}},
          {"variants", {{"a", {{"build_key", "k"}}}, {"b", {{"build_key", "k"}}}}},
          {"variant_order", {"a", "b"}},
          {"cells", cells}};
}

// Calibrate over K independent A/A runs: the exit status's measured false alarms with their
// Clopper-Pearson upper bound, and the jitter (and K) the range rule reads, written into the
// compare.calibration a spec names.
TEST(CalibrateRuns, FalseAlarmsOfTheExitStatusAndTheJitterOverIndependentRuns) {
  std::vector<nlohmann::json> runs;
  for (int k = 0; k < 3; ++k) runs.push_back(insn_aa("aa" + std::to_string(k), 100 + k));
  const CompareSettings s = run_compare_settings(runs[0], "result.json");
  const Calibration c = calibrate_runs(runs, s, fast());
  ASSERT_TRUE(c.false_alarms);
  EXPECT_EQ(c.false_alarms->comparisons, 3u);
  EXPECT_EQ(c.false_alarms->alarms, 0u);
  EXPECT_NEAR(c.false_alarms->interval.high, 1 - std::pow(0.025, 1.0 / 3), 1e-9);  // 0.708
  const std::string text = render_calibration_text(c);
  EXPECT_NE(text.find("false alarms of the exit status: 0 of 3 independent A/A comparisons exit "
                      "1 (rate 0.000; 95% Clopper-Pearson upper bound 0.708"),
            std::string::npos)
      << text;
  const MetricCalibration* insn = nullptr;
  for (const auto& m : c.metrics)
    if (m.name == "s.insns_per_syscall") insn = &m;
  ASSERT_NE(insn, nullptr);
  EXPECT_DOUBLE_EQ(insn->jitter, 0.5);
  EXPECT_EQ(insn->jitter_runs, 3u);
  EXPECT_NE(text.find("s.insns_per_syscall: 0.5 instructions over 3 runs"), std::string::npos);
  // What a spec's compare.calibration takes from it.
  const nlohmann::json section = calibration_section(calibration_to_json(c), "cal.json");
  const CompareSettings with = settings_from_json({{"calibration", section}});
  const MetricCalibrationFacts* f = with.calibrated("s.insns_per_syscall");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(*f->jitter, 0.5);
  EXPECT_EQ(f->runs, 3u);
  EXPECT_EQ(with.calibration->source, "cal.json");
}

}  // namespace
}  // namespace isolab
