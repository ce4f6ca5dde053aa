// The spec's compare section is checked whole when the spec is loaded: its fields as compare
// reads them, and every metric it names against what the spec's workloads can give.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "spec/compare_settings.h"
#include "spec/spec.h"

namespace isolab {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json spec_with(const json& compare) {
  json d = json::parse(R"({
    "name": "t",
    "variants": [{"name": "a"}, {"name": "b"}],
    "guest": {"cmdline": "nohz_full=1", "vcpus": 2},
    "workloads": [
      {"name": "lat", "tool": "cyclictest", "duration_s": 3, "load": {"stressors": {"vm": 1},
       "tool": "stress-ng"}},
      {"name": "sys", "tool": "vmstat-overhead", "mode": "syscall"},
      {"name": "pf", "tool": "page-fault-bench"}
    ]
  })");
  d["compare"] = compare;
  return d;
}

// The SpecError of loading `doc` from a file: {pointer, message}; {"(no error)", ""} if none.
struct Refusal {
  std::string pointer, what, file;
};
Refusal refusal_of(const json& doc) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("isolab-spec-compare-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "spec.json";
  std::ofstream(file) << doc.dump(2);
  Refusal r{"(no error)", "", file.string()};
  try {
    load_spec_file(file);
  } catch (const SpecError& e) {
    r.pointer = e.pointer();
    r.what = e.what();
  }
  std::filesystem::remove_all(dir);
  return r;
}

TEST(SpecCompare, MetricsTheWorkloadsGiveAreAccepted) {
  const json c = json::parse(R"({
    "alpha": 0.05,
    "thresholds_pct": {"lat.latency_max_us": 10, "lat.*": 5, "lat.load.vm.*": 20,
                       "lat.noise.vmstat_update_per_s": 3, "sys.insns_per_syscall": 1,
                       "pf.numa_hit": 1, "pf.kernel_insns_per_page_free_per_cpu": 2,
                       "*": 4},
    "primary": [{"metric": "sys.cycles_per_syscall", "bad": "higher"},
                {"metric": "lat.noise.kernel_insns_per_s", "cpus": "1", "bad": "higher"}]})");
  EXPECT_EQ(refusal_of(spec_with(c)).pointer, "(no error)");
}

TEST(SpecCompare, UnknownFieldIsRefusedAtLoadWithFileAndPointer) {
  const Refusal r = refusal_of(spec_with(json::parse(R"({"alpah": 0.05})")));
  EXPECT_EQ(r.pointer, "/compare/alpah");
  EXPECT_THAT(r.what, HasSubstr("/compare/alpah: unknown compare field"));
  EXPECT_THAT(r.what, HasSubstr("(in " + r.file + ")"));
}

TEST(SpecCompare, BadValueIsRefusedAtLoad) {
  const Refusal r = refusal_of(spec_with(json::parse(R"({"alpha": 2})")));
  EXPECT_EQ(r.pointer, "/compare/alpha");
  EXPECT_THAT(r.what, HasSubstr("(in " + r.file + ")"));
}

TEST(SpecCompare, ThresholdNamingNoMetricIsRefused) {
  const Refusal r =
      refusal_of(spec_with(json::parse(R"({"thresholds_pct": {"lat.latency_mx_us": 10}})")));
  EXPECT_EQ(r.pointer, "/compare/thresholds_pct/lat.latency_mx_us");
  EXPECT_THAT(r.what, HasSubstr("names no metric the spec's workloads give (lat.*, sys.*, pf.*)"));
  EXPECT_THAT(r.what, HasSubstr("(in " + r.file + ")"));
}

TEST(SpecCompare, ThresholdPrefixMatchingNoMetricIsRefused) {
  const Refusal r = refusal_of(spec_with(json::parse(R"({"thresholds_pct": {"latency.*": 10}})")));
  EXPECT_EQ(r.pointer, "/compare/thresholds_pct/latency.*");
  EXPECT_THAT(r.what, HasSubstr("'latency.*' is the prefix of no metric"));
  EXPECT_THAT(r.what, HasSubstr("(in " + r.file + ")"));
}

TEST(SpecCompare, ThresholdOfAnotherModeOrStressorIsRefused) {
  // sys runs in syscall mode: it gives no idle-loop metric; the load runs vm, not cpu.
  EXPECT_EQ(
      refusal_of(spec_with(json::parse(R"({"thresholds_pct": {"sys.insns_per_idle_loop": 1}})")))
          .pointer,
      "/compare/thresholds_pct/sys.insns_per_idle_loop");
  EXPECT_EQ(
      refusal_of(spec_with(json::parse(R"({"thresholds_pct": {"lat.load.cpu.*": 1}})"))).pointer,
      "/compare/thresholds_pct/lat.load.cpu.*");
}

TEST(SpecCompare, PrimaryNamingNoMetricIsRefused) {
  const Refusal r = refusal_of(spec_with(json::parse(
      R"({"primary": [{"metric": "sys.cycles_per_syscall", "bad": "higher"},
                      {"metric": "sys.insns_per_sycall", "bad": "higher"}]})")));
  EXPECT_EQ(r.pointer, "/compare/primary/1/metric");
  EXPECT_THAT(r.what, HasSubstr("'sys.insns_per_sycall' is no metric the spec's workloads give"));
  EXPECT_THAT(r.what, HasSubstr("(in " + r.file + ")"));
}

TEST(SpecCompare, EveryShippedSpecLoads) {
  for (const char* dir : {"/examples", "/tests/data/specs"})
    for (const auto& f : std::filesystem::directory_iterator(std::string(ISOLAB_SOURCE_DIR) + dir))
      if (f.path().extension() == ".json") {
        SCOPED_TRACE(f.path().string());
        try {
          load_spec_file(f.path());
        } catch (const SpecError& e) {
          // A spec whose kernel source or guest files exist only where it runs is fine here;
          // its compare section and workloads are what this test is about.
          EXPECT_THAT(e.pointer(), ::testing::Not(::testing::StartsWith("/compare"))) << e.what();
          EXPECT_THAT(e.pointer(), ::testing::Not(::testing::StartsWith("/workloads"))) << e.what();
        }
      }
}

// compare.calibration names a file (beside the spec) that isolab calibrate wrote: it is read
// when the spec is loaded and its margins and jitters replace the name, so the run's result.json
// carries what was fixed before it. A file that is no calibration is refused with the pointer.
TEST(SpecCompare, ACalibrationFileIsReadWhenTheSpecIsLoaded) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("isolab-spec-calibration-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "cal.json") << R"({"schema": "isolab-calibration", "version": 3,
      "comparison_key": {"accelerator": "tcg"},
      "metrics": {"sys.insns_per_syscall": {"jitter": 0.5, "jitter_runs": 3,
                                            "noise_floor_pct": 0.01},
                  "lat.latency_max_us": {"jitter": null, "noise_floor_pct": 12}}})";
  std::ofstream(dir / "not-cal.json") << R"({"schema": "isolab-comparison"})";
  json doc = spec_with(json::parse(R"({"calibration": "cal.json"})"));
  std::ofstream(dir / "spec.json") << doc.dump();
  const Spec s = load_spec_file(dir / "spec.json");
  const json& c = s.raw["compare"]["calibration"];
  EXPECT_EQ(c["file"], "cal.json");
  EXPECT_EQ(c["metrics"]["sys.insns_per_syscall"]["jitter"], 0.5);
  EXPECT_EQ(c["metrics"]["sys.insns_per_syscall"]["runs"], 3);
  EXPECT_EQ(c["metrics"]["lat.latency_max_us"]["noise_floor_pct"], 12);
  EXPECT_EQ(s.compare, s.raw["compare"]);
  const CompareSettings settings = settings_from_json(s.compare);
  EXPECT_DOUBLE_EQ(settings.threshold_pct_for("lat.latency_max_us"), 12);
  doc["compare"]["calibration"] = "not-cal.json";
  std::ofstream(dir / "spec.json", std::ios::trunc) << doc.dump();
  try {
    load_spec_file(dir / "spec.json");
    ADD_FAILURE() << "a file that is no calibration was taken";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.pointer(), "/compare/calibration");
    EXPECT_THAT(e.what(), HasSubstr("not an isolab calibration document"));
  }
  doc["compare"]["calibration"] = "missing.json";
  std::ofstream(dir / "spec.json", std::ios::trunc) << doc.dump();
  EXPECT_THROW(load_spec_file(dir / "spec.json"), SpecError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace isolab
