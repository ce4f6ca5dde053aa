// What the exit status of compare rests on: declared primary metrics (Holm over them, per-CPU
// selections), kernel failures weighed per class and as rates under TCG or overcommit, the
// isolation gate per check, metrics missing in B, instruction metrics, and the A/A relabelling
// that measures the false-alarm rate of these rules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "calibrate/relabel_aa.h"
#include "cli/compare.h"
#include "compare/compare.h"
#include "report/aa_relabel.h"
#include "report/render.h"
#include "stats/multiplicity.h"
#include "unwrapped.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

// A cell with a per-CPU count metric on CPUs 5-7 and a timing.
nlohmann::json cell(const std::string& variant, int rep, const std::vector<double>& per_cpu,
                    double cycles, const std::string& accelerator = "tcg") {
  return {{"id", variant + "-r" + std::to_string(rep)},
          {"variant", variant},
          {"warmup", false},
          {"status", "ok"},
          {"accelerator", accelerator},
          {"metrics",
           {{"idle.noise.vmstat_update_per_s",
             {{"unit", "1/s"},
              {"better", "lower"},
              {"kind", "count"},
              {"cpus", {5, 6, 7}},
              {"values", per_cpu}}},
            {"idle.cycles", {{"unit", "cycles"}, {"better", "lower"}, {"values", {cycles}}}}}}};
}

nlohmann::json failed_cell(const std::string& variant, int rep, const std::string& klass,
                           const std::string& reason, const std::string& accelerator = "tcg") {
  return {{"id", variant + "-f" + std::to_string(rep)},
          {"variant", variant},
          {"warmup", false},
          {"status", "failed"},
          {"accelerator", accelerator},
          {"failure_class", klass},
          {"reason", reason}};
}

// n cells per variant: A has no vmstat_update; B has `b_cpu5` per second on CPU 5 only.
nlohmann::json run_with(int n, double b_cpu5, const std::string& accelerator = "tcg") {
  nlohmann::json cells = nlohmann::json::array();
  for (int r = 0; r < n; ++r) {
    cells.push_back(cell("a", r, {0, 0, 0}, 1000 + r, accelerator));
    cells.push_back(cell("b", r, {b_cpu5 * (1 + 0.1 * r), 0, 0}, 1001 + r, accelerator));
  }
  return {{"schema_version", 1},
          {"run_id", "r"},
          {"variant_order", {"a", "b"}},
          {"variants", {{"a", nlohmann::json::object()}, {"b", nlohmann::json::object()}}},
          {"cells", cells}};
}

const MetricRow& row(const Comparison& c, const std::string& name) {
  for (const auto& r : c.metrics)
    if (r.name == name) return r;
  throw std::runtime_error("no row " + name);
}

CompareSettings primary(const std::string& arg) {
  CompareSettings s;
  s.primary = {primary_from_argument(arg)};
  s.primary_origin = "--primary";
  return s;
}

// ---- per-CPU rows and primary selections ----

// 0.25 events/s on CPU 5 only: the mean over the 3 traced CPUs is 0.083/s, below the 0.1/s per
// CPU floor, so the metric's own row cannot call it; the CPU 5 row can, with the floor per CPU.
TEST(PerCpu, AChangeOnTheWorkloadsCpuIsNotDividedByThree) {
  const nlohmann::json run = run_with(5, 0.25);
  const Comparison c = compare_run_variants(run, primary("idle.noise.vmstat_update_per_s:higher"));
  const auto& whole = row(c, "idle.noise.vmstat_update_per_s");
  EXPECT_NE(whole.verdict.verdict, Verdict::regressed) << whole.verdict.reason;
  EXPECT_THAT(whole.verdict.reason, HasSubstr("<= floor 0.1/s"));
  const Comparison per_cpu =
      compare_run_variants(run, primary("idle.noise.vmstat_update_per_s@5:higher"));
  const auto& cpu5 = row(per_cpu, "idle.noise.vmstat_update_per_s[cpu5]");
  EXPECT_TRUE(cpu5.primary);
  EXPECT_EQ(cpu5.verdict.verdict, Verdict::regressed) << cpu5.verdict.reason;
  EXPECT_EQ(compare_exit_status(per_cpu), 1);
  EXPECT_EQ(compare_exit_status(c), 0);
  // Without a declaration the per-CPU rows are there, secondary.
  const Comparison plain = compare_run_variants(run, CompareSettings{});
  EXPECT_FALSE(row(plain, "idle.noise.vmstat_update_per_s[cpu7]").primary);
  EXPECT_EQ(plain.metrics.size(), 5u);  // cycles, the metric, its 3 CPUs
}

TEST(PerCpu, SelectionOfSeveralCpusIsTheMeanOfTheirValues) {
  nlohmann::json run = run_with(5, 0.3);
  const Comparison c =
      compare_run_variants(run, primary("idle.noise.vmstat_update_per_s@5-6:higher"));
  const auto& sel = row(c, "idle.noise.vmstat_update_per_s[cpu5-6]");
  EXPECT_TRUE(sel.derived);
  ASSERT_EQ(sel.b_values.size(), 5u);
  EXPECT_DOUBLE_EQ(sel.b_values[0], 0.15);  // (0.3 + 0) / 2
  EXPECT_THAT(sel.cpus, ::testing::ElementsAre(5u, 6u));
}

TEST(PerCpu, BadSelectionsNameTheDeclaration) {
  const nlohmann::json run = run_with(5, 0.3);
  auto spec_settings = [](const char* cpus) {
    return settings_from_json(nlohmann::json::parse(
        std::string(R"({"primary":[{"metric":"idle.noise.vmstat_update_per_s","bad":"higher",)") +
        R"("cpus":")" + cpus + R"("}]})"));
  };
  try {
    compare_run_variants(run, spec_settings("9"));
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.pointer(), "/compare/primary/0/cpus");
    EXPECT_THAT(e.what(), HasSubstr("CPU 9 is not among the CPUs of its values in cell a-r0"));
  }
  // A timing without per-CPU values cannot be selected by CPU.
  EXPECT_THROW(compare_run_variants(run, primary("idle.cycles@5:higher")), Error);
}

// ---- Holm over the primary family ----

// The declared primaries are one step-down family with the failure, gate and retry rates
// (compare_budget_test.cc has the procedure). A row that is 0 in every boot cannot reach alpha
// and takes no share: over three primaries, K = 2 (Holm multiplied by 3).
TEST(PrimaryFamily, TheDiscreteStepDownOverTheDeclaredMetrics) {
  nlohmann::json run = run_with(5, 0.5, "kvm");
  CompareSettings s;
  for (const char* arg : {"idle.noise.vmstat_update_per_s@5:higher", "idle.cycles:higher",
                          "idle.noise.vmstat_update_per_s@6:higher"})
    s.primary.push_back(primary_from_argument(arg));
  const Comparison c = compare_run_variants(run, s);
  EXPECT_EQ(c.family.primary, 3u);
  EXPECT_EQ(c.budget.first_k, 2u);
  const auto& cpu5 = row(c, "idle.noise.vmstat_update_per_s[cpu5]");
  EXPECT_NEAR(*cpu5.test.family_p, 2.0 / 252, 1e-12);
  // CPU 5: 1/252 one-sided, x2: regressed. CPU 6 stays 0: it could not reach alpha.
  EXPECT_EQ(cpu5.verdict.verdict, Verdict::regressed);
  EXPECT_EQ(row(c, "idle.noise.vmstat_update_per_s[cpu6]").verdict.verdict, Verdict::inconclusive);
  EXPECT_EQ(c.budget.unreachable_primaries,
            std::vector<std::string>{"idle.noise.vmstat_update_per_s[cpu6]"});
  // Cycles +1 per boot (0.1%): significant one-sided, far below the 2% threshold.
  EXPECT_NE(row(c, "idle.cycles").verdict.verdict, Verdict::regressed);
  EXPECT_EQ(c.primary_regressions(), 1u);
  const std::string text = unwrapped(render_text(c));
  EXPECT_THAT(text, HasSubstr("rests on 3 primary metrics (one-sided)"));
  EXPECT_THAT(text, HasSubstr("one budget, alpha 0.05: discrete step-down at 0.05 over 3 "
                              "hypotheses (K = 2 at its first step)"));
}

// ---- kernel failures ----

CellRecord rec(const std::string& klass, const std::string& reason = "") {
  return {"c", klass.empty() ? "ok" : "failed", klass, reason, "tcg", false, false};
}

std::vector<CellRecord> cells_of(std::size_t ok, const std::string& klass, std::size_t failed,
                                 const std::string& reason = "") {
  std::vector<CellRecord> v(ok, rec(""));
  for (std::size_t i = 0; i < failed; ++i) v.push_back(rec(klass, reason));
  return v;
}

// Every class is a rate (the rule that counted a class B has and A has not, whatever its rate,
// made a vanilla warning in 5% of boots a false alarm in about 17.5% of A/A runs at 5 v 5):
// one-sided Fisher p and the smallest p the margins allow, which the budget's step-down reads.
TEST(KernelFailures, EachClassIsARate) {
  struct Row {
    const char* what;
    std::vector<CellRecord> a, b;
    double p, p_min;
    const char* reason;
  };
  const std::vector<Row> rows = {
      {"one stall", cells_of(5, "", 0), cells_of(4, "rcu_stall", 1), 0.5, 0.5,
       "B 1 of 5 boots, A 0 of 5 boots; one-sided Fisher p = 0.5 (smallest possible 0.5)"},
      {"stalls in most B boots", cells_of(5, "", 0), cells_of(1, "rcu_stall", 4), 5.0 / 210,
       5.0 / 210, "p = 0.0238"},
      {"one panic", cells_of(5, "", 0), cells_of(4, "panic", 1), 0.5, 0.5, "B 1 of 5 boots"},
      {"panic: both", cells_of(4, "panic", 1), cells_of(4, "panic", 1), 0.777777, 10.0 / 45,
       "A 1 of 5 boots"},
      {"every B boot", cells_of(5, "", 0), cells_of(0, "build", 5), 1.0 / 252, 1.0 / 252,
       "B 5 of 5 boots"},
  };
  for (const Row& r : rows) {
    const auto f = weigh_failures(r.a, r.b);
    ASSERT_EQ(f.size(), 1u) << r.what;
    EXPECT_NEAR(f[0].p, r.p, 1e-6) << r.what;
    EXPECT_NEAR(f[0].p_min, r.p_min, 1e-6) << r.what;
    EXPECT_FALSE(f[0].against_b) << r.what << ": the budget decides";
    EXPECT_THAT(f[0].reason, HasSubstr(r.reason)) << r.what;
  }
  EXPECT_EQ(failure_weight_class(rec("boot", "QEMU exited: wall_timeout")), "boot_timeout");
  EXPECT_EQ(failure_weight_class(rec("boot", "Kernel panic at console line 9")), "boot");
  EXPECT_EQ(failure_weight_class(rec("infrastructure", "x")), "");
}

// One RCU stall of B is a rate of 1 in 6 boots, on KVM as under TCG: not counted (it was
// counted on KVM before); a stall in every B boot is.
TEST(KernelFailures, OneStallIsNotCountedAStallInEveryBootIs) {
  nlohmann::json run = run_with(5, 0, "kvm");
  run["cells"].push_back(failed_cell("b", 9, "rcu_stall", "RCU stall", "kvm"));
  Comparison c = compare_run_variants(run, CompareSettings{});
  EXPECT_EQ(compare_exit_status(c), 0);
  EXPECT_FALSE(c.host_sensitive);
  EXPECT_THAT(render_text(c), HasSubstr("[kernel failure: not counted against B, see kernel "
                                        "failures]"));
  int k = 10;
  for (auto& cell : run["cells"])
    if (cell["variant"] == "b" && cell["status"] == "ok")
      cell = failed_cell("b", k++, "rcu_stall", "RCU stall", "kvm");
  c = compare_run_variants(run, CompareSettings{});
  EXPECT_EQ(compare_exit_status(c), 1);
  EXPECT_EQ(c.kernel_failure_regressions(), 1u);
  EXPECT_THAT(render_text(c), HasSubstr("counted against B (step-down p ="));
}

// ---- the isolation gate ----

// Each check is a rate: its Fisher p and the smallest p its margins allow. No every-boot
// clause: B failing it in 5 of 5 boots against A's 2 of 5 (p = 0.083) was counted before.
TEST(Gate, EachCheckIsARate) {
  struct Row {
    std::size_t a_pass, a_total, b_pass, b_total;
    double p, p_min;
  };
  const std::vector<Row> rows = {
      {5, 5, 0, 5, 1.0 / 252, 1.0 / 252},    // every B boot
      {5, 5, 3, 5, 0.2222, 10.0 / 45},       // 2 of 5
      {5, 5, 0, 1, 1.0 / 6, 1.0 / 6},        // the only B boot that ran it
      {0, 5, 0, 5, 1, 1},                    // A fails it as much
      {3, 5, 0, 5, 21.0 / 252, 21.0 / 252},  // every B boot, A passed it 3 times
      {5, 5, 5, 5, 1, 1},                    // no failure
  };
  std::vector<GateSummaryRow> gate;
  for (const Row& r : rows) {
    GateSummaryRow g;
    g.check = "nohz_full";
    g.a_pass = r.a_pass, g.a_total = r.a_total, g.b_pass = r.b_pass, g.b_total = r.b_total;
    gate.push_back(g);
  }
  weigh_gate(gate);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    EXPECT_NEAR(gate[k].p, rows[k].p, 1e-4) << k << ": " << gate[k].reason;
    EXPECT_NEAR(gate[k].p_min, rows[k].p_min, 1e-4) << k;
    EXPECT_FALSE(gate[k].against_b);
  }
}

TEST(Gate, InvalidBBootsAreNotSilentlyDropped) {
  nlohmann::json run = run_with(5, 0);
  const nlohmann::json pass = {{"check", "nohz_full"}, {"pass", true}};
  const nlohmann::json fail = {{"check", "nohz_full"}, {"pass", false}, {"expected", "5-7"}};
  // B's patch breaks nohz_full: every B boot fails the gate and is invalid, none contributes.
  for (auto& c : run["cells"]) {
    c["gate"] = {{"rows", {pass}}};
    if (c["variant"] != "b") continue;
    c["status"] = "invalid";
    c["reason"] = "isolation gate: nohz_full";
    c["gate"] = {{"rows", {fail}}};
  }
  const Comparison c = compare_run_variants(run, CompareSettings{});
  EXPECT_EQ(c.cells_b, 0u);
  EXPECT_EQ(c.gate_regressions(), 1u);
  EXPECT_EQ(compare_exit_status(c), 1);
  EXPECT_THAT(summarize(c)[1].text,
              HasSubstr("isolation gate nohz_full: B failed it in 5 of 5 boots, A in 0 of 5 "
                        "boots; one-sided Fisher p = 0.00397 (smallest possible 0.00397): "
                        "counted against B"));
  EXPECT_THAT(render_junit(c), HasSubstr("type=\"gate-failure\""));
  // Half of B's boots (5 of 10, p = 0.084) is not systematic: shown, not counted.
  for (int r = 0; r < 5; ++r) {
    nlohmann::json ok = cell("b", 10 + r, {0, 0, 0}, 1000);
    ok["gate"] = {{"rows", {pass}}};
    run["cells"].push_back(ok);
  }
  const Comparison half = compare_run_variants(run, CompareSettings{});
  EXPECT_EQ(half.gate_regressions(), 0u);
  EXPECT_THAT(summarize(half)[1].text, HasSubstr("not counted against B"));
}

// ---- metrics missing in B ----

TEST(Missing, AMetricMissingInMoreBBootsIsFlaggedNotAnExit) {
  nlohmann::json run = run_with(5, 0);
  for (auto& c : run["cells"])
    if (c["id"] == "b-r1" || c["id"] == "b-r3") c["metrics"].erase("idle.cycles");
  const Comparison c = compare_run_variants(run, CompareSettings{});
  const auto missing = c.missing_more_in_b();
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0]->name, "idle.cycles");
  EXPECT_EQ(missing[0]->missing_b, 2u);
  EXPECT_EQ(compare_exit_status(c), 0);
  bool said = false;
  for (const auto& l : summarize(c))
    said = said || l.text ==
                       "missing in more B boots than A boots (not an exit by itself): "
                       "idle.cycles (B 2, A 0)";
  EXPECT_TRUE(said);
  EXPECT_EQ(render_json(c)["summary"]["missing_more_in_b"][0]["missing_b"], 2);
}

// ---- instruction metrics from result.json ----

TEST(Instructions, ReadFromCellsAndJudgedByTheirOwnThreshold) {
  nlohmann::json run = run_with(5, 0);
  const double a[] = {5012, 4998, 5006, 4990, 5003};
  int i = 0, j = 0;
  for (auto& c : run["cells"]) {
    const bool is_a = c["variant"] == "a";
    const double v = is_a ? a[i++] : a[j++] * 1.02;
    c["metrics"]["idle.instructions_per_op"] = {{"unit", "instructions/op"},
                                                {"better", "lower"},
                                                {"kind", "instructions"},
                                                {"values", {v}}};
  }
  const Comparison c = compare_run_variants(run, primary("idle.instructions_per_op:higher"));
  const auto& r = row(c, "idle.instructions_per_op");
  EXPECT_EQ(r.kind, MetricKind::instructions);
  EXPECT_EQ(r.verdict.verdict, Verdict::regressed) << r.verdict.reason;  // +2% under TCG
  EXPECT_DOUBLE_EQ(r.verdict.threshold_pct, 1.0);
  EXPECT_EQ(compare_exit_status(c), 1);
  EXPECT_THAT(render_text(c), HasSubstr("instruction counts (per-boot means"));
  EXPECT_EQ(render_json(c)["metrics"][1]["kind"], "instructions");
  run["cells"][0]["metrics"]["idle.instructions_per_op"]["values"] = {-1};
  EXPECT_THROW(compare_run_variants(run, CompareSettings{}), SpecError);
}

// A declared instruction metric on boots that counted none (KVM without a guest PMU): the row
// says why it was not measured and the exit rests on the other primaries; a run whose cells
// did count and still lack the metric is refused as before.
TEST(Instructions, PrimaryNotMeasuredWhereNoCellCountedInstructions) {
  nlohmann::json run = run_with(5, 0, "kvm");
  for (auto& c : run["cells"])
    c["insn_counts"] = {{"source", nullptr}, {"reason", "KVM: the vCPU exposes no PMU"}};
  CompareSettings s = primary("idle.insns_per_syscall:higher");
  s.primary.push_back(primary_from_argument("idle.noise.vmstat_update_per_s@5:higher"));
  const Comparison c = compare_run_variants(run, s);
  const auto& r = row(c, "idle.insns_per_syscall");
  EXPECT_TRUE(r.primary);
  EXPECT_EQ(r.verdict.verdict, Verdict::inconclusive);
  EXPECT_EQ(r.verdict.reason, "not measured: KVM: the vCPU exposes no PMU");
  EXPECT_EQ(c.family.primary, 1u);
  // The other primary is 0 in every boot of both: nothing could reach alpha (exit 0 before).
  EXPECT_EQ(compare_exit_status(c), 3);
  EXPECT_THAT(render_text(c), HasSubstr("not measured: KVM: the vCPU exposes no PMU"));
  EXPECT_NO_THROW(render_json(c).dump());
  EXPECT_NO_THROW(render_markdown(c));
  EXPECT_NO_THROW(render_junit(c));
  // So is a wakeup path length (the plugin's wakeup_insns_*, not an insns_per_* name).
  const Comparison w = compare_run_variants(run, primary("shared.wakeup_insns_max:higher"));
  EXPECT_EQ(row(w, "shared.wakeup_insns_max").verdict.reason,
            "not measured: KVM: the vCPU exposes no PMU");

  run["cells"][0]["insn_counts"] = {{"source", "tcg-plugin"}};
  EXPECT_THROW(compare_run_variants(run, primary("idle.insns_per_syscall:higher")), Error);
  EXPECT_THROW(compare_run_variants(run, primary("shared.wakeup_insns_max:higher")), Error);
}

// ---- the A/A relabelling ----

// An A/A run: both variants the same kernel, 5 boots each; a noisy per-CPU count.
nlohmann::json aa_run(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(2.0, 0.5);
  nlohmann::json cells = nlohmann::json::array();
  for (int r = 0; r < 10; ++r)
    cells.push_back(
        cell(r % 2 ? "b" : "a", r, {d(rng), d(rng), d(rng)}, 1000 * (1 + 0.02 * d(rng))));
  return {{"schema_version", 1},
          {"run_id", "aa"},
          {"variant_order", {"a", "b"}},
          {"variants", {{"a", nlohmann::json::object()}, {"b", nlohmann::json::object()}}},
          {"cells", cells}};
}

// With one primary metric of distinct values, its exact one-sided test has p = k/252 and
// p < 0.05 for exactly the 12 relabellings with k <= 12 (12/252 = 0.048): the false alarm rate
// of the exit status is 12/252 = 4.8%, at most alpha, whatever the other rows do.
TEST(RelabelAa, TheExitStatusFalseAlarmRateIsAtMostAlpha) {
  const AaRelabelResult r =
      relabel_aa(aa_run(3), primary("idle.noise.vmstat_update_per_s@5:higher"));
  EXPECT_EQ(r.relabellings, 252u);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.cells_a, 5u);
  EXPECT_EQ(r.exit_1, 12u);
  EXPECT_EQ(r.causes.at("primary idle.noise.vmstat_update_per_s[cpu5]"), 12u);
  EXPECT_EQ(r.primary_origin, "--primary");
  // The per-metric reference judges the metric's own rows two-sided (the per-CPU row is not
  // one of them): the mean row is significant in 12 relabellings, regressed in 6.
  EXPECT_EQ(r.uncorrected_exit_1, 6u);
  const nlohmann::json j = aa_relabel_to_json(r);
  EXPECT_EQ(j["exit_1"], 12);
  EXPECT_NEAR(j["exit_1_rate"].get<double>(), 12.0 / 252, 1e-12);
  const std::string text = render_aa_relabel_text(r);
  EXPECT_THAT(text, HasSubstr("exit 1 under compare's rules: 12 of 252 (4.8%)"));
  // Without a primary metric nothing but failures can alarm: 0 of 252.
  EXPECT_EQ(relabel_aa(aa_run(3), CompareSettings{}).exit_1, 0u);
}

TEST(RelabelAa, OneHostInducedStallNoLongerDecides) {
  nlohmann::json run = aa_run(4);
  run["cells"].push_back(failed_cell("b", 11, "rcu_stall", "RCU stall"));
  run["cells"].push_back(failed_cell("a", 12, "infrastructure", "QEMU exited"));
  const AaRelabelResult r = relabel_aa(run, CompareSettings{});
  EXPECT_EQ(r.relabellings, 924u);  // C(12, 6): the failed cells are relabelled too
  EXPECT_EQ(r.exit_1, 0u);
  // Under the old rule every relabelling that puts the stall in B alarms: C(11,5) of C(12,6).
  EXPECT_EQ(r.uncorrected_causes.at("kernel failure rcu_stall"), 462u);
}

// A nightly run holds three variants; its A/A pair is tonight's kernel and its baseline.
TEST(RelabelAa, NamedVariantsArePooledNotTheRunsFirstTwo) {
  nlohmann::json run = aa_run(3);
  run["variants"]["c"] = nlohmann::json::object();
  for (auto& c : run["cells"])
    if (c["variant"] == "a") c["variant"] = "c";
  AaRelabelOptions o;
  o.variant_a = "c";
  o.variant_b = "b";
  const AaRelabelResult r = relabel_aa(run, CompareSettings{}, o);
  EXPECT_EQ(r.variant_a, "c");
  EXPECT_EQ(r.cells_a, 5u);
  EXPECT_EQ(r.relabellings, 252u);
  o.variant_b = "nosuch";
  EXPECT_THROW(relabel_aa(run, CompareSettings{}, o), Error);
}

TEST(RelabelAa, ThroughTheCommand) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("isolab-relabel-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  write_file_atomic(dir / "result.json", aa_run(5).dump());
  CompareCommandOptions o;
  o.run_dirs = {dir};
  o.relabel_aa = true;
  o.primary = {"idle.noise.vmstat_update_per_s@5:higher"};
  std::ostringstream out, err;
  EXPECT_EQ(compare_command(o, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("A/A relabelling of run aa: 5 cells of a and 5 of b pooled; "
                                   "252 relabellings"));
  o.format = "json";
  out.str("");
  EXPECT_EQ(compare_command(o, out, err), 0);
  EXPECT_EQ(nlohmann::json::parse(out.str())["schema"], "isolab-aa-relabelling");
  o.format = "junit";
  EXPECT_EQ(compare_command(o, out, err), 2);
  o.format = "text";
  o.run_dirs = {dir, dir};
  EXPECT_EQ(compare_command(o, out, err), 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace isolab
