#include "compare/compare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "cli/compare.h"
#include "report/format.h"
#include "report/render.h"
#include "report/text.h"
#include "sys/process.h"
#include "unwrapped.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::filesystem::path kData = std::filesystem::path(ISOLAB_TEST_DATA_DIR) / "compare";

nlohmann::json load(const std::filesystem::path& p) { return nlohmann::json::parse(read_file(p)); }

nlohmann::json comparison_key(const std::string& accelerator = "tcg") {
  return {{"accelerator", accelerator},
          {"cmdline", "isolcpus=1 nohz_full=1"},
          {"vcpus", 2},
          {"memory_mib", 512},
          {"workloads_sha256", "aa"},
          {"host_fingerprint_sha256", "bb"}};
}

nlohmann::json ok_cell(const std::string& variant, int rep, double cycles, double lat_max,
                       const std::string& accelerator = "kvm") {
  return {{"id", variant + "-r" + std::to_string(rep)},
          {"variant", variant},
          {"repetition", rep},
          {"warmup", false},
          {"status", "ok"},
          {"failure_class", nullptr},
          {"reason", ""},
          {"accelerator", accelerator},
          {"metrics",
           {{"vmstat-syscall.cycles_per_syscall",
             {{"unit", "cycles"},
              {"better", "lower"},
              {"aggregate", "mean"},
              {"values", {cycles - 10, cycles + 10}}}},
            {"latency.latency_max_us",
             {{"unit", "us"},
              {"better", "lower"},
              {"aggregate", "max"},
              {"values", {lat_max - 5, lat_max, nullptr}}}}}},
          {"histograms",
           {{"latency",
             {{"unit", "us"},
              {"counts", {{"1", 990}, {"5", 9}, {std::to_string(int(lat_max)), 1}}},
              {"overflows", 0}}}}}};
}

// A run with n cells per variant; B's cycles are `shift` times A's (CV about 0.5%), B's
// latency max is 40 * shift us in every cell against A's 40. KVM by default: under TCG the
// timing threshold is at least 25% (see the TCG tests), which would hide these 5-10% shifts.
nlohmann::json make_run(const std::string& run_id, int n, double shift, std::uint64_t seed,
                        const std::string& accelerator = "kvm") {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, 0.005);
  nlohmann::json cells = nlohmann::json::array();
  for (int r = 0; r < n; ++r) {
    cells.push_back(ok_cell("vanilla", r, 7400 * (1 + noise(rng)), 40, accelerator));
    cells.push_back(
        ok_cell("patched", r, 7400 * shift * (1 + noise(rng)), 40 * shift, accelerator));
  }
  return {{"schema_version", 1},
          {"run_id", run_id},
          {"spec_name", "vmstat-nohz"},
          {"started_at", "2026-11-30T03:15:00Z"},
          {"status", "complete"},
          {"comparison_key", comparison_key(accelerator)},
          {"variants",
           {{"vanilla", {{"kernel_release", "6.1.158-isolab-3f2a9c1d"}}},
            {"patched", {{"kernel_release", "6.1.158-isolab-77aa0b2e"}}}}},
          {"variant_order", {"vanilla", "patched"}},
          {"cells", cells}};
}

// Settings declaring primary metrics, as a spec's compare.primary does.
CompareSettings with_primary(const std::vector<std::string>& metrics) {
  nlohmann::json primary = nlohmann::json::array();
  for (const auto& m : metrics) primary.push_back({{"metric", m}, {"bad", "higher"}});
  return settings_from_json({{"primary", primary}});
}

const MetricRow& row(const Comparison& c, const std::string& name) {
  for (const auto& r : c.metrics) {
    if (r.name == name) return r;
  }
  throw std::runtime_error("no row " + name);
}

TEST(S2, OneRunBeforeAfterIsInconclusiveNotARegression) {
  const auto run = load(kData / "s2-one-run.json");
  const Comparison c = compare_run_variants(run, CompareSettings{});
  EXPECT_EQ(c.variant_a, "before");
  EXPECT_EQ(c.variant_b, "after");
  const auto& real = row(c, "ramfs.bogo_ops_per_s_real");
  const auto& usr_sys = row(c, "ramfs.bogo_ops_per_s_usr_sys");
  EXPECT_NEAR(real.change_pct, -3.75, 0.005);
  EXPECT_NEAR(usr_sys.change_pct, -4.98, 0.005);
  EXPECT_EQ(real.better, "higher");
  EXPECT_EQ(real.unit, "bogo ops/s");
  EXPECT_EQ(real.test.a.n, 1u);
  EXPECT_EQ(real.verdict.verdict, Verdict::inconclusive);
  EXPECT_EQ(usr_sys.verdict.verdict, Verdict::inconclusive);
  EXPECT_EQ(c.regressions(), 0u);
  EXPECT_EQ(compare_exit_status(c), 0);
  EXPECT_EQ(report_detail::format_change(real),
            "-3.75% [-inf, +inf]");  // one boot each bounds nothing
  // The rows are inconclusive: shown with --all only.
  EXPECT_THAT(render_text(c), Not(HasSubstr("14671.45")));
  EXPECT_THAT(render_text(c, {.all_rows = true}), HasSubstr("14671.45"));
  const std::string text = render_text(c, {.all_rows = true});
  EXPECT_THAT(text, HasSubstr("-4.98%"));
  EXPECT_THAT(text, HasSubstr("inconclusive"));
  EXPECT_THAT(text, HasSubstr("n=1+1 below min_samples 3"));
}

TEST(S2, TwoRunFormThroughTheCommand) {
  CompareCommandOptions o;
  o.run_dirs = {kData / "s2-before", kData / "s2-after"};
  o.format = "json";
  std::ostringstream out, err;
  EXPECT_EQ(compare_command(o, out, err), 0) << err.str();
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["variant_a"], "kernel");
  EXPECT_EQ(j["variant_b"], "kernel");
  bool seen = false;
  for (const auto& m : j["metrics"]) {
    if (m["name"] == "ramfs.bogo_ops_per_s_usr_sys") {
      seen = true;
      EXPECT_NEAR(m["change_pct"].get<double>(), -4.98, 0.005);
      EXPECT_EQ(m["verdict"], "inconclusive");
    }
  }
  EXPECT_TRUE(seen);
  EXPECT_EQ(j["summary"]["regressions"], 0);
}

TEST(Compare, DetectsARegressionWithFiveBoots) {
  const auto run = make_run("r1", 5, 1.10, 1);
  const Comparison c = compare_run_variants(run, CompareSettings{});
  const auto& cyc = row(c, "vmstat-syscall.cycles_per_syscall");
  EXPECT_EQ(cyc.verdict.verdict, Verdict::regressed) << cyc.verdict.reason;
  EXPECT_NEAR(cyc.change_pct, 10.0, 1.0);
  ASSERT_TRUE(cyc.ci_low_pct && cyc.ci_high_pct);
  EXPECT_LT(*cyc.ci_low_pct, cyc.change_pct);
  EXPECT_GT(*cyc.ci_high_pct, cyc.change_pct);
  EXPECT_EQ(cyc.test.a.n, 5u);
  EXPECT_TRUE(cyc.test.mann_whitney.exact);
  EXPECT_NEAR(cyc.test.mann_whitney.p_two_sided, 2.0 / 252.0, 1e-9);
  // Per-cell aggregate: mean of {x-10, x+10} is x; max of {40-5, 40, null} is 40.
  const auto& lat = row(c, "latency.latency_max_us");
  EXPECT_DOUBLE_EQ(lat.test.a.median, 40);
  EXPECT_DOUBLE_EQ(lat.test.b.median, 44);
  EXPECT_EQ(lat.verdict.verdict, Verdict::regressed);  // +10% > 2%, every cell 44 vs 40
  // 40 in every A boot, 44 in every B boot: the normal approximation with ties gave p = 0.004,
  // below what 5 against 5 can give; the exact conditional midrank test gives 2/252.
  EXPECT_LT(lat.test.mann_whitney.p_two_sided, 0.0045);
  EXPECT_DOUBLE_EQ(lat.test.p_value(), 2.0 / 252.0);
  EXPECT_DOUBLE_EQ(lat.test.min_p(), 2.0 / 252.0);
  // No primary metric declared: these are secondary regressions, which never set the exit
  // status. Their family-wise p over the 2 rows: the two move together,
  // so the Westfall-Young adjustment costs nothing (2/252).
  EXPECT_FALSE(cyc.primary);
  EXPECT_DOUBLE_EQ(*cyc.test.family_p, 2.0 / 252.0);
  EXPECT_EQ(c.family.relabellings, 252u);
  EXPECT_EQ(compare_exit_status(c), 0);
  EXPECT_EQ(c.regressions(), 0u);
  // Declared primary (higher is bad): one-sided p 1/252 each, Holm over 2: 2/252; exit 1.
  const Comparison p = compare_run_variants(
      run, with_primary({"vmstat-syscall.cycles_per_syscall", "latency.latency_max_us"}));
  const auto& pcyc = row(p, "vmstat-syscall.cycles_per_syscall");
  EXPECT_TRUE(pcyc.primary);
  EXPECT_DOUBLE_EQ(pcyc.test.one_sided->p, 1.0 / 252.0);
  EXPECT_DOUBLE_EQ(*pcyc.test.family_p, 2.0 / 252.0);
  EXPECT_EQ(pcyc.verdict.verdict, Verdict::regressed) << pcyc.verdict.reason;
  EXPECT_EQ(p.primary_regressions(), 2u);
  EXPECT_EQ(compare_exit_status(p), 1);
  EXPECT_EQ(p.regressions(), 2u);
  // Tails from merged histograms: 5 boots x 1000 samples (990 at 1 us, 9 at 5, 1 at the max):
  // p99 rank 4950 is reached within bucket 1 (4950 samples), p99.9 rank 4995 in bucket 5.
  ASSERT_EQ(c.tails.size(), 1u);
  EXPECT_EQ(c.tails[0].a.samples, 5000u);
  EXPECT_EQ(c.tails[0].a.p99, 1);
  EXPECT_EQ(c.tails[0].a.p99_9, 5);
  EXPECT_EQ(c.tails[0].a.max, 40);
  EXPECT_EQ(c.tails[0].b.max, 44);
}

TEST(Compare, PerMetricThresholdOverride) {
  const auto run = make_run("r1", 5, 1.05, 2);  // latency max 42 vs 40 us: +5%
  CompareSettings s =
      settings_from_json(nlohmann::json::parse(R"({"thresholds_pct":{"latency.*":10}})"));
  const Comparison c = compare_run_variants(run, s);
  const auto& lat = row(c, "latency.latency_max_us");
  EXPECT_DOUBLE_EQ(lat.verdict.threshold_pct, 10);
  // Significant (p = 2/252) inside the 10% margin: a change, below threshold.
  EXPECT_EQ(lat.verdict.verdict, Verdict::changed_below) << lat.verdict.reason;
}

TEST(Compare, RefusesUnlikeRunsAndListsEveryDifference) {
  auto a = make_run("ra", 3, 1.0, 3, "tcg");
  auto b = make_run("rb", 3, 1.0, 4, "tcg");
  b["comparison_key"]["accelerator"] = "kvm";
  b["comparison_key"]["vcpus"] = 8;
  try {
    compare_runs(a, "vanilla", b, "patched", CompareSettings{}, false);
    FAIL() << "expected a refusal";
  } catch (const ComparisonRefused& e) {
    EXPECT_THAT(e.differences(),
                ::testing::ElementsAre("accelerator: A=tcg, B=kvm", "vcpus: A=2, B=8"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("--force"));
  }
  const Comparison c = compare_runs(a, "vanilla", b, "patched", CompareSettings{}, true);
  EXPECT_TRUE(c.forced);
  ASSERT_EQ(c.differences.size(), 2u);
  EXPECT_THAT(render_text(c), HasSubstr("FORCED"));
  EXPECT_THAT(render_text(c), HasSubstr("vcpus: A=2, B=8"));
  EXPECT_THAT(render_markdown(c), HasSubstr("FORCED"));
  EXPECT_THAT(render_markdown(c), HasSubstr("accelerator: A=tcg, B=kvm"));
  const auto j = render_json(c);
  EXPECT_EQ(j["forced"], true);
  EXPECT_EQ(j["differences"][1], "vcpus: A=2, B=8");
  const std::string junit = render_junit(c);
  EXPECT_THAT(junit, HasSubstr("<property name=\"forced\" value=\"true\"/>"));
  EXPECT_THAT(junit, HasSubstr("value=\"vcpus: A=2, B=8\""));
}

TEST(Compare, MissingComparisonKeyIsADifference) {
  auto a = make_run("ra", 3, 1.0, 3);
  auto b = make_run("rb", 3, 1.0, 4);
  b.erase("comparison_key");
  EXPECT_THROW(compare_runs(a, "vanilla", b, "vanilla", CompareSettings{}, false),
               ComparisonRefused);
}

TEST(Compare, CellAcceleratorMismatchIsRefusedEvenInOneRun) {
  auto run = make_run("r", 3, 1.0, 5);
  for (auto& c : run["cells"]) {
    if (c["variant"] == "patched") c["accelerator"] = "tcg";
  }
  EXPECT_THROW(compare_run_variants(run, CompareSettings{}), ComparisonRefused);
}

// Adds an instruction-count metric with the given source to every cell of variant v.
void add_insn_metric(nlohmann::json& run, const std::string& v, const std::string& source) {
  for (auto& c : run["cells"])
    if (c["variant"] == v)
      c["metrics"]["vmstat-syscall.insns_per_syscall"] = {
          {"unit", "instructions"}, {"better", "lower"}, {"aggregate", "mean"},
          {"kind", "instructions"}, {"source", source},  {"values", {16000}}};
}

TEST(Compare, AMetricFromTwoSourcesIsRefusedAndNamed) {
  auto a = make_run("ra", 3, 1.0, 3);
  auto b = make_run("rb", 3, 1.0, 4);
  add_insn_metric(a, "vanilla", "tcg-plugin");
  add_insn_metric(b, "patched", "pmu");
  try {
    compare_runs(a, "vanilla", b, "patched", CompareSettings{}, false);
    FAIL() << "expected a refusal";
  } catch (const ComparisonRefused& e) {
    EXPECT_THAT(e.differences(),
                ::testing::ElementsAre(
                    "metric vmstat-syscall.insns_per_syscall: source A=tcg-plugin, B=pmu"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("--force"));
  }
  const Comparison c = compare_runs(a, "vanilla", b, "patched", CompareSettings{}, true);
  EXPECT_TRUE(c.forced);
  EXPECT_THAT(render_text(c), HasSubstr("source A=tcg-plugin, B=pmu"));
}

TEST(Compare, TheSameSourceOnBothSidesIsNoDifference) {
  auto run = make_run("r", 3, 1.0, 5);
  add_insn_metric(run, "vanilla", "pmu");
  add_insn_metric(run, "patched", "pmu");
  const Comparison c = compare_run_variants(run, CompareSettings{});
  EXPECT_FALSE(c.forced);
  EXPECT_EQ(row(c, "vmstat-syscall.insns_per_syscall").a_values.size(), 3u);
}

// Each side's tool versions, as the cells recorded them; a difference is listed, not refused.
TEST(Compare, ToolVersionsThatDifferAreListed) {
  auto run = make_run("r", 3, 1.0, 5);
  for (auto& c : run["cells"]) {
    const bool b = c["variant"] == "patched";
    c["tool_versions"] = {{"latency", {{"cyclictest", b ? "2.50" : "2.40"}}},
                          {"load", {{"stress-ng", "0.15.06"}}}};
    if (b) c["tool_versions"]["extra"] = {{"stress-ng", "0.17.00"}};
  }
  const Comparison c = compare_run_variants(run, CompareSettings{});
  EXPECT_FALSE(c.forced);
  EXPECT_EQ(c.version_differences,
            (std::vector<std::string>{"extra: stress-ng A=(none), B=0.17.00",
                                      "latency: cyclictest A=2.40, B=2.50"}));
  EXPECT_THAT(render_text(c), ::testing::HasSubstr("tool versions differ between A and B:\n"
                                                   "  - extra: stress-ng A=(none), B=0.17.00\n"));
  // A side whose boots disagree among themselves shows every version it recorded.
  run["cells"][0]["tool_versions"]["latency"]["cyclictest"] = "2.10";
  EXPECT_EQ(compare_run_variants(run, CompareSettings{}).version_differences[1],
            "latency: cyclictest A=2.10,2.40, B=2.50");
  for (auto& cell : run["cells"]) cell.erase("tool_versions");
  EXPECT_TRUE(compare_run_variants(run, CompareSettings{}).version_differences.empty());
}

TEST(Compare, MixedSourcesWithinOneVariantAreRefused) {
  auto run = make_run("r", 3, 1.0, 5);
  add_insn_metric(run, "vanilla", "pmu");
  add_insn_metric(run, "patched", "pmu");
  run["cells"][0]["metrics"]["vmstat-syscall.insns_per_syscall"]["source"] = "tcg-plugin";
  try {
    compare_run_variants(run, CompareSettings{});
    FAIL() << "expected a refusal";
  } catch (const ComparisonRefused& e) {
    EXPECT_THAT(e.differences(),
                ::testing::ElementsAre(
                    "metric vmstat-syscall.insns_per_syscall: source A=pmu,tcg-plugin, B=pmu"));
  }
}

TEST(Compare, AMetricWithASourceOnOneSideOnlyIsNoDifference) {
  // Older results carry no source: nothing to mix.
  auto run = make_run("r", 3, 1.0, 5);
  add_insn_metric(run, "vanilla", "tcg-plugin");
  add_insn_metric(run, "patched", "tcg-plugin");
  for (auto& c : run["cells"])
    if (c["variant"] == "patched") c["metrics"]["vmstat-syscall.insns_per_syscall"].erase("source");
  EXPECT_NO_THROW(compare_run_variants(run, CompareSettings{}));
}

// A panic of one B boot in seven is a rate of 1/7 against 0/6 (Fisher p = 0.54): listed, not
// counted (one B-only failure was counted before, whatever its rate); panics in five of B's
// seven boots are (p = 0.016).
TEST(Compare, FailedCellsAreListedAndKernelFailuresOfBRegress) {
  auto run = make_run("r", 5, 1.0, 6);
  run["cells"].push_back({{"id", "patched-r5"},
                          {"variant", "patched"},
                          {"warmup", false},
                          {"status", "failed"},
                          {"failure_class", "panic"},
                          {"reason", "Kernel panic - not syncing: <fatal & \"bad\">"}});
  run["cells"].push_back({{"id", "vanilla-r5"},
                          {"variant", "vanilla"},
                          {"status", "failed"},
                          {"failure_class", "infrastructure"},
                          {"reason", "qemu: failed to set MSR 0x10a"}});
  run["cells"].push_back(
      {{"id", "patched-r6"},
       {"variant", "patched"},
       {"status", "invalid"},
       {"failure_class", nullptr},
       {"reason", "gate: nohz_full expected 1, effective (absent)"},
       {"gate",
        {{"pass", false},
         {"rows",
          {{{"check", "nohz_full"},
            {"expected", "1"},
            {"effective", ""},
            {"pass", false},
            {"detail", "no sysfs file"}},
           {{"check", "isolated"}, {"expected", "1"}, {"effective", "1"}, {"pass", true}}}}}}});
  Comparison c = compare_run_variants(run, CompareSettings{});
  ASSERT_EQ(c.issues.size(), 3u);
  EXPECT_EQ(c.kernel_failures_b(), 1u);
  EXPECT_EQ(c.count(Verdict::regressed), 0u);
  ASSERT_EQ(c.failures.size(), 1u);
  EXPECT_EQ(c.failures[0].failure_class, "panic");
  EXPECT_FALSE(c.failures[0].against_b);
  EXPECT_EQ(c.failures[0].b_total, 7u);  // every cell of B: 5 ok, the panic, the gate-invalid
  EXPECT_EQ(c.kernel_failure_regressions(), 0u);
  EXPECT_EQ(compare_exit_status(c), 0);
  EXPECT_THAT(unwrapped(render_text(c)),
              HasSubstr("kernel failure panic: B 1 of 7 boots, A 0 of 6 boots; "
                        "one-sided Fisher p = 0.538 (smallest possible 0.538): "
                        "not counted against B"));
  for (auto& cell : run["cells"])
    if (cell["variant"] == "patched" &&
        (cell["id"] == "patched-r0" || cell["id"] == "patched-r1" || cell["id"] == "patched-r2" ||
         cell["id"] == "patched-r3")) {
      cell["status"] = "failed";
      cell["failure_class"] = "panic";
      cell["reason"] = "Kernel panic - not syncing: <fatal & \"bad\">";
      cell.erase("metrics");
    }
  c = compare_run_variants(run, CompareSettings{});
  EXPECT_TRUE(c.failures[0].against_b) << c.failures[0].reason;
  EXPECT_EQ(c.kernel_failure_regressions(), 1u);
  EXPECT_EQ(c.regressions(), 1u);
  EXPECT_EQ(compare_exit_status(c), 1);
  const CellIssue* gate = nullptr;
  for (const auto& i : c.issues) {
    if (i.cell_id == "patched-r6") gate = &i;
    if (i.cell_id == "vanilla-r5") {
      EXPECT_FALSE(i.kernel_failure);
    }
  }
  ASSERT_NE(gate, nullptr);
  EXPECT_THAT(gate->gate_failures,
              ::testing::ElementsAre("nohz_full: expected 1, effective  (no sysfs file)"));
  const std::string text = unwrapped(render_text(c));
  EXPECT_THAT(text, HasSubstr("B patched-r5: failed (panic)"));
  EXPECT_THAT(text, HasSubstr("kernel failure: counts against B"));
  EXPECT_THAT(text, HasSubstr("kernel failure panic: B 5 of 7 boots, A 0 of 6 boots; one-sided "
                              "Fisher p = 0.0163 (smallest possible 0.0163): counted against B"));
  EXPECT_THAT(text, HasSubstr("A vanilla-r5: failed (infrastructure)"));
  EXPECT_THAT(text, HasSubstr("gate: nohz_full: expected 1"));
  const std::string junit = render_junit(c);
  EXPECT_THAT(junit, HasSubstr("name=\"kernel-health.patched\""));
  EXPECT_THAT(junit, HasSubstr("type=\"kernel-failure\""));
  EXPECT_THAT(junit, HasSubstr("&lt;fatal &amp; &quot;bad&quot;&gt;"));
  EXPECT_EQ(junit.find("<fatal"), std::string::npos);
}

TEST(Compare, WarmupAndNullValuesDoNotCount) {
  auto run = make_run("r", 3, 1.0, 7);
  auto warm = ok_cell("vanilla", 99, 99999, 400);
  warm["warmup"] = true;
  run["cells"].push_back(warm);
  auto nulls = ok_cell("patched", 98, 7400, 40);
  nulls["metrics"]["vmstat-syscall.cycles_per_syscall"]["values"] = {nullptr};
  run["cells"].push_back(nulls);
  const Comparison c = compare_run_variants(run, CompareSettings{});
  EXPECT_EQ(c.cells_a, 3u);
  EXPECT_EQ(c.cells_b, 4u);
  EXPECT_EQ(row(c, "vmstat-syscall.cycles_per_syscall").test.b.n, 3u);
  EXPECT_EQ(row(c, "latency.latency_max_us").test.b.n, 4u);
  EXPECT_LT(row(c, "vmstat-syscall.cycles_per_syscall").test.a.max, 9000);
}

TEST(Compare, MalformedInputNamesThePointer) {
  auto run = make_run("r", 3, 1.0, 8);
  run["cells"][2]["metrics"]["latency.latency_max_us"]["values"][1] = "fast";
  try {
    compare_run_variants(run, CompareSettings{});
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.pointer(), "/cells/2/metrics/latency.latency_max_us/values/1");
  }
  run = make_run("r", 3, 1.0, 8);
  run["cells"][1]["metrics"]["latency.latency_max_us"]["aggregate"] = "p99";
  try {
    compare_run_variants(run, CompareSettings{});
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.pointer(), "/cells/1/metrics/latency.latency_max_us/aggregate");
  }
  run = make_run("r", 3, 1.0, 8);
  run["cells"][0]["status"] = "exploded";
  EXPECT_THROW(compare_run_variants(run, CompareSettings{}), SpecError);
  run = make_run("r", 3, 1.0, 8);
  EXPECT_THROW(compare_runs(run, "vanilla", run, "nonesuch", CompareSettings{}, false), Error);
  EXPECT_THROW(compare_runs(run, "vanilla", run, "vanilla", CompareSettings{}, false), Error);
  EXPECT_THROW(compare_run_variants(nlohmann::json::array(), CompareSettings{}), Error);
  run["schema_version"] = 2;
  EXPECT_THROW(compare_run_variants(run, CompareSettings{}), SpecError);
}

TEST(Report, TextMarkdownAndJsonShapes) {
  const Comparison c = compare_run_variants(make_run("r1", 5, 1.10, 1),
                                            with_primary({"vmstat-syscall.cycles_per_syscall"}));
  const std::string text = render_text(c);
  EXPECT_THAT(text, HasSubstr("vmstat-syscall.cycles_per_syscall"));
  EXPECT_THAT(text, HasSubstr("change [95% CI]"));
  EXPECT_THAT(text, HasSubstr("regressed"));
  EXPECT_THAT(text, HasSubstr("cells: A 5, B 5"));
  EXPECT_THAT(text, HasSubstr("exit status 1"));
  const std::string md = render_markdown(c);
  EXPECT_THAT(
      md, HasSubstr(
              "| metric | unit | A median | B median | change [CI] | p | adj p | nA | nB | role | "
              "verdict |"));
  EXPECT_THAT(md, HasSubstr("| 5 | 5 | primary | **regressed** |"));
  EXPECT_THAT(md, HasSubstr("**regressed**"));
  const auto j = render_json(c);
  EXPECT_EQ(j["schema"], "isolab-comparison");
  EXPECT_EQ(j["summary"]["exit_status"], 1);
  EXPECT_EQ(j["summary"]["primary_regressions"], 1);
  EXPECT_EQ(j["summary"]["secondary"]["regressed"], 1);  // latency max: reported, not the exit
  EXPECT_THAT(j["summary"]["basis"].get<std::string>(),
              HasSubstr("rests on 1 primary metric (one-sided)"));
  EXPECT_EQ(j["metrics"][1]["a"]["n"], 5);
  EXPECT_EQ(j["metrics"][1]["role"], "primary");
  EXPECT_EQ(j["metrics"][1]["family"], "discrete-step-down");
  EXPECT_EQ(j["budget"]["entries"][0]["channel"], "primary");
  EXPECT_EQ(j["metrics"][0]["family"], "westfall-young");
  EXPECT_TRUE(j["metrics"][1]["interval"]["low_bounded"].get<bool>());
  EXPECT_EQ(j["metrics"][1]["test"], "midrank-permutation");
  EXPECT_EQ(j["metrics"][1]["a"]["values"].size(), 5u);
  EXPECT_TRUE(j["tails"][0]["a"]["p99"].is_number());
  EXPECT_EQ(parse_report_format("junit"), ReportFormat::junit);
  EXPECT_THROW(parse_report_format("html5"), Error);
}

TEST(Report, MarkdownEscapesTableBreakers) {
  auto run = make_run("r|1", 3, 1.0, 9);
  const Comparison c = compare_run_variants(run, CompareSettings{});
  EXPECT_THAT(render_markdown(c), HasSubstr("run r\\|1"));
}

TEST(Report, XmlEscapeHandlesSpecialsControlsAndBadUtf8) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape(std::string("x\x01y\x1b[0m\tz")), "x?y?[0m\tz");
  EXPECT_EQ(xml_escape("latency \xC2\xB5s"), "latency \xC2\xB5s");  // µ kept
  EXPECT_EQ(xml_escape("bad \xC3 byte \xFF"), "bad ? byte ?");
  EXPECT_EQ(xml_escape("\xC0\xAF"), "??");  // overlong '/'
}

// Minimal well-formedness check: every tag closes in order, attributes are quoted, and no raw
// '<' or '&' that is not an entity appears in text.
bool well_formed(const std::string& xml, std::string* why) {
  std::vector<std::string> stack;
  std::size_t i = xml.find("?>");
  if (xml.rfind("<?xml", 0) != 0 || i == std::string::npos) {
    *why = "no XML declaration";
    return false;
  }
  i += 2;
  while (i < xml.size()) {
    if (xml[i] == '&') {
      const std::size_t semi = xml.find(';', i);
      const std::string ent = xml.substr(i, semi == std::string::npos ? 0 : semi - i + 1);
      if (ent != "&lt;" && ent != "&gt;" && ent != "&amp;" && ent != "&quot;" && ent != "&apos;") {
        *why = "bad entity at " + std::to_string(i);
        return false;
      }
      i = semi + 1;
      continue;
    }
    if (xml[i] != '<') {
      ++i;
      continue;
    }
    const std::size_t end = xml.find('>', i);
    if (end == std::string::npos) {
      *why = "unterminated tag";
      return false;
    }
    std::string tag = xml.substr(i + 1, end - i - 1);
    if (tag.find('<') != std::string::npos) {
      *why = "raw '<' inside tag at " + std::to_string(i);
      return false;
    }
    std::size_t quotes = std::count(tag.begin(), tag.end(), '"');
    if (quotes % 2) {
      *why = "unbalanced quotes in <" + tag + ">";
      return false;
    }
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name) {
        *why = "</" + name + "> does not close " + (stack.empty() ? "nothing" : stack.back());
        return false;
      }
      stack.pop_back();
    } else if (tag.back() != '/') {
      stack.push_back(tag.substr(0, tag.find_first_of(" \t\n")));
    }
    i = end + 1;
  }
  if (!stack.empty()) {
    *why = "unclosed <" + stack.back() + ">";
    return false;
  }
  return true;
}

std::size_t count_of(const std::string& s, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

TEST(Report, JunitIsWellFormedAndCountsMatch) {
  auto run = make_run("r<&>", 5, 1.10, 1);
  run["spec_name"] = "spec \"quoted\" & <odd>";
  run["cells"].push_back({{"id", "patched-x"},
                          {"variant", "patched"},
                          {"status", "failed"},
                          {"failure_class", "oops"},
                          {"reason", std::string("Oops: \x01\x02 ]]> <!-- &")}});
  auto one = make_run("r2", 1, 1.0, 2);  // n=1 each: every metric skipped
  for (const auto& c : {compare_run_variants(run, CompareSettings{}),
                        compare_run_variants(one, CompareSettings{})}) {
    const std::string xml = render_junit(c);
    std::string why;
    EXPECT_TRUE(well_formed(xml, &why)) << why << "\n" << xml;
    EXPECT_EQ(count_of(xml, "<testcase "), c.metrics.size() + 1 + (c.gate.empty() ? 0 : 1));
    // Only what the exit status rests on fails: primary regressions, failures against B.
    EXPECT_EQ(count_of(xml, "<failure "), c.primary_regressions() +
                                              (c.kernel_failure_regressions() ? 1 : 0) +
                                              (c.gate_regressions() ? 1 : 0));
    EXPECT_THAT(xml, HasSubstr(".secondary\" name=\"latency.latency_max_us\""));
    EXPECT_EQ(count_of(xml, "<skipped "), c.count(Verdict::inconclusive));
    EXPECT_THAT(xml,
                HasSubstr("skipped=\"" + std::to_string(c.count(Verdict::inconclusive)) + "\""));
  }
}

TEST(Report, JunitValidatesAgainstTheSchemaWithXmllint) {
  auto runner = make_real_runner();
  ProcessSpec probe;
  probe.argv = {"xmllint", "--version"};
  // scripts/setup.sh installs xmllint (libxml2-utils): its absence is a setup failure.
  ASSERT_TRUE(runner->run(probe).ok()) << "xmllint not installed (apt libxml2-utils)";
  auto run = make_run("r<1>", 5, 1.10, 1);
  run["cells"].push_back({{"id", "patched-x"},
                          {"variant", "patched"},
                          {"status", "failed"},
                          {"failure_class", "panic"},
                          {"reason", std::string("panic \x07 & <x>")}});
  const auto dir =
      std::filesystem::temp_directory_path() / ("isolab-junit-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  int n = 0;
  for (const auto& c : {compare_run_variants(run, CompareSettings{}),
                        compare_run_variants(make_run("r2", 1, 1.0, 2), CompareSettings{}),
                        compare_runs(run, "vanilla", make_run("r3", 5, 1.0, 3, "tcg"), "patched",
                                     CompareSettings{}, true)}) {
    const auto file = dir / ("report" + std::to_string(n++) + ".xml");
    write_file_atomic(file, render_junit(c));
    ProcessSpec spec;
    spec.argv = {"xmllint", "--noout", "--schema", (kData / "junit.xsd").string(), file.string()};
    const ProcessResult r = runner->run(spec);
    EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.err << r.out;
  }
  // The schema does reject a report without the required attributes.
  const auto bad = dir / "bad.xml";
  write_file_atomic(bad,
                    "<?xml version=\"1.0\"?><testsuites><testsuite name=\"x\"><testcase/>"
                    "</testsuite></testsuites>\n");
  ProcessSpec spec;
  spec.argv = {"xmllint", "--noout", "--schema", (kData / "junit.xsd").string(), bad.string()};
  EXPECT_FALSE(runner->run(spec).ok());
  std::filesystem::remove_all(dir);
}

class CommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("isolab-compare-cmd-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path put(const std::string& name, const nlohmann::json& run) {
    write_file_atomic(dir_ / name / "result.json", run.dump());
    return dir_ / name;
  }
  std::filesystem::path dir_;
};

TEST_F(CommandTest, ExitStatusContract) {
  std::ostringstream out, err;
  CompareCommandOptions o;
  o.run_dirs = {put("same", make_run("same", 5, 1.0, 21))};
  EXPECT_EQ(compare_command(o, out, err), 0) << err.str() << out.str();
  // +10% cycles and latency: without a declared primary metric they are secondary and the exit
  // status is 0; declared in the spec, or with --primary, they set it.
  auto slow = make_run("slow", 5, 1.10, 22);
  o.run_dirs = {put("slow", slow)};
  EXPECT_EQ(compare_command(o, out, err), 0);
  o.primary = {"vmstat-syscall.cycles_per_syscall:higher"};
  EXPECT_EQ(compare_command(o, out, err), 1) << err.str();
  o.primary = {"vmstat-syscall.cycles_per_syscall:lower"};  // faster is bad: not regressed
  out.str("");
  EXPECT_EQ(compare_command(o, out, err), 0) << err.str();
  // An improved primary shows the p of the good direction's family, not the bad one's (1).
  EXPECT_THAT(out.str(), HasSubstr("improved, step-down p = 0.004"));
  o.primary.clear();
  slow["spec"] = {
      {"compare", {{"primary", {{{"metric", "latency.latency_max_us"}, {"bad", "higher"}}}}}}};
  o.run_dirs = {put("slow-spec", slow)};
  out.str("");
  EXPECT_EQ(compare_command(o, out, err), 1);
  EXPECT_THAT(unwrapped(out.str()),
              HasSubstr("primary: latency.latency_max_us: 40 -> 44 us (+10.00%), "
                        "regressed, step-down p = 0.004"));
  // A primary metric in no cell, or a bad --primary, is an error (2), not a silent 0.
  o.primary = {"vmstat-syscall.cycles_per_sycsall:higher"};
  err.str("");
  EXPECT_EQ(compare_command(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("primary metric vmstat-syscall.cycles_per_sycsall (--primary "
                                   "vmstat-syscall.cycles_per_sycsall:higher) is in no "
                                   "contributing cell"));
  o.primary = {"vmstat-syscall.cycles_per_syscall"};
  err.str("");
  EXPECT_EQ(compare_command(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("expected METRIC[@CPUS]:higher|lower"));
  o.primary.clear();
  // Refused: unlike runs without --force.
  o.run_dirs = {put("a", make_run("a", 5, 1.0, 23, "tcg")),
                put("b", make_run("b", 5, 1.0, 24, "kvm"))};
  err.str("");
  EXPECT_EQ(compare_command(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("accelerator: A=tcg, B=kvm"));
  o.force = true;
  out.str("");
  EXPECT_EQ(compare_command(o, out, err), 0);
  EXPECT_THAT(out.str(), HasSubstr("FORCED"));
  // Errors: missing dir, bad JSON, bad format, bad spec compare section.
  o = {};
  o.run_dirs = {dir_ / "nonesuch"};
  err.str("");
  EXPECT_EQ(compare_command(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("nonesuch"));
  write_file_atomic(dir_ / "junk" / "result.json", "{\"run_id\": \x01\x02 nan}");
  o.run_dirs = {dir_ / "junk"};
  err.str("");
  EXPECT_EQ(compare_command(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("not valid JSON"));
  o.run_dirs = {dir_ / "same"};
  o.format = "html";
  EXPECT_EQ(compare_command(o, out, err), 2);
  auto bad = make_run("bad", 5, 1.0, 25);
  bad["spec"] = {{"compare", {{"alpha", 2}}}};
  o.run_dirs = {put("bad", bad)};
  o.format = "text";
  err.str("");
  EXPECT_EQ(compare_command(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("/spec/compare/alpha"));
}

TEST_F(CommandTest, SpecCompareSectionAndVariantsAndJunit) {
  auto run = make_run("t", 5, 1.10, 26);
  run["spec"] = {{"compare", {{"thresholds_pct", {{"vmstat-syscall.*", 20}, {"latency.*", 20}}}}}};
  std::ostringstream out, err;
  CompareCommandOptions o;
  o.run_dirs = {put("t", run)};
  EXPECT_EQ(compare_command(o, out, err), 0) << out.str();  // 10% < 20% threshold
  o.variant_a = "patched";
  o.variant_b = "vanilla";
  o.format = "junit";
  out.str("");
  EXPECT_EQ(compare_command(o, out, err), 0);
  EXPECT_THAT(out.str(), HasSubstr("<testsuites"));
  o.variant_b = "nonesuch";
  err.str("");
  EXPECT_EQ(compare_command(o, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("nonesuch"));
}

// ---- count metrics and the summary ----

// A cell of the vmstat-syscall workload under TCG: cycles per syscall (timing) and two per-CPU
// rates on isolated CPUs 5-7 as the trace parser writes them.
nlohmann::json count_cell(const std::string& variant, int rep, double cycles,
                          const std::vector<double>& vmstat_per_cpu) {
  auto c = ok_cell(variant, rep, cycles, 40, "tcg");
  c["metrics"].erase("latency.latency_max_us");
  c.erase("histograms");
  c["metrics"]["vmstat-syscall.noise.vmstat_update_per_s"] = {
      {"unit", "1/s"},     {"better", "lower"}, {"aggregate", "mean"},     {"kind", "count"},
      {"cpus", {5, 6, 7}}, {"window_s", 5.0},   {"values", vmstat_per_cpu}};
  c["metrics"]["vmstat-syscall.noise.local_timer_per_s"] = {
      {"unit", "1/s"},   {"better", "lower"}, {"aggregate", "mean"},
      {"kind", "count"}, {"cpus", {5, 6, 7}}, {"values", {0, 0, 0}}};
  return c;
}

// Vanilla: vmstat_update on one isolated CPU per boot, 0.98/s per CPU on average over the boots
// (per-boot means 0.8, 1.2, 1.0, 0.6, 1.3); patched: 0. Cycles per syscall +10% under TCG.
nlohmann::json vmstat_count_run() {
  const std::vector<double> a_rates = {2.4, 3.6, 3.0, 1.8, 3.9};
  const std::vector<double> cycles = {7400, 7410, 7390, 7405, 7395};
  nlohmann::json cells = nlohmann::json::array();
  for (int r = 0; r < 5; ++r) {
    cells.push_back(count_cell("vanilla", r, cycles[r], {a_rates[r], 0, 0}));
    cells.push_back(count_cell("patched", r, cycles[r] * 1.10, {0, 0, 0}));
  }
  auto run = make_run("rc", 1, 1.0, 1, "tcg");
  run["cells"] = cells;
  return run;
}

TEST(CountMetrics, VmstatUpdateToZeroIsImprovedAndSaidFirst) {
  const Comparison c = compare_run_variants(vmstat_count_run(), CompareSettings{});
  const auto& vm = row(c, "vmstat-syscall.noise.vmstat_update_per_s");
  EXPECT_EQ(vm.kind, MetricKind::count);
  EXPECT_THAT(vm.cpus, ::testing::ElementsAre(5u, 6u, 7u));
  EXPECT_TRUE(vm.tcg);
  ASSERT_TRUE(vm.test.count);
  EXPECT_NEAR(vm.test.count->mean_a, 0.98, 1e-12);
  EXPECT_DOUBLE_EQ(vm.test.count->mean_b, 0);
  EXPECT_DOUBLE_EQ(vm.test.p_value(), 2.0 / 252.0);
  // Secondary, family-wise over the 9 rows: the rows that moved move together (2/252).
  EXPECT_DOUBLE_EQ(*vm.test.family_p, 2.0 / 252.0);
  EXPECT_EQ(vm.verdict.verdict, Verdict::improved) << vm.verdict.reason;
  // Per-CPU rows: CPU 5 carries every event (2.94/s), CPUs 6 and 7 none.
  const auto& cpu5 = row(c, "vmstat-syscall.noise.vmstat_update_per_s[cpu5]");
  EXPECT_TRUE(cpu5.derived);
  EXPECT_THAT(cpu5.cpus, ::testing::ElementsAre(5u));
  EXPECT_NEAR(cpu5.test.count->mean_a, 2.94, 1e-12);
  EXPECT_EQ(cpu5.verdict.verdict, Verdict::improved);
  // 0 in every boot of both: these boots cannot see a rare effect (it was "no change").
  EXPECT_EQ(row(c, "vmstat-syscall.noise.vmstat_update_per_s[cpu6]").verdict.verdict,
            Verdict::inconclusive);
  const auto& timer = row(c, "vmstat-syscall.noise.local_timer_per_s");
  EXPECT_EQ(timer.verdict.verdict, Verdict::inconclusive);
  EXPECT_THAT(timer.verdict.reason, HasSubstr("0 in every boot of both variants: an effect in "
                                              "fewer than 45% of B's 5 boots"));
  // +10% cycles under TCG: significant, but inside the TCG timing threshold: a change below it.
  const auto& cyc = row(c, "vmstat-syscall.cycles_per_syscall");
  EXPECT_EQ(cyc.verdict.verdict, Verdict::changed_below) << cyc.verdict.reason;
  EXPECT_THAT(cyc.verdict.reason, HasSubstr("TCG timing threshold"));
  EXPECT_EQ(compare_exit_status(c), 0);

  const auto lines = summarize(c);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_THAT(lines[0].text, HasSubstr("exit status 0: rests on no primary metric (none "
                                       "declared"));
  EXPECT_EQ(lines[1].text,
            "secondary: vmstat-syscall: vmstat_update on CPUs 5-7: 0.98/s -> 0/s, improved, "
            "family-wise p = 0.008");
  EXPECT_EQ(lines[2].text,
            "secondary: vmstat-syscall: vmstat_update on CPU 5: 2.94/s -> 0/s, improved, "
            "family-wise p = 0.008");
  EXPECT_EQ(lines[3].text,
            "secondary: no significant change in 0 of 9 metric rows (8 of them counts on the "
            "isolated CPUs), 1 changed below threshold, 6 inconclusive; family-wise p by "
            "Westfall-Young min-P over 252 relabellings of the boots (all of them)");
  EXPECT_EQ(lines[3].detail["changed_below"], 1);

  const std::string text = unwrapped(render_text(c));
  const auto said = text.find("vmstat-syscall: vmstat_update on CPUs 5-7: 0.98/s -> 0/s");
  ASSERT_NE(said, std::string::npos) << text;
  EXPECT_LT(said, text.find("A median"));
  EXPECT_LT(said, text.find("count metrics on the isolated CPUs"));
  EXPECT_THAT(text, HasSubstr("-0.98/s ["));
  EXPECT_THAT(text, HasSubstr("(-100.00%)"));
  EXPECT_THAT(text, HasSubstr("TCG timing threshold"));  // why: significant but held back
  EXPECT_THAT(text, HasSubstr("secondary: 0 regressed, 2 improved, 1 changed below threshold, 0 "
                              "no significant change, 6 inconclusive"));

  const std::string md = render_markdown(c);
  const auto md_said =
      md.find("- secondary: vmstat-syscall: vmstat_update on CPUs 5-7: 0.98/s -> 0/s");
  ASSERT_NE(md_said, std::string::npos) << md;
  EXPECT_LT(md_said, md.find("| metric |"));
  EXPECT_THAT(md, HasSubstr("| vmstat-syscall.noise.vmstat_update_per_s | 1/s | 5-7 | 0.98 | 0 |"));

  const auto j = render_json(c);
  EXPECT_EQ(j["summary"]["exit_status"], 0);
  ASSERT_EQ(j["summary"]["lines"].size(), 4u);
  const auto& first = j["summary"]["lines"][1];
  EXPECT_EQ(first["metric"], "vmstat-syscall.noise.vmstat_update_per_s");
  EXPECT_EQ(first["kind"], "count");
  EXPECT_EQ(first["role"], "secondary");
  EXPECT_EQ(first["verdict"], "improved");
  EXPECT_EQ(first["cpus"], "5-7");
  EXPECT_DOUBLE_EQ(first["b"].get<double>(), 0);
  EXPECT_EQ(j["summary"]["lines"][3]["inconclusive"], 6);
  for (const auto& m : j["metrics"]) {
    if (m["name"] != "vmstat-syscall.noise.vmstat_update_per_s") continue;
    EXPECT_EQ(m["kind"], "count");
    EXPECT_EQ(m["test"], "permutation-mean");
    EXPECT_NEAR(m["p_value"].get<double>(), 2.0 / 252.0, 1e-15);
    EXPECT_DOUBLE_EQ(m["count"]["relative_change_pct"].get<double>(), -100);
    EXPECT_EQ(m["count"]["new"], false);
    EXPECT_EQ(m["interval"]["unit"], "1/s");
  }
}

TEST(CountMetrics, ZeroToRateIsNewAndTimingChangesAreListed) {
  // B against A swapped: vmstat_update appears ("new"); on KVM the -9% cycles change is an
  // improvement and gets its own line after the count lines. All secondary: exit 0.
  auto run = vmstat_count_run();
  for (auto& c : run["cells"]) c["accelerator"] = "kvm";
  run["comparison_key"]["accelerator"] = "kvm";
  run["variant_order"] = {"patched", "vanilla"};
  const Comparison c = compare_run_variants(run, CompareSettings{});
  const auto lines = summarize(c);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[1].text,
            "secondary: vmstat-syscall: vmstat_update on CPUs 5-7: 0/s -> 0.98/s (new), regressed, "
            "family-wise p = 0.008");
  EXPECT_THAT(lines[3].text,
              HasSubstr("secondary: vmstat-syscall.cycles_per_syscall: 8140 -> 7400 cycles"));
  EXPECT_THAT(lines[3].text, HasSubstr("improved"));
  EXPECT_THAT(report_detail::format_change(row(c, "vmstat-syscall.noise.vmstat_update_per_s")),
              HasSubstr("(new)"));
  EXPECT_EQ(compare_exit_status(c), 0);
  const nlohmann::json rendered = render_json(c);  // alive through the loop
  for (const auto& m : rendered["metrics"]) {
    if (m["name"] == "vmstat-syscall.noise.vmstat_update_per_s") {
      EXPECT_TRUE(m["count"]["new"].get<bool>());
    }
  }
  // Declared primary on the workload's CPU (the event is on CPU 5 only): one-sided 1/252.
  CompareSettings s;
  s.primary = {primary_from_argument("vmstat-syscall.noise.vmstat_update_per_s@5:higher")};
  s.primary_origin = "--primary";
  const Comparison p = compare_run_variants(run, s);
  EXPECT_EQ(compare_exit_status(p), 1);
  const auto& cpu5 = row(p, "vmstat-syscall.noise.vmstat_update_per_s[cpu5]");
  EXPECT_TRUE(cpu5.primary);
  EXPECT_EQ(summarize(p)[1].text,
            "primary: vmstat-syscall: vmstat_update on CPU 5: 0/s -> 2.94/s (new), regressed, "
            "step-down p = 0.004");
}

TEST(CountMetrics, OlderFilesByUnitAndBadFieldsNameTheirPointer) {
  // Unit "count" without "kind" (the trace parser's per-boot sums): a count metric, no "cpus".
  auto run = make_run("r", 5, 1.0, 4);
  for (auto& c : run["cells"]) {
    const bool a = c["variant"] == "vanilla";
    c["metrics"]["trace.noise.vmstat_update"] = {{"unit", "count"},
                                                 {"better", "lower"},
                                                 {"aggregate", "sum"},
                                                 {"values", {a ? 3 : 0, a ? 2 : 0, 0}}};
  }
  const Comparison c = compare_run_variants(run, CompareSettings{});
  const auto& vm = row(c, "trace.noise.vmstat_update");
  EXPECT_EQ(vm.kind, MetricKind::count);
  EXPECT_EQ(vm.verdict.verdict, Verdict::improved) << vm.verdict.reason;
  // Secondary, family-wise with the (unrelated) cycles row: 4/252.
  EXPECT_EQ(summarize(c)[1].text,
            "secondary: trace: vmstat_update: 5 -> 0, improved, family-wise p = 0.016");

  auto pointer_of = [](nlohmann::json r) {
    try {
      compare_run_variants(r, CompareSettings{});
    } catch (const SpecError& e) {
      return e.pointer();
    }
    return std::string("(no error)");
  };
  auto bad = vmstat_count_run();
  bad["cells"][3]["metrics"]["vmstat-syscall.noise.vmstat_update_per_s"]["kind"] = "rate";
  EXPECT_EQ(pointer_of(bad), "/cells/3/metrics/vmstat-syscall.noise.vmstat_update_per_s/kind");
  bad = vmstat_count_run();
  bad["cells"][2]["metrics"]["vmstat-syscall.noise.vmstat_update_per_s"]["cpus"] = {5, -1};
  EXPECT_EQ(pointer_of(bad), "/cells/2/metrics/vmstat-syscall.noise.vmstat_update_per_s/cpus/1");
  bad = vmstat_count_run();
  bad["cells"][0]["metrics"]["vmstat-syscall.noise.vmstat_update_per_s"]["values"] = {1, -0.5, 0};
  EXPECT_EQ(pointer_of(bad), "/cells/0/metrics/vmstat-syscall.noise.vmstat_update_per_s/values/1");
  bad = vmstat_count_run();
  bad["cells"][4]["metrics"]["vmstat-syscall.noise.vmstat_update_per_s"].erase("kind");
  bad["cells"][4]["metrics"]["vmstat-syscall.noise.vmstat_update_per_s"]["unit"] = "us";
  EXPECT_EQ(pointer_of(bad), "/cells/4/metrics/vmstat-syscall.noise.vmstat_update_per_s");
}

}  // namespace
}  // namespace isolab

namespace isolab {
namespace {

const std::filesystem::path kBuildLogs =
    std::filesystem::path(ISOLAB_TEST_DATA_DIR) / "kernel" / "build-warning";

nlohmann::json warnings_json(const std::string& log_name) {
  const std::string log = read_file(kBuildLogs / log_name);
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& w : parse_build_warnings(log, build_log_source_dir(log)))
    arr.push_back(build_warning_to_json(w));
  return arr;
}

// Build warnings as a kernel test robot reports them (docs/examples/madvise-latency.md):
// the real logs of the cached vanilla build and of the planted-warning build. B adds
// one warning in mm/vmstat.c, which its series touches: listed and counted against B. Line
// numbers do not take part in the match: the same warning moved by a patch is not new.
TEST(CompareBuildWarnings, NewWarningInATouchedFileCountsAgainstB) {
  auto run = make_run("r-warn", 3, 1.0, 7);
  run["variants"]["vanilla"]["build_warnings"] = warnings_json("vanilla-6.1.log");
  run["variants"]["vanilla"]["touched_files"] = nlohmann::json::array();
  run["variants"]["patched"]["build_warnings"] = warnings_json("planted-6.1.log");
  run["variants"]["patched"]["touched_files"] = nlohmann::json::array({"mm/vmstat.c"});
  const Comparison c = compare_run_variants(run, CompareSettings{});
  ASSERT_TRUE(c.new_warnings.has_value());
  ASSERT_EQ(c.new_warnings->size(), 1u);
  const auto& w = c.new_warnings->front();
  EXPECT_EQ(w.warning.file, "mm/vmstat.c");
  EXPECT_EQ(w.warning.klass, "-Wunused-variable");
  EXPECT_EQ(w.warning.message, "unused variable 'planted_unused'");
  EXPECT_TRUE(w.in_touched_file);
  EXPECT_EQ(c.new_warnings_in_touched_files(), 1u);
  EXPECT_EQ(compare_exit_status(c), 1);
  const std::string text = render_text(c);
  EXPECT_THAT(text, HasSubstr("mm/vmstat.c:2011:13: warning: unused variable 'planted_unused' "
                              "[-Wunused-variable]  [new in a file the series touches"));
  EXPECT_THAT(text, HasSubstr("1 new build warning(s) of patched in files its series touches"));
  EXPECT_THAT(render_junit(c), HasSubstr("type=\"new-build-warning\""));

  // The same warning on another line in A is not new; in a file B does not touch it is listed
  // but does not count.
  auto moved = run;
  auto shifted = moved["variants"]["patched"]["build_warnings"];
  for (auto& x : shifted) x["line"] = x["line"].get<int>() + 40;
  moved["variants"]["vanilla"]["build_warnings"] = shifted;
  EXPECT_TRUE(compare_run_variants(moved, CompareSettings{}).new_warnings->empty());
  auto untouched = run;
  untouched["variants"]["patched"]["touched_files"] =
      nlohmann::json::array({"kernel/sched/core.c"});
  const Comparison u = compare_run_variants(untouched, CompareSettings{});
  ASSERT_EQ(u.new_warnings->size(), 1u);
  EXPECT_FALSE(u.new_warnings->front().in_touched_file);
  EXPECT_EQ(compare_exit_status(u), 0);
  // Runs without recorded warnings compare as before.
  EXPECT_FALSE(compare_run_variants(make_run("r-old", 3, 1.0, 7), CompareSettings{})
                   .new_warnings.has_value());
}

TEST(CompareBuildWarnings, MalformedWarningNamesItsPointer) {
  auto run = make_run("r-bad", 3, 1.0, 7);
  run["variants"]["patched"]["build_warnings"] = nlohmann::json::array({{{"file", 3}}});
  try {
    extract_variant(run, "patched");
    FAIL() << "no error";
  } catch (const SpecError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("/variants/patched/build_warnings/0"));
  }
}

TEST(Compare, LatencyTracesAreListedPerVariantWithTopFrames) {
  auto run = make_run("r", 3, 1.0, 11);
  run["cells"][0]["latency_traces"]["shared"] = {
      {"tracer", "wakeup_rt"},
      {"max_latency_us", 1969},
      {"task", "cyclictest-250"},
      {"cpu", 1},
      {"switch_frames",
       {"__schedule+0x1a/0x80", "preempt_schedule+0x10/0x20", "migrate_enable+0x5/0x9",
        "rt_spin_unlock+0x1/0x2", "madvise_cold_or_pageout_pte_range+0x3/0x4", "walk_pgd_range",
        "__walk_page_range", "walk_page_range", "madvise_pageout"}},
      {"file", "cells/vanilla-r0/shared.wakeup_rt.trace"}};
  run["cells"][1]["latency_traces"]["shared"] = {
      {"tracer", "wakeup_rt"}, {"max_latency_us", 879}, {"switch_frames", nlohmann::json::array()}};
  run["cells"][2]["latency_traces"]["shared"] = {{"tracer", "wakeup_rt"},
                                                 {"max_latency_us", "broken"}};  // skipped
  Comparison c = compare_run_variants(run, CompareSettings{});
  ASSERT_EQ(c.latency_traces.size(), 2u);
  EXPECT_EQ(c.latency_traces[0].side, 0);
  EXPECT_EQ(c.latency_traces[0].frames[0], "__schedule");
  std::string text = render_text(c);
  EXPECT_THAT(text, HasSubstr("max-latency traces (wakeup_rt"));
  EXPECT_THAT(text, HasSubstr("vanilla vanilla-r0 shared: 1969 us, cyclictest-250 on CPU 1: "
                              "__schedule < preempt_schedule < migrate_enable < rt_spin_unlock < "
                              "madvise_cold_or_pageout_pte_range < walk_pgd_range < "
                              "__walk_page_range < walk_page_range < ..."));
  EXPECT_THAT(text, HasSubstr("patched patched-r0 shared: 879 us: (no stack trace)"));
  auto j = render_json(c);
  ASSERT_EQ(j["latency_traces"].size(), 2u);
  EXPECT_EQ(j["latency_traces"][0]["file"], "cells/vanilla-r0/shared.wakeup_rt.trace");
  EXPECT_THAT(render_markdown(c), HasSubstr("Max-latency traces (wakeup_rt"));
}

}  // namespace
}  // namespace isolab

namespace isolab {
namespace {

// A multi-host run (its "hosts" as the MultiHost vm test recorded them: two session libvirtd on
// this machine) against a run on this machine: the host difference names the hosts, not the
// orchestrating machine's fields.
TEST(ComparisonKey, MultiHostRunNamesItsHosts) {
  const nlohmann::json host_entry = {{"arch", "x86_64"},
                                     {"cpu_model", "Broadwell-noTSX-IBRS"},
                                     {"cpu_vendor", "Intel"},
                                     {"cpus", 2},
                                     {"hostname", "vm"},
                                     {"hypervisor", "QEMU"},
                                     {"hypervisor_version", "7.2.22"},
                                     {"kvm", false},
                                     {"libvirt_version", "9.0.0"}};
  const nlohmann::json local_host = {
      {"cpu_model", "Intel(R) Xeon(R) Processor"}, {"nproc", 2}, {"accelerator", "tcg"}};
  nlohmann::json multi = {
      {"schema_version", 1},
      {"host", local_host},
      {"hosts",
       {host_entry, host_entry, {{"uri", "qemu+ssh://gone/system"}, {"error", "unreachable"}}}},
      {"comparison_key", {{"host_fingerprint_sha256", "aa"}}}};
  nlohmann::json local = {{"schema_version", 1},
                          {"host", local_host},
                          {"comparison_key", {{"host_fingerprint_sha256", "bb"}}}};
  EXPECT_THAT(comparison_key_differences(multi, local),
              ::testing::Contains("host: hosts A=Broadwell-noTSX-IBRS x2 (QEMU 7.2.22) + "
                                  "Broadwell-noTSX-IBRS x2 (QEMU 7.2.22), B=this machine (Intel(R) "
                                  "Xeon(R) Processor)"));
}

}  // namespace
}  // namespace isolab
