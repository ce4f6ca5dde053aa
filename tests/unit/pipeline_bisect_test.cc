// The pieces of `isolab bisect` around the search: the spec of one step (A and a prefix of B's
// series, which parse_spec reads back as the same variants), the prefix variant's name, the
// variant lookup and the bisect.json record.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "pipeline/bisect.h"
#include "spec/compare_settings.h"
#include "spec/spec.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;

fs::path specs_dir() { return fs::path(ISOLAB_TEST_DATA_DIR) / "specs"; }

Spec bisect_short() {
  return parse_spec(nlohmann::json::parse(read_file(specs_dir() / "bisect-short.json")),
                    specs_dir());
}

TEST(BisectPrefix, VariantNameSaysHowManyOfHowMany) {
  EXPECT_EQ(prefix_variant_name("series", 2, 4), "series-2of4");
  const std::string long_name(40, 'b');
  const std::string n = prefix_variant_name(long_name, 12, 120);
  EXPECT_EQ(n.size(), 40u);
  EXPECT_EQ(n.substr(n.size() - 8), "-12of120");
}

TEST(BisectPrefix, StepSpecHoldsAAndThePrefixAndReadsBackTheSame) {
  const Spec spec = bisect_short();
  ASSERT_EQ(spec.variants.size(), 2u);
  ASSERT_EQ(spec.variants[1].patches.size(), 4u);  // the directory's series file, in order
  const Spec step = prefix_spec(spec, spec.variants[0], spec.variants[1], 2, 6, 0.0125);
  ASSERT_EQ(step.variants.size(), 2u);
  EXPECT_EQ(step.variants[0].name, "vanilla");
  EXPECT_EQ(step.variants[1].name, "series-2of4");
  EXPECT_EQ(step.variants[1].patches,
            (std::vector<fs::path>{spec.variants[1].patches[0], spec.variants[1].patches[1]}));
  EXPECT_EQ(step.repetitions, 6);
  EXPECT_EQ(step.raw["repetitions"], 6);
  // The step is judged at its level, and so is `isolab compare` of its run.
  EXPECT_EQ(step.raw["compare"]["alpha"], 0.0125);
  EXPECT_EQ(step.raw["compare"]["primary"], spec.raw["compare"]["primary"]);
  EXPECT_EQ(settings_from_json(step.compare).alpha, 0.0125);
  // What result.json records is what ran: parsed again, the raw document gives the same spec.
  const Spec again = parse_spec(step.raw, specs_dir());
  ASSERT_EQ(again.variants.size(), 2u);
  EXPECT_EQ(again.variants[1].name, "series-2of4");
  EXPECT_EQ(again.variants[1].patches, step.variants[1].patches);
  EXPECT_TRUE(again.variants[0].patches.empty());
  EXPECT_EQ(again.repetitions, 6);
  EXPECT_EQ(settings_from_json(again.compare).alpha, 0.0125);
}

TEST(BisectPrefix, StepSpecDropsTheNightlyBaseline) {
  Spec spec = bisect_short();
  spec.baseline_last_good = true;
  spec.raw["baseline_last_good"] = true;
  const Spec step = prefix_spec(spec, spec.variants[0], spec.variants[1], 4, 4, 0.05);
  EXPECT_FALSE(step.baseline_last_good);
  EXPECT_FALSE(step.raw.contains("baseline_last_good"));
}

TEST(BisectPrefix, RefusesAPrefixTheSeriesDoesNotHave) {
  const Spec spec = bisect_short();
  EXPECT_THROW(prefix_spec(spec, spec.variants[0], spec.variants[1], 0, 4, 0.05), Error);
  try {
    prefix_spec(spec, spec.variants[0], spec.variants[1], 5, 4, 0.05);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no prefix of 5 patches in variant series (4 patches)"),
              std::string::npos)
        << e.what();
  }
}

TEST(BisectPrefix, UnknownVariantErrorListsTheSpecs) {
  const Spec spec = bisect_short();
  try {
    find_variant(spec, "patched", "--variant-b");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "--variant-b patched: no such variant in the spec (it has vanilla, series)");
  }
}

TEST(BisectRecord, CulpritStepsAndUndefinedChange) {
  const Spec spec = bisect_short();
  BisectOutcome out;
  out.patches = 4;
  out.direction = Verdict::regressed;
  out.culprit = 2;
  out.conclusion = "patch 2 of 4 is the first that moves the metric (regressed)";
  out.steps.push_back(
      {4, 1, 4, 0.0125, {Verdict::regressed, "r", 2.7, "/runs/a", 8}, StepState::moved});
  out.steps.push_back({1,
                       1,
                       4,
                       0.0125,
                       {Verdict::no_change, "n", std::nan(""), "/runs/b", 8},
                       StepState::not_moved});
  PrimaryMetric m = primary_from_argument("vmstat-syscall.insns_per_syscall:higher");
  const nlohmann::json r =
      bisect_record("spec.json", spec.variants[0], spec.variants[1],
                    {"[PATCH 1/4] a", "[PATCH 2/4] b", "[PATCH 3/4] c", "[PATCH 4/4] d"}, m,
                    BisectSettings{}, out, 12.5);
  EXPECT_EQ(r["metric"], "vmstat-syscall.insns_per_syscall");
  EXPECT_EQ(r["bad"], "higher");
  EXPECT_EQ(r["culprit"]["number"], 2);
  EXPECT_EQ(r["culprit"]["subject"], "[PATCH 2/4] b");
  EXPECT_EQ(r["patches"].size(), 4u);
  EXPECT_EQ(r["steps"][0]["state"], "moved");
  EXPECT_EQ(r["steps"][0]["change_pct"], 2.7);
  EXPECT_TRUE(r["steps"][1]["change_pct"].is_null());
  EXPECT_EQ(r["steps"][1]["verdict"], "no significant change");
  EXPECT_EQ(r["cells"], 16);
  EXPECT_TRUE(r["undecided"].is_null());
  EXPECT_EQ(r["settings"]["max_boots"], 20);
  EXPECT_EQ(r["settings"]["alpha"], 0.05);
  EXPECT_EQ(r["steps"][0]["level"], 0.0125);
}

}  // namespace
}  // namespace isolab
