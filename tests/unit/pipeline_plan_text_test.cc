// The dry run's plan text for a fixed spec, with the cache's and the probe's answers given, so
// that nothing of the host enters the golden text.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/progress.h"
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

Boots: 6 = 2 variants x (2 measured repetitions + 1 warm-up)
  order: seed 7 shuffles the variants within each block:
    warm-up 0: vanilla patched
    repetition 0: patched vanilla
    repetition 1: patched vanilla

Steps of every boot, in order (after the isolation gate checks the guest):
  1. idle: vmstat-overhead (idle) on CPU 2, 3 s (timeout 63 s)
  2. sys: vmstat-overhead (syscall) on CPU 3, 500 iterations (time not known before the run) (timeout 60 s)
  3. lat: cyclictest on CPUs 2-3, 4 s, with stress-ng on CPUs 0-1 (timeout 67 s)

Verdict (isolab compare; exit status 1 on a regression):
  2 primary metrics, each tested one-sided in its bad direction, Holm's step-down over the family of 2 at alpha 0.01; regressed when Holm-significant and beyond its threshold:
    idle.noise.vmstat_update_per_s[cpu2]: regressed if higher, threshold 10%
    lat.latency_max_us: regressed if higher, threshold by the metric's kind (below)
  thresholds by kind: timing 2% (at least 25% when a boot ran under TCG); count 2% of A's mean and at least the count floor; instructions the largest of 1% and 3 x A's coefficient of variation
  also counted against B: kernel-correctness failures (build, boot, panic, oops, warning, RCU stall, lockup) B has and A does not, isolation-gate checks B fails systematically, new build warnings in files B's patches touch
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
