// process tier: the guest step scripts the workload table writes are run for real on the host
// (same tools, same argv) and their outputs go through the same parsers as in a guest.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "guest/channel.h"
#include "sys/process.h"
#include "workload/step.h"
#include "workload/workload.h"

namespace fs = std::filesystem;

namespace isolab {
namespace {

CpuPartition host_partition() {
  CpuPartition p;
  unsigned n = static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_ONLN));
  p.all = CpuSet::all(n);
  p.isolated = CpuSet::of(n, {n - 1});
  p.housekeeping = p.all - p.isolated;
  if (p.housekeeping.empty()) p.housekeeping = p.all;
  return p;
}

// Runs a step's script in a temp dir and packs its outputs as channel records.
ChannelContents run_step(const GuestStep& s) {
  fs::path dir =
      fs::temp_directory_path() / ("isolab-step-" + s.name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto runner = make_real_runner();
  ProcessSpec ps;
  ps.argv = {"sh", "-c", s.script};
  ps.cwd = dir;
  std::string path =
      fs::path(ISOLAB_VMSTAT_OVERHEAD).parent_path().string() + ":" + std::getenv("PATH");
  ps.env = {{"PATH", path}};
  ps.timeout = std::chrono::seconds(120);
  ProcessResult r = runner->run(ps);
  ChannelContents c;
  c.records.push_back({s.name + ".stdout", r.exit_code, r.out, false});
  c.records.push_back({s.name + ".stderr", r.exit_code, r.err, false});
  for (const auto& [suffix, file] : s.outputs) {
    std::string data;
    if (fs::exists(dir / file)) data = read_file(dir / file);
    c.records.push_back({s.name + "." + suffix, r.exit_code, data, false});
  }
  fs::remove_all(dir);
  return c;
}

TEST(WorkloadStep, VmstatOverheadBothModesRunAndParse) {
  for (const char* mode : {"syscall", "idle"}) {
    WorkloadSpec w;
    w.name = std::string("vm-") + mode;
    w.tool = "vmstat-overhead";
    w.mode = mode;
    w.iterations = 200;
    w.warmup_iterations = 10;
    GuestStep s = guest_step(w, host_partition(), TimeoutSpec{}, false);
    WorkloadOutcome o = parse_workload(w, run_step(s));
    EXPECT_FALSE(o.failed) << o.failure;
    std::string metric =
        w.name + (std::string(mode) == "syscall" ? ".cycles_per_syscall" : ".cycles_per_idle_loop");
    ASSERT_TRUE(o.metrics.count(metric)) << mode;
    EXPECT_GT(o.metrics[metric].values.at(0), 0);
  }
}

// The provoking form of the default spec: a duration instead of a count, and a fresh page
// faulted in before every timed operation (vmstat-overhead --touch).
TEST(WorkloadStep, VmstatOverheadDurationAndTouchRunForTheirTime) {
  for (const char* mode : {"syscall", "idle"}) {
    WorkloadSpec w;
    w.name = std::string("vm-") + mode;
    w.tool = "vmstat-overhead";
    w.mode = mode;
    w.duration_s = 1;
    w.warmup_iterations = 10;
    w.touch_pages = true;
    w.sleep_us = 1000;
    GuestStep s = guest_step(w, host_partition(), TimeoutSpec{}, false);
    EXPECT_NE(s.script.find("'--duration-s' '1'"), std::string::npos) << s.script;
    EXPECT_NE(s.script.find("'--touch'"), std::string::npos) << s.script;
    ChannelContents c = run_step(s);
    const std::string& out = c.records.at(0).data;
    WorkloadOutcome o = parse_workload(w, c);
    EXPECT_FALSE(o.failed) << o.failure;
    // elapsed_ns is at least the duration; every timed iteration touched one page.
    auto j = nlohmann::json::parse(out.substr(out.find('{')));
    EXPECT_GE(j.at("elapsed_ns").get<double>(), 1e9) << out;
    EXPECT_EQ(j.at("touched_pages").get<long>(), j.at("iterations").get<long>()) << out;
    if (std::string(mode) == "idle") {
      // usleep(1000) iterations: fewer than 1000 fit in one second.
      EXPECT_LT(j.at("iterations").get<long>(), 1000) << out;
    }
  }
}

TEST(WorkloadStep, StressngRunsAndParses) {
  WorkloadSpec w;
  w.name = "load";
  w.tool = "stress-ng";
  w.cpus = "all";
  w.stressors = {{"cpu", 1}};
  w.duration_s = 2;
  GuestStep s = guest_step(w, host_partition(), TimeoutSpec{}, false);
  WorkloadOutcome o = parse_workload(w, run_step(s));
  EXPECT_FALSE(o.failed) << o.failure;
  ASSERT_TRUE(o.metrics.count("load.cpu.bogo_ops_per_s_real"));
  EXPECT_GT(o.metrics["load.cpu.bogo_ops_per_s_real"].values.at(0), 0);
}

TEST(WorkloadStep, CyclictestWithLoadRunsAndParses) {
  WorkloadSpec w;
  w.name = "lat";
  w.tool = "cyclictest";
  w.duration_s = 2;
  w.histogram_us = 200;
  WorkloadSpec l;
  l.name = "load";
  l.tool = "stress-ng";
  l.cpus = "housekeeping";
  l.stressors = {{"cpu", 1}};
  l.duration_s = 2;
  w.load = std::vector<WorkloadSpec>{l};
  GuestStep s = guest_step(w, host_partition(), TimeoutSpec{}, false);
  WorkloadOutcome o = parse_workload(w, run_step(s));
  EXPECT_FALSE(o.failed) << o.failure;
  ASSERT_TRUE(o.metrics.count("lat.latency_max_us"));
  EXPECT_TRUE(o.metrics.count("lat.load.cpu.bogo_ops_per_s_real"));
  EXPECT_FALSE(o.histograms.is_null());
}

// The rtla steps run for real on this host. Where the host kernel has the tracer (tracefs
// mounted, available_tracers lists it) they must measure; where it has not (this build host: a
// container without tracefs) the guest-side check must stop the step before rtla runs and the
// outcome must be a classified failure, never metrics of zero noise (docs/sources.md [r2]). Then
// the real rtla itself, started without the check, must fail the same way.
TEST(WorkloadStep, RtlaStepsMeasureOrFailClassified) {
  for (const char* tool : {"rtla-osnoise", "rtla-timerlat"}) {
    WorkloadSpec w;
    w.name = tool;
    w.tool = tool;
    w.duration_s = 1;
    const std::string tracer = std::string(tool).substr(5);
    std::string available;
    if (fs::exists("/sys/kernel/tracing/available_tracers"))
      available = read_file("/sys/kernel/tracing/available_tracers");
    const bool has_tracer = (" " + available + " ").find(" " + tracer + " ") != std::string::npos ||
                            available.find(tracer + "\n") != std::string::npos;
    GuestStep s = guest_step(w, host_partition(), TimeoutSpec{}, false);
    WorkloadOutcome o = parse_workload(w, run_step(s));
    if (has_tracer) {
      EXPECT_FALSE(o.failed) << o.failure;
      EXPECT_FALSE(o.metrics.empty());
      continue;
    }
    EXPECT_TRUE(o.failed) << tool;
    EXPECT_NE(o.failure.find("tracer unavailable"), std::string::npos) << o.failure;
    EXPECT_TRUE(o.metrics.empty());

    GuestStep direct = s;
    direct.script = "rtla " + tracer + (tracer == "osnoise" ? " top -q" : " hist") + " -d 1s\n";
    ChannelContents ch = run_step(direct);
    ch.records.erase(std::remove_if(ch.records.begin(), ch.records.end(),
                                    [](const ChannelRecord& r) {
                                      return r.name.find("available_tracers") != std::string::npos;
                                    }),
                     ch.records.end());
    WorkloadOutcome d = parse_workload(w, ch);
    EXPECT_TRUE(d.failed) << tool;
    EXPECT_NE(d.failure.find("Tracer " + tracer + " not found!"), std::string::npos) << d.failure;
  }
}

}  // namespace
}  // namespace isolab
