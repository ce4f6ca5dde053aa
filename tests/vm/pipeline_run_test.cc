// vm tier: `isolab run` end to end with real kernels (built from linux-source-6.1 or taken from
// the cache in $ISOLAB_CACHE_DIR / ~/.cache/isolab), booted under QEMU, real tool output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/files.h"
#include "sys/process.h"
#include "vm/isolab_run.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {
namespace {

using namespace vmtest;

// A guest fact as read from the guest (sysfs files end with a newline).
std::string fact(const json& cell, const char* name) {
  std::string s = cell["guest"][name].get<std::string>();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string stderr_of(const fs::path& dir) { return read_file(dir / "isolab.stderr", 20000); }

const json* cell(const json& result, const std::string& id) {
  for (const auto& c : result["cells"])
    if (c["id"] == id) return &c;
  return nullptr;
}

// Both variants built (or cached), booted with an isolation command line, the gate
// passes, and real cyclictest / stress-ng / vmstat-overhead output is parsed. A second run of
// the same spec builds no kernel.
TEST(PipelineRun, EndToEndBothVariantsThenCached) {
  fs::path dir = temp_dir("e2e");
  IsolabRun r = run_isolab(load_spec("e2e-short.json"), dir);
  ASSERT_EQ(r.proc.exit_code, 0) << stderr_of(dir);
  ASSERT_FALSE(r.result.is_null());
  EXPECT_EQ(r.result["schema_version"], 1);
  EXPECT_EQ(r.result["status"], "complete") << stderr_of(dir);
  EXPECT_EQ(r.result["host"]["accelerator"].get<std::string>().empty(), false);
  for (const char* id : {"vanilla-r0", "patched-r0"}) {
    const json* c = cell(r.result, id);
    ASSERT_NE(c, nullptr) << id;
    EXPECT_EQ((*c)["status"], "ok") << id << ": " << (*c)["reason"];
    EXPECT_TRUE((*c)["gate"]["pass"].get<bool>()) << (*c)["gate"].dump(2);
    EXPECT_EQ((*c)["guest"]["isolated"].get<std::string>().substr(0, 3), "2-3");
    std::string want = r.result["variants"][(*c)["variant"].get<std::string>()]["kernel_release"];
    EXPECT_EQ((*c)["guest"]["uname_r"].get<std::string>().substr(0, want.size()), want);
    const json& m = (*c)["metrics"];
    ASSERT_TRUE(m.contains("latency.latency_max_us")) << m.dump(2);
    EXPECT_EQ(m["latency.latency_max_us"]["unit"], "us");
    ASSERT_EQ(m["latency.latency_max_us"]["values"].size(), 2u);  // one thread per isolated CPU
    for (double v : m["latency.latency_max_us"]["values"]) {
      EXPECT_GT(v, 0);
      EXPECT_LT(v, 1e6);
    }
    EXPECT_GT(m["latency.load.cpu.bogo_ops_per_s_real"]["values"][0].get<double>(), 0);
    EXPECT_GT(m["vmstat-syscall.cycles_per_syscall"]["values"][0].get<double>(), 0);
    EXPECT_GT(m["vmstat-idle.cycles_per_idle_loop"]["values"][0].get<double>(), 0);
    EXPECT_TRUE(m.contains("latency.noise.local_timer_per_s"));
    EXPECT_TRUE(fs::exists(r.run_dir / (*c)["raw_dir"].get<std::string>() / "console.log"));
    // Where the boot's time went: the guest's timeline splits QEMU's time into phases that add
    // up to it, each one real (the steps' windows, a kernel that took time to reach /init).
    const json& ph = (*c)["phases"];
    ASSERT_TRUE(ph.contains("steps")) << ph.dump(2);
    EXPECT_GT(ph["kernel_boot"].get<double>(), 0);
    EXPECT_GT(ph["steps"].get<double>(), 1);
    EXPECT_GE(ph["collection"].get<double>(), 0);
    const double parts = ph["firmware_poweroff"].get<double>() + ph["kernel_boot"].get<double>() +
                         ph["setup"].get<double>() + ph["steps"].get<double>() +
                         ph["collection"].get<double>();
    EXPECT_NEAR(parts, ph["qemu"].get<double>(), 1.0) << ph.dump(2);
  }
  // The run's timings: one stage per kernel with its parts, the guest image, the boots.
  const json& t = r.result["timings"];
  EXPECT_EQ(t["boots"]["count"].get<int>(), 2) << t.dump(2);
  EXPECT_GT(t["total_s"].get<double>(), t["boots"]["seconds"].get<double>());
  std::vector<std::string> stages;
  for (const auto& s : t["stages"]) stages.push_back(s["stage"].get<std::string>());
  EXPECT_NE(std::find_if(stages.begin(), stages.end(),
                         [](const std::string& s) { return s.rfind("kernel vanilla", 0) == 0; }),
            stages.end())
      << t.dump(2);
  EXPECT_NE(read_file(dir / "isolab.stderr").find("Timings (wall seconds):"), std::string::npos);

  // compare on the run prints both variants and, with --all, every metric row.
  auto runner = make_real_runner();
  ProcessSpec cmp;
  cmp.argv = {ISOLAB_BINARY, "compare", "--all", r.run_dir.string()};
  ProcessResult cr = runner->run(cmp);
  EXPECT_TRUE(cr.exit_code == 0 || cr.exit_code == 1) << cr.err;
  EXPECT_NE(cr.out.find("vanilla"), std::string::npos) << cr.out;
  EXPECT_NE(cr.out.find("patched"), std::string::npos) << cr.out;
  EXPECT_NE(cr.out.find("latency.latency_max_us"), std::string::npos) << cr.out;

  // Again, with the patched variant's series given as one mbox (`git format-patch --stdout`
  // form: the directory's patches concatenated in series order): the same build key.
  fs::path dir2 = temp_dir("e2e-again");
  json again_spec = load_spec("e2e-short.json");
  const fs::path series_dir = again_spec["variants"][1]["patches"][0].get<std::string>();
  std::string mbox;
  for (const char* f : {"0001-mm-vmstat-do-not-requeue-vmstat_update-while-it-is-s.patch",
                        "0002-mm-vmstat-track-pending-per-CPU-differentials-with-a.patch",
                        "0003-tick-sched-fold-vmstat-on-idle-re-entry-and-before-r.patch"})
    mbox += read_file(series_dir / f);
  write_file_atomic(dir2 / "vmstat-nohz.mbox", mbox);
  again_spec["variants"][1]["patches"] = json::array({(dir2 / "vmstat-nohz.mbox").string()});
  IsolabRun again = run_isolab(again_spec, dir2);
  ASSERT_EQ(again.proc.exit_code, 0) << stderr_of(dir2);
  for (const char* v : {"vanilla", "patched"}) {
    EXPECT_TRUE(again.result["variants"][v]["from_cache"].get<bool>()) << v;
    EXPECT_EQ(again.result["variants"][v]["build_key"], r.result["variants"][v]["build_key"]) << v;
  }
  const json& patches = again.result["variants"]["patched"]["patches"];
  ASSERT_EQ(patches.size(), 3u);
  EXPECT_EQ(patches[2]["subject"].get<std::string>().substr(0, 12), "[PATCH 3/3] ");
  EXPECT_EQ(patches[0]["sha256"], r.result["variants"]["patched"]["patches"][0]["sha256"]);
}

// The customer line of docs/sources.md [k5] becomes an 8-vCPU guest whose isolation
// gate passes.
TEST(PipelineRun, CustomerLineK5GatePasses) {
  fs::path dir = temp_dir("k5");
  IsolabRun r = run_isolab(load_spec("customer-k5.json"), dir);
  ASSERT_EQ(r.proc.exit_code, 0) << stderr_of(dir);
  const json* c = cell(r.result, "vanilla-r0");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "ok") << (*c)["reason"];
  EXPECT_TRUE((*c)["gate"]["pass"].get<bool>()) << (*c)["gate"].dump(2);
  EXPECT_EQ(r.result["comparison_key"]["vcpus"], 8);
  std::string cmdline = (*c)["guest"]["cmdline"];
  EXPECT_EQ(cmdline.find("BOOT_IMAGE"), std::string::npos);
  EXPECT_EQ(cmdline.find("quiet"), std::string::npos);
  EXPECT_NE(cmdline.find("nohz_full=5,6,7"), std::string::npos);
}

// A line whose CPU lists end beyond their last member (`1-15:2/4`: members end at 14)
// becomes a 16-vCPU guest on base.config's NR_CPUS=16 kernel (no kernel of its own), and the gate
// passes. (The issue's `0-15:2/4` derives the same way but isolates the boot CPU 0, whose tick
// did not stop here: 31/s against 116/s on housekeeping CPUs, every device IRQ on CPU 0.)
TEST(PipelineRun, CustomerGroupPatternLineGets16CpusAndGatePasses) {
  fs::path dir = temp_dir("groups16");
  IsolabRun r = run_isolab(load_spec("customer-groups16.json"), dir);
  ASSERT_EQ(r.proc.exit_code, 0) << stderr_of(dir);
  const json* c = cell(r.result, "vanilla-r0");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "ok") << (*c)["reason"];
  EXPECT_TRUE((*c)["gate"]["pass"].get<bool>()) << (*c)["gate"].dump(2);
  EXPECT_EQ(r.result["comparison_key"]["vcpus"], 16);
  EXPECT_EQ(r.result["variants"]["vanilla"]["nr_cpus"], 16);
  EXPECT_EQ(fact(*c, "cpu_online"), "0-15");
  EXPECT_EQ(fact(*c, "isolated"), "1-2,5-6,9-10,13-14");
  EXPECT_EQ(fact(*c, "nohz_full"), "1-2,5-6,9-10,13-14");
}

// A 20-CPU server's line (two sockets of 10, the shape of docs/sources.md [k7]) boots as a 20-vCPU
// guest on a kernel built with NR_CPUS=20 (a generated fragment over base.config's 16), and the
// gate passes. The 40-vCPU server itself is too slow to boot under TCG on a small host
// (docs/measurements.md), so the vm tier runs 20; the 40-CPU line is a unit test.
TEST(PipelineRun, CustomerLine20CpusGetsItsKernelAndGatePasses) {
  fs::path dir = temp_dir("20cpus");
  IsolabRun r = run_isolab(load_spec("customer-20cpus.json"), dir);
  ASSERT_EQ(r.proc.exit_code, 0) << stderr_of(dir);
  const json* c = cell(r.result, "vanilla-r0");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "ok") << (*c)["reason"];
  EXPECT_TRUE((*c)["gate"]["pass"].get<bool>()) << (*c)["gate"].dump(2);
  EXPECT_EQ(r.result["comparison_key"]["vcpus"], 20);
  EXPECT_EQ(r.result["variants"]["vanilla"]["nr_cpus"], 20);
  EXPECT_EQ(fact(*c, "cpu_online"), "0-19");
  EXPECT_EQ(fact(*c, "isolated"), "4-9,14-19");
  EXPECT_EQ(fact(*c, "nohz_full"), "4-9,14-19");
}

// docs/sources.md [o4]: nohz_full= on a kernel without CONFIG_NO_HZ_FULL: the gate fails
// and says so.
TEST(PipelineRun, NoNohzFullKernelFailsGateNamingTheOption) {
  fs::path dir = temp_dir("nonohz");
  IsolabRun r = run_isolab(load_spec("no-nohz-full.json"), dir);
  ASSERT_NE(r.result, json()) << stderr_of(dir);
  const json* c = cell(r.result, "nonohz-r0");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "invalid");
  EXPECT_NE((*c)["reason"].get<std::string>().find("CONFIG_NO_HZ_FULL"), std::string::npos)
      << (*c)["reason"];
  EXPECT_FALSE((*c)["gate"]["pass"].get<bool>());
  EXPECT_TRUE((*c)["metrics"].empty());  // not measured as if isolated
}

// A mismatch that is the point of the test (guest.gate_expect_fail) is recorded but
// the cell is measured.
TEST(PipelineRun, ExpectedGateFailureIsMeasured) {
  fs::path dir = temp_dir("nonohz-expected");
  json spec = load_spec("no-nohz-full.json");
  spec["guest"]["gate_expect_fail"] = {"nohz_full",    "CONFIG_NO_HZ_FULL",
                                       "RCU offload",  "dmesg isolation messages",
                                       "tick stopped", "clock"};
  IsolabRun r = run_isolab(spec, dir);
  ASSERT_EQ(r.proc.exit_code, 0) << stderr_of(dir);
  const json* c = cell(r.result, "nonohz-r0");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "ok") << (*c)["reason"];
  EXPECT_FALSE((*c)["gate"]["pass"].get<bool>());
  EXPECT_FALSE((*c)["gate_expected_failures"].empty());
  EXPECT_TRUE((*c)["metrics"].contains("vmstat-syscall.cycles_per_syscall"));
}

// A guest that panics (sysrq crash in the init) is classified from the console, and
// the run goes on to the next cell.
TEST(PipelineRun, PanicIsClassifiedAndRunGoesOn) {
  fs::path dir = temp_dir("panic");
  json spec = load_spec("faults.json");
  spec["workloads"] = json::array({spec["workloads"][1]});
  IsolabRun r =
      run_isolab(spec, dir, {{"ISOLAB_TEST_GUEST_INJECT", "echo c > /proc/sysrq-trigger"}});
  ASSERT_FALSE(r.result.is_null()) << stderr_of(dir);
  ASSERT_EQ(r.result["cells"].size(), 2u);
  for (const auto& c : r.result["cells"]) {
    EXPECT_EQ(c["status"], "failed");
    EXPECT_EQ(c["failure_class"], "panic") << c.dump(2);
    EXPECT_LT(c["wall_seconds"].get<double>(), 120);
  }
}

// A workload that hangs is killed at its timeout, classified, and the next workload
// of the same boot is still measured.
TEST(PipelineRun, HungWorkloadTimesOutAndNextWorkloadRuns) {
  fs::path dir = temp_dir("hang");
  json spec = load_spec("faults.json");
  spec["repetitions"] = 1;
  IsolabRun r = run_isolab(spec, dir);
  ASSERT_FALSE(r.result.is_null()) << stderr_of(dir);
  const json* c = cell(r.result, "vanilla-r0");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "failed");
  EXPECT_EQ((*c)["failure_class"], "workload");
  EXPECT_NE((*c)["reason"].get<std::string>().find("hang"), std::string::npos) << (*c)["reason"];
  EXPECT_TRUE((*c)["metrics"].contains("vmstat-syscall.cycles_per_syscall"))
      << (*c)["metrics"].dump();
}

// A guest that never reaches init (no such rdinit) is a boot failure, within its timeout.
TEST(PipelineRun, NoInitIsBootFailure) {
  fs::path dir = temp_dir("noinit");
  json spec = load_spec("faults.json");
  spec["repetitions"] = 1;
  spec["variants"][0]["extra_cmdline"] = "rdinit=/does-not-exist";
  IsolabRun r = run_isolab(spec, dir);
  ASSERT_FALSE(r.result.is_null()) << stderr_of(dir);
  const json* c = cell(r.result, "vanilla-r0");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "failed");
  EXPECT_EQ((*c)["failure_class"], "boot") << (*c).dump(2);
}

// QEMU that cannot start (the "kernel" is not a kernel) is an infrastructure failure,
// retried a bounded number of times, never a kernel failure.
TEST(PipelineRun, QemuFailureIsInfrastructure) {
  fs::path dir = temp_dir("qemufail");
  fs::path junk = dir / "not-a-kernel";
  write_file_atomic(junk, std::string(4096, 'x'));
  json spec = load_spec("faults.json");
  spec["repetitions"] = 1;
  spec["kernel"] = {{"source", {{"prebuilt", junk.string()}}}};
  IsolabRun r = run_isolab(spec, dir);
  ASSERT_FALSE(r.result.is_null()) << stderr_of(dir);
  const json* c = cell(r.result, "vanilla-r0");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "failed");
  EXPECT_EQ((*c)["failure_class"], "infrastructure") << (*c).dump(2);
  EXPECT_EQ((*c)["attempt"], 3);
}

std::string utc_now_text() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool qemu_running_for(const fs::path& dir) {
  auto runner = make_real_runner();
  ProcessSpec ps;
  ps.argv = {"pgrep", "-f", "qemu-system.*" + dir.string()};
  return runner->run(ps).exit_code == 0;
}

// SIGINT mid-boot ends every child (QEMU included) and leaves a readable result.json.
// It says "interrupted" with the time, the boot the signal cut short is not recorded,
// isolab exits 130 (128 + SIGINT), and --resume accepts the run and finishes it.
TEST(PipelineRun, InterruptMidBootLeavesNoChild) {
  fs::path dir = temp_dir("sigint");
  json spec = load_spec("faults.json");
  spec["workloads"] = json::array({spec["workloads"][1]});  // vmstat only: the resume completes
  write_file_atomic(dir / "spec.json", spec.dump(2));
  auto runner = make_real_runner();
  ProcessSpec ps;
  ps.argv = {ISOLAB_BINARY, "run", (dir / "spec.json").string(), "--results-dir",
             (dir / "results").string()};
  ps.stdout_path = dir / "out";
  ps.stderr_path = dir / "err";
  auto proc = runner->start(ps);
  // Wait until a guest is booting (its console log exists).
  bool booting = false;
  for (int i = 0; i < 1200 && !booting; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (fs::exists(dir / "results"))
      for (const auto& e : fs::recursive_directory_iterator(dir / "results"))
        if (e.path().filename() == "console.log" && fs::file_size(e.path()) > 0) booting = true;
  }
  ASSERT_TRUE(booting) << read_file(dir / "err", 20000);
  ASSERT_TRUE(qemu_running_for(dir));
  const std::string before = utc_now_text();
  ::kill(proc->pid(), SIGINT);
  auto res = proc->wait_for(std::chrono::seconds(30));
  ASSERT_TRUE(res.has_value()) << "isolab did not exit after SIGINT";
  EXPECT_EQ(res->term_signal, 0);
  EXPECT_EQ(res->exit_code, 128 + SIGINT) << read_file(dir / "err", 20000);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(qemu_running_for(dir)) << "a QEMU process survived SIGINT";
  fs::path result_file;
  for (const auto& e : fs::recursive_directory_iterator(dir / "results"))
    if (e.path().filename() == "result.json") result_file = e.path();
  ASSERT_FALSE(result_file.empty());
  json j = json::parse(read_file(result_file));
  EXPECT_EQ(j["status"], "interrupted");
  EXPECT_EQ(j["interrupted_by"], "SIGINT");
  // ISO 8601 UTC, at or after the moment the signal was sent (same format compares as text).
  ASSERT_TRUE(j["interrupted_at"].is_string());
  EXPECT_GE(j["interrupted_at"].get<std::string>(), before);
  EXPECT_EQ(j["cells"].size(), 0u) << "the boot cut short by SIGINT was recorded";
  EXPECT_THAT(read_file(dir / "err", 20000), ::testing::HasSubstr("--resume"));

  ProcessSpec rs;
  rs.argv = {ISOLAB_BINARY, "run", (dir / "spec.json").string(), "--resume",
             result_file.parent_path().string()};
  rs.stderr_path = dir / "err2";
  ProcessResult rr = runner->run(rs);
  EXPECT_EQ(rr.exit_code, 0) << read_file(dir / "err2", 20000);
  json done = json::parse(read_file(result_file));
  EXPECT_NE(done["status"], "interrupted");
  EXPECT_NE(done["status"], "running");
  EXPECT_EQ(done["cells"].size(), 2u);
  EXPECT_FALSE(done.contains("interrupted_at"));
  ASSERT_EQ(done["interruptions"].size(), 1u);
  EXPECT_EQ(done["interruptions"][0]["by"], "SIGINT");
  EXPECT_EQ(done["interruptions"][0]["at"], j["interrupted_at"]);
}

// kill -9 after the first cell, then --resume completes the remaining cells without
// redoing the finished one, and result.json is never corrupt.
TEST(PipelineRun, Kill9ThenResume) {
  fs::path dir = temp_dir("resume");
  json spec = load_spec("faults.json");
  spec["workloads"] = json::array({spec["workloads"][1]});
  write_file_atomic(dir / "spec.json", spec.dump(2));
  auto runner = make_real_runner();
  ProcessSpec ps;
  ps.argv = {ISOLAB_BINARY, "run", (dir / "spec.json").string(), "--results-dir",
             (dir / "results").string()};
  ps.stdout_path = dir / "out";
  ps.stderr_path = dir / "err";
  auto proc = runner->start(ps);
  fs::path result_file;
  json first;
  for (int i = 0; i < 2400; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (!fs::exists(dir / "results")) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir / "results"))
      if (e.path().filename() == "result.json") result_file = e.path();
    if (result_file.empty()) continue;
    json j = json::parse(read_file(result_file));  // must always parse (atomic writes)
    if (j["cells"].size() == 1) {
      first = j["cells"][0];
      break;
    }
  }
  ASSERT_FALSE(first.is_null()) << read_file(dir / "err", 20000);
  ::kill(proc->pid(), SIGKILL);
  proc->wait_for(std::chrono::seconds(10));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_FALSE(qemu_running_for(dir)) << "QEMU outlived kill -9 of isolab";

  fs::path run_dir = result_file.parent_path();
  ProcessSpec rs;
  rs.argv = {ISOLAB_BINARY, "run", (dir / "spec.json").string(), "--resume", run_dir.string()};
  rs.stderr_path = dir / "err2";
  ProcessResult rr = runner->run(rs);
  ASSERT_EQ(rr.exit_code, 0) << read_file(dir / "err2", 20000);
  json done = json::parse(read_file(result_file));
  ASSERT_EQ(done["cells"].size(), 2u);
  EXPECT_EQ(done["cells"][0], first);  // the finished cell was not redone
  EXPECT_EQ(done["cells"][1]["id"], "vanilla-r1");
  EXPECT_EQ(done["status"], "complete");
}

}  // namespace
}  // namespace isolab
