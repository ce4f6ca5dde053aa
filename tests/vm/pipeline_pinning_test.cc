// vm tier: a 1-vCPU guest pinned to a host CPU of its own. The vCPU thread's and
// QEMU's other threads' affinity as read back equals the plan recorded in result.json, and the
// guest sees the topology asked for. QEMU backend: read from /proc/<pid>/task/<tid>/status
// while the guest was paused; libvirt backend (<cputune>): from virDomainGetVcpus and
// virDomainGetEmulatorPinInfo once the domain runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "cmdline/cpulist.h"
#include "vm/isolab_run.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {
namespace {

using namespace vmtest;

std::string norm(const json& list) {
  return parse_cpulist(list.get<std::string>(), kMaxCpus).to_list();
}

// Runs pinned-1vcpu.json with `args` and checks the plan against what was read back.
void expect_pinned_as_planned(const char* name, const std::vector<std::string>& args) {
  fs::path dir = temp_dir(name);
  IsolabRun r = run_isolab(load_spec("pinned-1vcpu.json"), dir, {}, args);
  const std::string err = read_file(dir / "isolab.stderr", 20000);
  ASSERT_EQ(r.proc.exit_code, 0) << err;
  const json& plan = r.result["host_plan"];
  ASSERT_TRUE(plan["ok"]) << plan.dump();
  EXPECT_FALSE(plan["overcommitted"]) << "a 1-vCPU guest fits any host with dedicated CPUs";
  ASSERT_EQ(plan["slots"].size(), 1u);
  const json& slot = plan["slots"][0];
  const CpuSet vcpu_cpu = parse_cpulist(slot["vcpus"][0].get<std::string>(), kMaxCpus);
  EXPECT_EQ(vcpu_cpu.count(), 1u) << "the vCPU gets one host CPU of its own";
  if (parse_cpulist(plan["topology"]["online"].get<std::string>(), kMaxCpus).count() > 1) {
    EXPECT_FALSE(vcpu_cpu.intersects(parse_cpulist(slot["emulator"].get<std::string>(), kMaxCpus)))
        << "the emulator shares the vCPU's CPU although the host has more than one";
  }

  ASSERT_EQ(r.result["cells"].size(), 1u);
  const json& c = r.result["cells"][0];
  EXPECT_EQ(c["status"], "ok") << c.value("reason", "");
  EXPECT_EQ(c["overcommitted"], false);
  const json& hc = c["host_cpus"];
  EXPECT_TRUE(hc["pinned_as_planned"]) << hc.dump(2);
  int vcpu_threads = 0, emulator_threads = 0;
  for (const json& t : hc["applied"]) {
    if (t["role"] == "vcpu") {
      ++vcpu_threads;
      EXPECT_EQ(t["vcpu"], 0);
      EXPECT_EQ(norm(t["cpus_allowed_list"]), norm(slot["vcpus"][0])) << t.dump();
    } else {
      ++emulator_threads;
      EXPECT_EQ(norm(t["cpus_allowed_list"]), norm(slot["emulator"])) << t.dump();
    }
  }
  EXPECT_EQ(vcpu_threads, 1);
  EXPECT_GE(emulator_threads, 1) << "QEMU's main loop thread was not read back";
  // -smp 1,sockets=1,cores=1,threads=1, as the guest's sysfs shows it.
  EXPECT_EQ(c["guest"]["topology"].dump(), R"({"cores":1,"cpus":1,"sockets":1,"threads":1})");
  fs::remove_all(dir);
}

TEST(PipelinePinning, VcpuThreadRunsOnItsPlannedHostCpu) {
  expect_pinned_as_planned("pinning", {"--parallel", "1"});
}

TEST(PipelinePinning, LibvirtCputuneIsReadBack) {
  expect_pinned_as_planned("pinning-libvirt", {"--parallel", "1", "--backend", "libvirt"});
}

}  // namespace
}  // namespace isolab
