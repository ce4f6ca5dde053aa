// The dry run's plan text for a fixed spec, with the cache's and the probe's answers given, so
// that nothing of the host enters the golden text.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "base/error.h"
#include "base/progress.h"
#include "pipeline/plan_budget.h"
#include "pipeline/plan_text.h"
#include "spec/spec.h"

using namespace isolab;

namespace {

Spec fixed_spec() {
  nlohmann::json doc = nlohmann::json::parse(R"({
    "name": "golden",
    "variants": [{"name": "vanilla"}, {"name": "patched", "extra_cmdline": "nosmt"}],
    "guest": {"cmdline": "isolcpus=nohz,domain,2-3 nohz_full=2-3 irqaffinity=0-1",
              "vcpus": 4, "memory_mib": 256},
    "workloads": [
      {"name": "idle", "tool": "vmstat-overhead", "mode": "idle", "cpus": "2", "duration_s": 3},
      {"name": "sys", "tool": "vmstat-overhead", "mode": "syscall", "cpus": "3",
       "iterations": 500},
      {"name": "lat", "tool": "cyclictest", "cpus": "isolated", "duration_s": 4,
       "load": {"tool": "stress-ng", "cpus": "housekeeping", "stressors": {"cpu": 1}}}],
    "repetitions": 2,
    "warmup_repetitions": 1,
    "boot_order_seed": 7,
    "compare": {"alpha": 0.01,
                "primary": [{"metric": "idle.noise.vmstat_update_per_s", "cpus": "2",
                             "bad": "higher", "threshold_pct": 10},
                            {"metric": "lat.latency_max_us", "bad": "higher"}]}
  })");
  return parse_spec(doc, ".");
}

PlanTextFacts fixed_facts() {
  PlanTextFacts f;
  KernelLookup cached;
  cached.state = KernelLookup::State::cached;
  cached.build_key = std::string(64, 'a');
  cached.kernel_release = "6.1.0-isolab-aaaaaaaaaaaa";
  KernelLookup build;
  build.why = "no cached kernel for these inputs";
  build.last_build_seconds = 125.4;
  build.last_build_variant = "vanilla";
  f.kernels = {cached, build};
  f.cache_dir = "CACHE";
  f.accelerator = "tcg";
  f.accelerator_reason = "requested";
  return f;
}

const char* kGolden = R"(Plan of spec golden

Kernels (kernel cache CACHE):
  vanilla: from the kernel cache, 6.1.0-isolab-aaaaaaaaaaaa (build key aaaaaaaaaaaa)
    0 patches, base tinyconfig, 0 config fragments
  patched: to build (no cached kernel for these inputs; configured first, then built unless a cached kernel has the same final .config); the last build of this source and base config took 2 min 05 s (variant vanilla)
    0 patches, base tinyconfig, 0 config fragments

Guest:
  4 vCPUs (1 socket x 4 cores x 1 thread), 256 MiB memory
  accelerator: TCG (requested)
  isolated CPUs: 2-3; housekeeping CPUs: 0-1
  kernel command line: isolcpus=nohz,domain,2-3 nohz_full=2-3 irqaffinity=0-1
    variant patched adds: nosmt
    isolab adds 571 bytes of trace_event=... trace_clock=global (tracing the isolated CPUs; --no-trace drops it)
    the backends add: console=ttyS0 panic=-1 (and no_timer_check under TCG)
    boots the instruction-counting plugin counts (TCG without --no-insn-count) add:
      nokaslr: KASLR would move the kernel away from its System.map, by which the instruction-counting plugin and the function profile name functions
      clocksource=tsc: the same clocksource in every boot of a kernel (left out when the line chooses one)
      tsc=reliable: no TSC synchronization check between CPUs nor TSC watchdog, whose outcome under emulation follows the host's timing

Boots: 6 = 2 variants x (2 measured repetitions + 1 warm-up)
  order: seed 7 shuffles the variants within each block:
    warm-up 0: vanilla patched
    repetition 0: patched vanilla
    repetition 1: patched vanilla

Steps of every boot, in order (after the isolation gate checks the guest):
  1. idle: vmstat-overhead (idle) on CPU 2, 3 s (timeout 63 s)
  2. sys: vmstat-overhead (syscall) on CPU 3, 500 iterations (time not known before the run) (timeout 60 s)
  3. lat: cyclictest on CPUs 2-3, 4 s, with stress-ng on CPUs 0-1 (timeout 67 s)

Verdict (isolab compare; exit status 1 on a regression, 3 when no primary metric could reach alpha):
  2 primary metrics, each tested one-sided in its bad direction; regressed when the step-down rejects it and the change is beyond its margin, 'changed, below threshold' when inside it:
    idle.noise.vmstat_update_per_s[cpu2]: regressed if higher, threshold 10%
    lat.latency_max_us: regressed if higher, threshold by the metric's kind (below)
  margins, fixed before the run: timing 2% (at least 25% when a boot ran under TCG); count 2% of A's mean and at least the count floor; instructions 1%; a metric's own thresholds_pct entry or the calibration's noise floor raises them
  one alpha budget of 0.01 for the exit status: the discrete step-down over the primaries, kernel failure classes, gate checks and retried boots runs at 0.01; with every primary able to reach it, the first level is 0.01 / 2 = 0.005
  at 2 boots a side each exact test gives at best p = 0.167:
    idle.noise.vmstat_update_per_s[cpu2]: CANNOT REACH ALPHA
    lat.latency_max_us: CANNOT REACH ALPHA
  every primary's exact test can reach its level from 5 boots a side
  WARNING: no primary metric can reach alpha at 2 boots a side: compare will exit 3 (nothing could be detected) unless rows turn out constant or something else is counted against B; raise repetitions to at least 5
  also counted against B, each as B's rate against A's in the same budget: kernel failure classes (build, boot, panic, oops, warning, RCU stall, lockup), isolation-gate checks, retried boots; and new build warnings in files B's patches touch
  every other metric is secondary: reported with a Westfall-Young family-wise p, never setting the exit status

Wall time estimate: about 4 min 47 s (an estimate)
  basis: kernel builds 2 min 05 s (1 kernel to build) + 6 boots x (20 s assumed boot overhead under TCG + 7 s of steps)
  not counted: the run time of sys (counted in iterations; each is bounded by its timeout)
)";

}  // namespace

TEST(PlanText, FixedSpecReadsAsTheGolden) {
  const Spec spec = fixed_spec();
  EXPECT_EQ(plan_text(spec, derive_guest(spec), fixed_facts()), kGolden);
}

TEST(PlanText, KernelWithoutRecordedBuildTimeSaysSo) {
  const Spec spec = fixed_spec();
  PlanTextFacts f = fixed_facts();
  f.kernels[1].last_build_seconds.reset();
  const std::string text = plan_text(spec, derive_guest(spec), f);
  EXPECT_NE(text.find("no previous build time recorded"), std::string::npos) << text;
  EXPECT_NE(text.find("1 without a recorded build time, counted as 0"), std::string::npos);
}

TEST(PlanText, RemoteHostsDecideTheAccelerator) {
  const Spec spec = fixed_spec();
  PlanTextFacts f = fixed_facts();
  f.accelerator.clear();
  const std::string text = plan_text(spec, derive_guest(spec), f);
  EXPECT_NE(text.find("decided by the libvirt hosts at run start"), std::string::npos) << text;
}

TEST(PlanText, OneLookupPerVariantIsRequired) {
  const Spec spec = fixed_spec();
  PlanTextFacts f = fixed_facts();
  f.kernels.pop_back();
  EXPECT_THROW(plan_text(spec, derive_guest(spec), f), Error);
}

TEST(PlanText, HumanDurations) {
  EXPECT_EQ(format_duration(44.6), "45 s");
  EXPECT_EQ(format_duration(125.4), "2 min 05 s");
  EXPECT_EQ(format_duration(3725), "1 h 02 min");
  EXPECT_EQ(format_duration(-3), "0 s");
}

namespace {

// The default's six primaries, at `boots` a side, the last declaring what it must detect.
Spec six_primaries(int boots) {
  nlohmann::json doc = nlohmann::json::parse(R"({
    "name": "six",
    "variants": [{"name": "vanilla"}, {"name": "patched"}],
    "guest": {"cmdline": "isolcpus=nohz,domain,2-3 nohz_full=2-3 irqaffinity=0-1",
              "vcpus": 4, "memory_mib": 256},
    "workloads": [
      {"name": "s", "tool": "vmstat-overhead", "mode": "syscall", "cpus": "2", "iterations": 9},
      {"name": "i", "tool": "vmstat-overhead", "mode": "idle", "cpus": "3", "duration_s": 5}],
    "compare": {"primary": [
      {"metric": "s.insns_per_syscall", "bad": "higher"},
      {"metric": "i.insns_per_idle_loop", "bad": "higher"},
      {"metric": "s.noise.kernel_insns_per_s", "cpus": "3", "bad": "higher"},
      {"metric": "i.noise.kernel_insns_per_s", "cpus": "2", "bad": "higher"},
      {"metric": "s.noise.vmstat_update_per_s", "cpus": "2", "bad": "higher"},
      {"metric": "i.noise.vmstat_update_per_s", "cpus": "3", "bad": "higher",
       "detect": {"change": 0.4, "baseline": 0.4}}]}
  })");
  doc["repetitions"] = boots;
  return parse_spec(doc, ".");
}

// six_primaries with the two path lengths calibrated (range rule rows, 3 runs each).
Spec six_primaries_calibrated(int boots) {
  Spec spec = six_primaries(boots);
  spec.compare["calibration"] = {{"metrics",
                                  {{"s.insns_per_syscall", {{"jitter", 0.5}, {"runs", 3}}},
                                   {"i.insns_per_idle_loop", {{"jitter", 246}, {"runs", 3}}}}}};
  return spec;
}

// The number N of "a regression of 0.4/s needs N boots a side" or "it needs N boots a side".
std::string boots_needed_in(const std::string& power) {
  std::smatch m;
  if (!std::regex_search(power, m, std::regex("needs ([0-9]+|more than 40) boots a side")))
    return "none in: " + power;
  return m[1];
}

}  // namespace

// One boot a side: the range rule needs 2 a side, so its rows take no share of alpha (their bound
// at 1, 0.125 each, once took all of it) and no exact test reaches 0.05 / 6; what the plan says
// is needed is worked out at each size's own level, the number the plan at 5 boots gives too.
TEST(PlanBudget, BootsNeededAreCountedAtTheLevelOfThatManyBoots) {
  const PlanBudget one = plan_budget(six_primaries_calibrated(1));
  const PlanBudget five = plan_budget(six_primaries_calibrated(5));
  EXPECT_EQ(one.range_share, 0);
  EXPECT_NEAR(one.per_hypothesis, 0.05 / 6, 1e-12);
  EXPECT_TRUE(one.none_reachable);
  ASSERT_TRUE(one.fewest_per_side);
  EXPECT_EQ(*one.fewest_per_side, 5U);
  EXPECT_NE(one.warnings.back().find("raise repetitions to at least 5"), std::string::npos)
      << one.warnings.back();
  const std::string at_one = boots_needed_in(one.primaries.back().power);
  EXPECT_EQ(at_one, boots_needed_in(five.primaries.back().power));
  EXPECT_NE(at_one, "more than 40");
  EXPECT_NE(plan_budget_text(one).find("every primary's exact test can reach its level from 5 "
                                       "boots a side"),
            std::string::npos);
  EXPECT_EQ(plan_budget_text(five).find("can reach its level from"), std::string::npos);
}

// The review: 4 boots a side over six primaries can never reach alpha (1/70 x 6 = 0.086); the
// plan says so before anything is built, and `run` warns with the same lines.
TEST(PlanBudget, FourAgainstFourOverSixPrimariesIsReportedBeforeTheRun) {
  const PlanBudget four = plan_budget(six_primaries(4));
  EXPECT_TRUE(four.none_reachable);
  EXPECT_NEAR(four.per_hypothesis, 0.05 / 6, 1e-12);
  ASSERT_FALSE(four.warnings.empty());
  EXPECT_EQ(four.warnings.front(),
            "s.insns_per_syscall cannot reach alpha at 4 boots a side: its exact test gives at "
            "best p = 0.0143, not below 0.05 / 6 = 0.00833 when every primary can reach it");
  EXPECT_NE(four.warnings.back().find("compare will exit 3"), std::string::npos);
  const std::string text = plan_text(six_primaries(4), derive_guest(six_primaries(4)), [] {
    PlanTextFacts f = fixed_facts();
    f.kernels = {f.kernels[0], f.kernels[0]};
    return f;
  }());
  EXPECT_NE(text.find("i.noise.vmstat_update_per_s[cpu3]: CANNOT REACH ALPHA"), std::string::npos)
      << text;
  // Five a side reach it; the detect line gives the power of the declared change.
  const PlanBudget five = plan_budget(six_primaries(5));
  EXPECT_FALSE(five.none_reachable);
  EXPECT_TRUE(five.warnings.empty());
  EXPECT_NE(five.primaries.back().power.find("i.noise.vmstat_update_per_s[cpu3]: detect 0.4/s "
                                             "from 0.4/s in 5 s x 5 boots a side"),
            std::string::npos)
      << five.primaries.back().power;
}
