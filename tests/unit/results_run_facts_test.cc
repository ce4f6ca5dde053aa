// results/run_facts.h: the run-level facts of the captured planted run, and the lenient readers
// of an unchecked document with every shape they must tolerate (or refuse as json::value does).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "base/files.h"
#include "results/run_facts.h"

namespace isolab {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;

const json& planted_doc() {
  static const json doc = json::parse(read_file(std::filesystem::path(ISOLAB_TEST_DATA_DIR) /
                                                "runs/planted-regression-kqin12/result.json"));
  return doc;
}

TEST(ResultsRunFacts, FactsOfTheCapturedRunFromTheDocumentAndTheRecord) {
  const results::RunResult run = results::result_from_json(planted_doc());
  for (const results::RunFacts& f : {results::run_facts(planted_doc()), results::run_facts(run)}) {
    ASSERT_TRUE(f.comparison_key);
    EXPECT_EQ(f.comparison_key->at("accelerator"), "tcg");
    EXPECT_EQ(f.comparison_key->at("vcpus"), 8);
    EXPECT_EQ(f.comparison_key->size(), 6u);
    ASSERT_EQ(f.workloads.size(), 3u);
    EXPECT_EQ(f.workloads[2].name, "latency");
    EXPECT_EQ(f.workloads[2].tool, "cyclictest");
    EXPECT_FALSE(f.workloads[2].imported);
    ASSERT_EQ(f.host_fingerprint.size(), 5u);
    EXPECT_EQ(f.host_fingerprint[0].first, "cpu_model");
    EXPECT_EQ(f.host_fingerprint[1].second, 2);  // nproc
    EXPECT_EQ(f.host_fingerprint[4].second, "tcg");
    EXPECT_EQ(f.host_cpu_model, "Intel(R) Xeon(R) Processor");
    EXPECT_FALSE(f.hosts);
  }
  EXPECT_EQ(results::run_accelerator(run), "tcg");
  EXPECT_FALSE(results::spec_overcommit(run));
  EXPECT_EQ(results::spec_workloads(run).duration_s("vmstat-idle"), 5);
  EXPECT_EQ(results::spec_workloads(run).duration_s("none"), 0);
  const auto host = results::host_fields(run);
  ASSERT_EQ(host.size(), 10u);
  EXPECT_EQ(host[0], (std::pair<std::string, std::string>{"accelerator", "tcg"}));
  EXPECT_EQ(host[8].first, "nproc");
  EXPECT_EQ(host[8].second, "2");
  EXPECT_EQ(results::accelerator_reason(run).rfind("falling back to TCG: KVM probe failed", 0), 0u);
}

TEST(ResultsRunFacts, OddShapesReadAsAbsent) {
  const json doc = {{"comparison_key", "x"},
                    {"spec", {{"workloads", json::array({"junk", {{"imported", true}}})}}},
                    {"host", 3},
                    {"hosts", json::array({{{"cpu_model", "M"}, {"cpus", 16}},
                                           {{"uri", "u"}, {"error", "down"}},
                                           {{"error", nullptr}}})}};
  const results::RunFacts f = results::run_facts(doc);
  EXPECT_FALSE(f.comparison_key);
  ASSERT_EQ(f.workloads.size(), 2u);
  EXPECT_TRUE(f.workloads[0].name.is_null());
  EXPECT_TRUE(f.workloads[1].imported);
  EXPECT_TRUE(f.host_fingerprint[0].second.is_null());
  ASSERT_TRUE(f.hosts);
  ASSERT_EQ(f.hosts->size(), 3u);
  EXPECT_TRUE((*f.hosts)[0].reachable);
  EXPECT_EQ((*f.hosts)[0].cpus, 16);
  EXPECT_FALSE((*f.hosts)[1].reachable);
  EXPECT_TRUE((*f.hosts)[2].reachable);  // a null error is none
  EXPECT_FALSE(results::run_facts(json("not a run")).comparison_key);
}

TEST(ResultsRunFacts, AcceleratorFallsBackToTheComparisonKey) {
  auto run = [](json host) {
    return results::result_from_json(
        {{"cells", json::array()}, {"host", host}, {"comparison_key", {{"accelerator", "kvm"}}}});
  };
  EXPECT_EQ(results::run_accelerator(run({{"accelerator", "tcg"}})), "tcg");
  EXPECT_EQ(results::run_accelerator(run({{"accelerator", ""}})), "kvm");
  EXPECT_EQ(results::run_accelerator(run(nullptr)), "kvm");
  EXPECT_TRUE(results::spec_overcommit(
      results::result_from_json({{"cells", json::array()}, {"spec", {{"overcommit", true}}}})));
}

TEST(ResultsRunFacts, SpecWorkloadsRefuseWhatJsonValueRefuses) {
  auto run = [](json spec) {
    return results::result_from_json({{"cells", json::array()}, {"spec", spec}});
  };
  EXPECT_THROW(results::spec_workloads(run(nullptr)), json::type_error);
  EXPECT_EQ(results::spec_workloads(results::result_from_json({{"cells", json::array()}})).list,
            json::array());
  const results::SpecWorkloads w =
      results::spec_workloads(run({{"workloads", json::array({{{"name", "a"}, {"duration_s", 5}},
                                                              {{"name", "a"}, {"duration_s", 2.5}},
                                                              {{"name", "b"}, {"duration_s", "5"}},
                                                              {{"name", 3}}})}}));
  EXPECT_THROW(w.duration_s("a"), json::type_error);  // workload 3's name is no string
  const results::SpecWorkloads ok = results::spec_workloads(run(
      {{"workloads",
        json::array(
            {{{"name", "a"}, {"duration_s", 5}}, "junk", {{"name", "a"}, {"duration_s", 2.5}}})}}));
  EXPECT_DOUBLE_EQ(ok.duration_s("a"), 2.5);  // the last one named so
}

TEST(ResultsRunFacts, DocumentReaders) {
  const json doc = {
      {"run_id", "r1"},
      {"variant_order", json::array({"a", 3, "b"})},
      {"variants", {{"c", json::object()}}},
      {"cells", json::array({{{"variant", "b"}, {"warmup", true}, {"host", {{"uri", "h"}}}},
                             5,
                             {{"variant", "a"}, {"id", "a-r0"}},
                             {{"variant", 4}},
                             {{"variant", "b"}, {"warmup", "yes"}}})},
      {"comparison_key", nullptr},
      {"spec", {{"compare", {{"alpha", 0.01}}}}}};
  EXPECT_EQ(results::run_id_of(doc), "r1");
  EXPECT_EQ(results::run_id_of(json::array()), "");
  EXPECT_EQ(results::run_id_of({{"run_id", 5}}), "");
  EXPECT_EQ(results::run_id_or(doc, "1"), "r1");
  EXPECT_EQ(results::run_id_or(json::object(), "1"), "1");
  EXPECT_THROW(results::run_id_or({{"run_id", 5}}, "1"), json::type_error);
  EXPECT_THAT(results::variant_order_of(doc), ElementsAre("a", "b"));
  EXPECT_FALSE(results::compared_variants(doc));  // its second entry is no string
  EXPECT_EQ(results::compared_variants({{"variant_order", {"x", "y", 3}}}),
            (std::pair<std::string, std::string>{"x", "y"}));
  EXPECT_TRUE(results::names_variant(doc, "b"));
  EXPECT_TRUE(results::names_variant(doc, "c"));
  EXPECT_FALSE(results::names_variant(doc, "d"));
  EXPECT_TRUE(results::records_variant(doc, "c"));
  EXPECT_FALSE(results::records_variant(doc, "a"));
  EXPECT_TRUE(results::has_cells(doc));
  EXPECT_FALSE(results::has_cells({{"cells", json::object()}}));
  const auto labels = results::cell_labels(doc);
  ASSERT_EQ(labels.size(), 5u);
  EXPECT_EQ(labels[0].variant, "b");
  EXPECT_TRUE(labels[0].warmup);
  EXPECT_EQ(labels[0].host_uri, "h");
  EXPECT_EQ(labels[1].variant, "");
  EXPECT_EQ(labels[3].variant, "");
  EXPECT_FALSE(labels[4].warmup);
  EXPECT_THAT(results::cell_variants_of(doc), ElementsAre("b", "a"));
  EXPECT_TRUE(results::has_comparison_key(doc));
  EXPECT_TRUE(results::comparison_key_json(doc).is_null());
  EXPECT_FALSE(results::has_comparison_key(json::object()));
  ASSERT_NE(results::compare_section(doc), nullptr);
  EXPECT_EQ(*results::compare_section(doc), (json{{"alpha", 0.01}}));
  EXPECT_EQ(results::compare_section({{"spec", "x"}}), nullptr);
}

TEST(ResultsRunFacts, CellStarts) {
  const auto starts = results::cell_starts(
      {{"cells", json::array({{{"id", "a-r0"}, {"started_at", "2026-12-01T10:00:00Z"}},
                              3,
                              {{"started_at", ""}},
                              {{"id", "a-r1"}, {"started_at", 5}}})}});
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts[0].id, "a-r0");
  EXPECT_EQ(starts[0].started_at, "2026-12-01T10:00:00Z");
  EXPECT_EQ(starts[1].id, "");
  EXPECT_FALSE(starts[1].started_at);  // empty
  EXPECT_FALSE(starts[2].started_at);  // no string
  EXPECT_THROW(results::cell_starts({{"cells", json::array({{{"id", 7}}})}}), json::type_error);
}

// What run --resume and the end of a run read of their own record: the cells' blocks and
// statuses, the spec's hash, the boot order seed, an interruption and the boots' times.
TEST(ResultsRunFacts, ResumeAndFinishReaders) {
  const json doc = {
      {"status", "interrupted"},
      {"interrupted_at", "2026-12-01T10:00:00Z"},
      {"interrupted_by", "SIGTERM"},
      {"spec_sha256", "abc"},
      {"boot_order", {{"seed", std::uint64_t{42}}}},  // as parsed or written: unsigned
      {"cells", json::array({{{"block", "r0"},
                              {"status", "ok"},
                              {"wall_seconds", 40.0},
                              {"phases", {{"qemu", 39.0}, {"steps", "x"}}}},
                             {{"block", 3}, {"status", "invalid"}},
                             {{"status", "failed"}, {"wall_seconds", "?"}}})}};
  const auto labels = results::cell_labels(doc);
  ASSERT_EQ(labels.size(), 3u);
  EXPECT_EQ(labels[0].block, "r0");
  EXPECT_EQ(labels[0].status, "ok");
  EXPECT_EQ(labels[1].block, "");  // no string
  EXPECT_EQ(labels[2].status, "failed");
  const results::ResumeFacts f = results::resume_facts(doc);
  EXPECT_EQ(f.spec_sha256, "abc");
  EXPECT_EQ(f.boot_order_seed, std::optional<std::uint64_t>(42));
  ASSERT_TRUE(f.interruption);
  EXPECT_EQ(f.interruption->at, "2026-12-01T10:00:00Z");
  EXPECT_EQ(f.interruption->by, "SIGTERM");
  const results::ResumeFacts none =
      results::resume_facts({{"status", "running"}, {"boot_order", {{"seed", -1}}}});
  EXPECT_EQ(none.spec_sha256, "");
  EXPECT_FALSE(none.boot_order_seed);
  EXPECT_FALSE(none.interruption);
  EXPECT_FALSE(results::resume_facts(json::array()).interruption);
  const auto times = results::cell_times(doc);
  ASSERT_EQ(times.size(), 2u);  // the second cell has no wall_seconds
  EXPECT_EQ(times[0].wall_seconds, 40.0);
  EXPECT_EQ(times[0].phases, (std::map<std::string, double>{{"qemu", 39.0}}));
  EXPECT_EQ(times[1].wall_seconds, 0.0);
  EXPECT_EQ(results::timing_stages_json(doc), json::array());
  EXPECT_EQ(results::timing_stages_json({{"timings", {{"stages", {1}}}}}), json::array({1}));
}

}  // namespace
}  // namespace isolab
