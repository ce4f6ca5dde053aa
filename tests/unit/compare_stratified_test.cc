// The host as a blocking factor: the stratified permutation test (values and van Elteren
// midranks), and compare_runs on cells from two libvirt hosts (per-host rows, combined verdict,
// refusal to pool unlike hosts).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compare/compare.h"
#include "compare/verdict.h"
#include "stats/permutation.h"
#include "stats/sample.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

TEST(Midranks, TiesGetTheMeanOfTheirRanks) {
  const std::vector<double> v = {3, 1, 2, 2};
  EXPECT_EQ(midranks(v), (std::vector<double>{4, 1, 2.5, 2.5}));
}

TEST(StratifiedPermutation, OneStratumOfValuesIsThePermutationTestOfMeans) {
  const std::vector<double> a = {0, 1, 0, 2, 0}, b = {3, 2, 4, 1, 5};
  const PermutationMeanResult plain = permutation_test_mean(a, b);
  const StratifiedResult s = stratified_permutation_test({{a, b}}, StratumScore::values);
  EXPECT_DOUBLE_EQ(s.p, plain.p);
  EXPECT_DOUBLE_EQ(s.min_p, plain.min_p);
  EXPECT_EQ(s.reassignments, 252u);
  EXPECT_TRUE(s.exact);
  EXPECT_EQ(s.strata_used, 1u);
}

TEST(StratifiedPermutation, OneStratumOfMidranksIsExactMannWhitney) {
  const std::vector<double> a = {1.5, 2.25, 3.0, 7.5}, b = {4.0, 5.5, 6.0, 8.0};
  const StratifiedResult s = stratified_permutation_test({{a, b}}, StratumScore::midranks);
  const MannWhitneyResult mw = mann_whitney_u(a, b);
  ASSERT_TRUE(mw.exact);
  EXPECT_NEAR(s.p, mw.p_two_sided, 1e-12);
  EXPECT_NEAR(s.min_p, mann_whitney_min_p(4, 4), 1e-12);
}

// Host 2 is 100 units slower than host 1; within each host B is above A in every cell. Pooled,
// the host effect hides the variant effect; within hosts it is as clear as it can be with
// 3 + 3 cells per host: only the two all-extreme combinations of C(6,3)^2 = 400 reach it.
TEST(StratifiedPermutation, HostEffectDoesNotHideTheVariantEffect) {
  const std::vector<Stratum> strata = {{{1, 2, 3}, {4, 5, 6}}, {{101, 102, 103}, {104, 105, 106}}};
  for (StratumScore sc : {StratumScore::values, StratumScore::midranks}) {
    const StratifiedResult s = stratified_permutation_test(strata, sc);
    EXPECT_TRUE(s.exact);
    EXPECT_EQ(s.reassignments, 400u);
    EXPECT_DOUBLE_EQ(s.p, 2.0 / 400);
    EXPECT_DOUBLE_EQ(s.min_p, 2.0 / 400);
  }
  const std::vector<double> a = {1, 2, 3, 101, 102, 103}, b = {4, 5, 6, 104, 105, 106};
  EXPECT_GT(mann_whitney_u(a, b).p_two_sided, 0.15);  // pooled: not significant (0.18)
}

TEST(StratifiedPermutation, OppositeEffectsOnTwoHostsCancel) {
  const std::vector<Stratum> strata = {{{1, 2, 3}, {4, 5, 6}}, {{4, 5, 6}, {1, 2, 3}}};
  const StratifiedResult s = stratified_permutation_test(strata, StratumScore::midranks);
  EXPECT_DOUBLE_EQ(s.statistic, 0);
  EXPECT_DOUBLE_EQ(s.p, 1);
}

TEST(StratifiedPermutation, StrataMissingASideAreSkipped) {
  const std::vector<Stratum> strata = {{{1, 2, 3}, {4, 5, 6}}, {{7, 8}, {}}, {{}, {9}}};
  const StratifiedResult s = stratified_permutation_test(strata, StratumScore::values);
  EXPECT_EQ(s.strata_used, 1u);
  EXPECT_DOUBLE_EQ(s.p, 2.0 / 20);
}

TEST(StratifiedPermutation, ConstantOrEmptyGivesOne) {
  EXPECT_DOUBLE_EQ(stratified_permutation_test({}, StratumScore::values).p, 1);
  const StratifiedResult s =
      stratified_permutation_test({{{0, 0}, {0, 0}}, {{5}, {5}}}, StratumScore::values);
  EXPECT_DOUBLE_EQ(s.p, 1);
  EXPECT_DOUBLE_EQ(s.min_p, 1);
}

// Ties: a stratum whose values are all 0 adds nothing to the statistic and every reassignment
// of it reaches the extreme, so min_p is that of the other stratum.
TEST(StratifiedPermutation, ConstantStratumKeepsTheOthersMinP) {
  const std::vector<Stratum> strata = {{{0, 0, 0}, {2, 3, 4}}, {{0, 0}, {0, 0}}};
  const StratifiedResult s = stratified_permutation_test(strata, StratumScore::values);
  EXPECT_DOUBLE_EQ(s.min_p, 2.0 / 20);
  EXPECT_DOUBLE_EQ(s.p, 2.0 / 20);
}

TEST(StratifiedPermutation, MonteCarloAgreesWithExactEnumeration) {
  const std::vector<Stratum> strata = {{{1, 2, 5, 3}, {4, 6, 7, 2}},
                                       {{10, 12, 11, 9}, {13, 12, 15, 14}}};
  const StratifiedResult exact = stratified_permutation_test(strata, StratumScore::values);
  const StratifiedResult mc =
      stratified_permutation_test(strata, StratumScore::values, /*exact_limit=*/10, 20000, 7);
  ASSERT_TRUE(exact.exact);
  EXPECT_EQ(exact.reassignments, 70u * 70u);
  EXPECT_FALSE(mc.exact);
  EXPECT_NEAR(mc.p, exact.p, 0.01);
  EXPECT_DOUBLE_EQ(mc.min_p, exact.min_p);
}

// --- compare_runs with hosts ---

nlohmann::json host(const std::string& uri, const std::string& fp) {
  return {{"uri", uri},
          {"hostname", "h-" + uri.substr(uri.size() - 1)},
          {"cpu_model", "Skylake-Client-IBRS"},
          {"cpu_vendor", "Intel"},
          {"cpus", 2},
          {"libvirt_version", "9.0.0"},
          {"hypervisor", "QEMU"},
          {"hypervisor_version", "7.2.22"},
          {"fingerprint_sha256", fp}};
}

nlohmann::json cell(const std::string& variant, int rep, double v, const nlohmann::json& h) {
  return {{"id", variant + "-r" + std::to_string(rep)},
          {"variant", variant},
          {"repetition", rep},
          {"warmup", false},
          {"status", "ok"},
          {"accelerator", "kvm"},
          {"host", h},
          {"metrics", {{"cycles", {{"unit", "cycles"}, {"better", "lower"}, {"values", {v}}}}}}};
}

// Three blocks per host; host 2 runs everything 50% slower; B is 10% above A on both.
nlohmann::json two_host_run(const std::string& fp2) {
  nlohmann::json run = {{"schema_version", 1},
                        {"run_id", "r1"},
                        {"variant_order", {"vanilla", "patched"}},
                        {"cells", nlohmann::json::array()}};
  const nlohmann::json h1 = host("qemu+ssh://h1/system", std::string(64, 'a'));
  const nlohmann::json h2 = host("qemu+ssh://h2/system", fp2);
  const double noise[] = {0, 3, -2, 1, -1, 2};
  for (int rep = 1; rep <= 6; ++rep) {
    const bool second = rep % 2 == 0;
    const double base = (second ? 1500 : 1000) + noise[rep - 1];
    run["cells"].push_back(cell("vanilla", rep, base, second ? h2 : h1));
    run["cells"].push_back(cell("patched", rep, base * 1.1, second ? h2 : h1));
  }
  return run;
}

TEST(CompareHosts, PerHostRowsAndStratifiedVerdict) {
  const nlohmann::json run = two_host_run(std::string(64, 'a'));
  const Comparison c = compare_run_variants(run, CompareSettings{});
  ASSERT_TRUE(c.stratified);
  ASSERT_EQ(c.hosts.size(), 2u);
  EXPECT_EQ(c.hosts[0].uri, "qemu+ssh://h1/system");
  EXPECT_EQ(c.hosts[0].cells_a, 3u);
  EXPECT_EQ(c.hosts[1].cells_b, 3u);
  ASSERT_EQ(c.metrics.size(), 1u);
  const MetricRow& r = c.metrics[0];
  ASSERT_EQ(r.per_host.size(), 2u);
  EXPECT_NEAR(r.per_host[0].change_pct, 10.0, 0.5);
  EXPECT_NEAR(r.per_host[1].change_pct, 10.0, 0.5);
  // 3 vs 3 on one host cannot reach p < 0.05 (smallest 0.1); combined over two hosts it can.
  EXPECT_EQ(r.per_host[0].verdict.verdict, Verdict::inconclusive);
  ASSERT_TRUE(r.test.stratified);
  EXPECT_DOUBLE_EQ(r.test.stratified->p, 2.0 / 400);
  EXPECT_EQ(r.verdict.verdict, Verdict::regressed) << r.verdict.reason;
}

TEST(CompareHosts, UnlikeHostsAreRefusedUnlessPooled) {
  const nlohmann::json run = two_host_run(std::string(64, 'b'));
  try {
    compare_run_variants(run, CompareSettings{});
    FAIL() << "expected ComparisonRefused";
  } catch (const ComparisonRefused& e) {
    EXPECT_THAT(e.what(), HasSubstr("--pool-hosts"));
    EXPECT_THAT(e.what(), HasSubstr("qemu+ssh://h2/system"));
  }
  CompareSettings s;
  s.pool_hosts = true;
  const Comparison c = compare_run_variants(run, s);
  EXPECT_TRUE(c.pooled_unlike_hosts);
  EXPECT_EQ(c.host_differences.size(), 2u);
  EXPECT_EQ(c.metrics[0].verdict.verdict, Verdict::regressed);
}

TEST(CompareHosts, OneHostIsNotStratified) {
  nlohmann::json run = two_host_run(std::string(64, 'a'));
  for (auto& c : run["cells"]) c["host"] = host("qemu:///system", std::string(64, 'a'));
  const Comparison c = compare_run_variants(run, CompareSettings{});
  EXPECT_FALSE(c.stratified);
  EXPECT_FALSE(c.metrics[0].test.stratified);
  EXPECT_TRUE(c.metrics[0].per_host.empty());
}

}  // namespace
}  // namespace isolab
