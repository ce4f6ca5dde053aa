// vm tier: rtla osnoise and timerlat as workloads on a real 6.1 guest (the vm tier's vanilla
// kernel from the cache: base.config has OSNOISE_TRACER and TIMERLAT_TRACER), and the guest-side
// check that tells a kernel without the tracer from "no noise" (docs/sources.md [r2]).
#include <gtest/gtest.h>

#include "vm/isolab_run.h"

namespace isolab {
namespace {

using namespace vmtest;
using nlohmann::json;

// Per isolated CPU (2, 3) every slot holds a value.
void expect_per_cpu(const json& m, const std::string& name) {
  ASSERT_TRUE(m.is_object()) << name << " missing";
  EXPECT_EQ(m["cpus"], json::array({2, 3})) << name << ": " << m.dump();
  for (const auto& v : m["values"]) EXPECT_TRUE(v.is_number()) << name << ": " << m.dump();
}

TEST(WorkloadRtla, OsnoiseAndTimerlatOnIsolatedCpus) {
  auto dir = temp_dir("rtla");
  IsolabRun r = run_isolab(load_spec("rtla-short.json"), dir);
  ASSERT_EQ(r.proc.exit_code, 0) << read_file(dir / "isolab.stderr", 20000);
  ASSERT_EQ(r.result["cells"].size(), 1u);
  const json& c = r.result["cells"][0];
  ASSERT_EQ(c.value("status", ""), "ok") << c.dump(1).substr(0, 4000);

  // osnoise: noise sums, the largest period's noise and the largest single noise, CPU
  // availability, interference counts by kind per second.
  for (const char* n :
       {"osnoise.osnoise.noise_us", "osnoise.osnoise.max_noise_us", "osnoise.osnoise.max_single_us",
        "osnoise.osnoise.cpu_available_pct", "osnoise.osnoise.hw_per_s",
        "osnoise.osnoise.nmi_per_s", "osnoise.osnoise.irq_per_s", "osnoise.osnoise.softirq_per_s",
        "osnoise.osnoise.thread_per_s"})
    expect_per_cpu(metric(c, n), n);
  const json& noise = metric(c, "osnoise.osnoise.noise_us");
  const json& max_noise = metric(c, "osnoise.osnoise.max_noise_us");
  const json& single = metric(c, "osnoise.osnoise.max_single_us");
  const json& avail = metric(c, "osnoise.osnoise.cpu_available_pct");
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_LE(single["values"][i].get<double>(), max_noise["values"][i].get<double>());
    EXPECT_LE(max_noise["values"][i].get<double>(), noise["values"][i].get<double>());
    EXPECT_GT(avail["values"][i].get<double>(), 0.0);
    EXPECT_LE(avail["values"][i].get<double>(), 100.0);
  }
  const json& irq = metric(c, "osnoise.osnoise.irq_per_s");
  EXPECT_EQ(irq["kind"], "count");
  EXPECT_EQ(irq["unit"], "1/s");
  // Each CPU's rate is its count over the time the osnoise thread sampled that CPU (its Runtime
  // column, one window per CPU), not over the run: at the default runtime of the whole 1 s
  // period that is about the 4 s asked for, a little less when a period was cut short, more when
  // the emulated guest finishes late. No run-wide window beside them.
  ASSERT_TRUE(irq.contains("windows_s")) << irq.dump();
  EXPECT_FALSE(irq.contains("window_s")) << irq.dump();
  ASSERT_EQ(irq["windows_s"].size(), 2u) << irq.dump();
  ASSERT_EQ(irq["counts"].size(), 2u) << irq.dump();
  for (std::size_t i = 0; i < 2; ++i) {
    const double window = irq["windows_s"][i].get<double>();
    EXPECT_GE(window, 2.0) << irq.dump();
    EXPECT_LE(window, 10.0) << irq.dump();
    EXPECT_NEAR(irq["values"][i].get<double>(), irq["counts"][i].get<double>() / window, 1e-9)
        << irq.dump();
  }

  // timerlat: IRQ and thread latency per CPU, min <= avg <= max, the thread wakes after its IRQ.
  for (const char* kind : {"irq", "thread"})
    for (const char* stat : {"min", "avg", "max"}) {
      std::string n = std::string("timerlat.timerlat.") + kind + "_" + stat + "_us";
      expect_per_cpu(metric(c, n), n);
    }
  for (const char* kind : {"irq", "thread"}) {
    const std::string p = std::string("timerlat.timerlat.") + kind;
    for (std::size_t i = 0; i < 2; ++i) {
      const double mn = metric(c, p + "_min_us")["values"][i].get<double>();
      const double avg = metric(c, p + "_avg_us")["values"][i].get<double>();
      const double mx = metric(c, p + "_max_us")["values"][i].get<double>();
      EXPECT_LE(mn, avg) << p;
      EXPECT_LE(avg, mx) << p;
      EXPECT_LT(mx, 1e6) << p;  // under a second, even under TCG
    }
  }
  for (std::size_t i = 0; i < 2; ++i)
    EXPECT_LE(metric(c, "timerlat.timerlat.irq_min_us")["values"][i].get<double>(),
              metric(c, "timerlat.timerlat.thread_max_us")["values"][i].get<double>());
}

// docs/sources.md [r2] in a real guest: the same kernel, with available_tracers shown without
// "timerlat" (a file bind-mounted over it before the steps), must give a failed cell whose reason
// says the tracer is unavailable, and no timerlat metric; rtla is not started.
TEST(WorkloadRtla, MissingTracerIsAClassifiedFailureNotNoNoise) {
  auto dir = temp_dir("rtla-r2");
  json spec = load_spec("rtla-short.json");
  spec["name"] = "rtla-r2";
  spec["workloads"] = json::array({spec["workloads"][1]});
  spec["workloads"][0]["duration_s"] = 1;
  const std::string hide =
      "T=/sys/kernel/tracing; tr ' ' '\\n' < $T/available_tracers | grep -vx timerlat | "
      "tr '\\n' ' ' > /tmp/at; mount -o bind /tmp/at $T/available_tracers";
  IsolabRun r = run_isolab(spec, dir, {{"ISOLAB_TEST_GUEST_INJECT", hide}});
  ASSERT_FALSE(r.result.is_null()) << read_file(dir / "isolab.stderr", 20000);
  ASSERT_EQ(r.result["cells"].size(), 1u);
  const json& c = r.result["cells"][0];
  EXPECT_EQ(c.value("status", ""), "failed") << c.dump(1).substr(0, 4000);
  EXPECT_EQ(c.value("failure_class", ""), "workload");
  const std::string reason = c.value("reason", "");
  EXPECT_NE(reason.find("tracer unavailable"), std::string::npos) << reason;
  EXPECT_NE(reason.find("CONFIG_TIMERLAT_TRACER"), std::string::npos) << reason;
  EXPECT_TRUE(metric(c, "timerlat.timerlat.irq_max_us").is_null());
}

}  // namespace
}  // namespace isolab
