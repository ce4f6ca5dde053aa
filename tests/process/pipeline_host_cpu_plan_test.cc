// process tier: the built `isolab` refuses, before building anything, a guest that cannot get
// dedicated host CPUs when the spec does not allow overcommit, naming the numbers; `isolab
// doctor SPEC` and `run --dry-run` show the same plan. A bad workload CPU list is refused before
// the build too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "pipeline/host_cpu_plan.h"
#include "vm/isolab_run.h"

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

namespace isolab {
namespace {

using namespace vmtest;

// e2e-short with one vCPU more than this host has online, the last one isolated.
json too_big_spec(unsigned* vcpus) {
  const unsigned n = read_host_topology().online.count() + 1;
  json j = load_spec("e2e-short.json");
  j["guest"]["vcpus"] = n;
  j["guest"]["cmdline"] =
      "isolcpus=" + std::to_string(n - 1) + " nohz_full=" + std::to_string(n - 1) + " nosoftlockup";
  j.erase("overcommit");
  *vcpus = n;
  return j;
}

TEST(HostPlanCli, OvercommittedSpecWithoutOvercommitIsRefusedWithTheNumbers) {
  unsigned n = 0;
  json spec = too_big_spec(&n);
  const HostTopology host = read_host_topology();
  fs::path dir = temp_dir("hostplan-refuse");
  IsolabRun r = run_isolab(spec, dir, {{"ISOLAB_CACHE_DIR", (dir / "cache").string()}});
  const std::string err = read_file(dir / "isolab.stderr", 20000);
  EXPECT_EQ(r.proc.exit_code, 2) << err;
  EXPECT_THAT(err, HasSubstr("the guest needs " + std::to_string(n) + " vCPUs (1 isolated)"));
  EXPECT_THAT(err,
              HasSubstr("this host has " + std::to_string(host.online.count()) + " online CPUs"));
  EXPECT_THAT(err, HasSubstr("0 such guests fit at once"));
  EXPECT_THAT(err, HasSubstr("\"overcommit\": true"));
  // Refused before any build or run directory, and before the series apply check unpacks the
  // kernel source: nothing in the cache, no result.
  EXPECT_FALSE(fs::exists(dir / "cache" / "kernels"));
  EXPECT_FALSE(fs::exists(dir / "cache" / "src"));
  EXPECT_TRUE(!fs::exists(dir / "results") || fs::is_empty(dir / "results"));

  // With overcommit the dry run plans one overcommitted guest on every online CPU.
  spec["overcommit"] = true;
  write_file_atomic(dir / "spec.json", spec.dump(2));
  ProcessResult dry =
      run_isolab_command({"run", (dir / "spec.json").string(), "--dry-run", "--json"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  json plan = json::parse(dry.out)["host_plan"];
  EXPECT_TRUE(plan["ok"]);
  EXPECT_TRUE(plan["overcommitted"]);
  ASSERT_EQ(plan["slots"].size(), 1u);
  EXPECT_EQ(plan["slots"][0]["vcpus"][0], host.online.to_list());
  EXPECT_EQ(run_isolab_command({"doctor", (dir / "spec.json").string()}).exit_code, 0);

  // doctor prints the refusal for the spec without overcommit, and says it by its exit status.
  spec.erase("overcommit");
  write_file_atomic(dir / "spec.json", spec.dump(2));
  ProcessResult doc = run_isolab_command({"doctor", (dir / "spec.json").string()});
  EXPECT_EQ(doc.exit_code, 1) << doc.err;
  EXPECT_THAT(doc.out, HasSubstr("REFUSED  the guest needs " + std::to_string(n) + " vCPUs"));
  const ProcessResult json_doc =
      run_isolab_command({"doctor", (dir / "spec.json").string(), "--json"});
  EXPECT_EQ(json_doc.exit_code, 1) << json_doc.err;
  EXPECT_FALSE(json::parse(json_doc.out).at("host_plan").at("ok").get<bool>());
  fs::remove_all(dir);
}

TEST(HostPlanCli, ParallelBeyondTheHostIsRefused) {
  fs::path dir = temp_dir("hostplan-parallel");
  json spec = load_spec("pinned-1vcpu.json");
  const unsigned online = read_host_topology().online.count();
  IsolabRun r = run_isolab(spec, dir, {{"ISOLAB_CACHE_DIR", (dir / "cache").string()}},
                           {"--parallel", std::to_string(online + 1)});
  const std::string err = read_file(dir / "isolab.stderr", 20000);
  EXPECT_EQ(r.proc.exit_code, 2) << err;
  EXPECT_THAT(err, HasSubstr(std::to_string(online) + " such guests fit at once, " +
                             std::to_string(online + 1) + " asked"));
  fs::remove_all(dir);
}

// A workload CPU list the guest cannot have is refused before anything is built or unpacked,
// naming the field by its index and the spec file (it used to surface only after the kernel
// builds, then after the series apply check had unpacked the source: 45 s on an empty cache).
TEST(SpecCli, BadWorkloadCpusAreRefusedBeforeTheBuildNamingFieldAndFile) {
  fs::path dir = temp_dir("spec-cpus");
  json spec = load_spec("e2e-short.json");
  spec["workloads"][1]["cpus"] = "3-1";
  IsolabRun r = run_isolab(spec, dir, {{"ISOLAB_CACHE_DIR", (dir / "cache").string()}});
  const std::string err = read_file(dir / "isolab.stderr", 20000);
  EXPECT_EQ(r.proc.exit_code, 2) << err;
  EXPECT_THAT(err, HasSubstr("/workloads/1/cpus: cpulist '3-1': EINVAL"));
  EXPECT_THAT(err, HasSubstr("(in " + (dir / "spec.json").string() + ")"));
  EXPECT_FALSE(fs::exists(dir / "cache" / "kernels"));
  EXPECT_FALSE(fs::exists(dir / "cache" / "src")) << "the source was unpacked first";
  EXPECT_TRUE(!fs::exists(dir / "results") || fs::is_empty(dir / "results"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace isolab
