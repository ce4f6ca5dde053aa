// process tier: the built `isolab machine` on the customer machines of tests/data/machine
// (docs/sources.md [cm1]-[cm7]) as directories and as tarballs made from them (tar), and on
// bad input: a truncated tarball, YAML that does not read; exit status 2 naming the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "sys/process.h"

using namespace isolab;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

const fs::path kData = fs::path(ISOLAB_TEST_DATA_DIR) / "machine";

class MachineCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("isolab-machine-cli-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    runner_ = make_real_runner();
  }
  void TearDown() override { fs::remove_all(dir_); }

  ProcessResult run(std::vector<std::string> argv) {
    ProcessSpec ps;
    ps.argv = std::move(argv);
    ps.timeout = std::chrono::seconds(120);
    return runner_->run(ps);
  }
  nlohmann::json machine_json(const fs::path& input) {
    ProcessResult r = run({ISOLAB_BINARY, "machine", input.string(), "--json"});
    EXPECT_TRUE(r.ok()) << r.describe() << ": " << r.err;
    return r.ok() ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  }
  // A tarball of a case's folder, as the customer would send it.
  fs::path tarball(const std::string& name, const std::string& flags) {
    const fs::path out = dir_ / name;
    ProcessResult r =
        run({"tar", flags, out.string(), "-C", kData.string(), name.substr(0, name.find('.'))});
    EXPECT_TRUE(r.ok()) << r.describe() << ": " << r.err;
    return out;
  }

  fs::path dir_;
  std::unique_ptr<ProcessRunner> runner_;
};

std::vector<unsigned> isolated_only_irqs(const nlohmann::json& j) {
  std::vector<unsigned> out;
  for (const auto& irq : j["irqs_on_isolated"]["value"])
    if (irq["only_isolated"]) out.push_back(irq["irq"]);
  return out;
}

}  // namespace

TEST_F(MachineCli, Cm1MustGatherDirectoryAndItsTarballSayTheSame) {
  const nlohmann::json d = machine_json(kData / "cm1-ocp-mg-e2e-gcp4");
  EXPECT_EQ(d["input"]["kind"], "must-gather");
  EXPECT_EQ(d["kernel_release"]["value"], "4.18.0-348.23.1.el8_5.x86_64");
  EXPECT_EQ(d["cpus"]["value"], "0-3");
  EXPECT_EQ(d["cpus"]["count"], 4);
  EXPECT_EQ(d["online"]["value"], "0-1");
  EXPECT_EQ(d["sockets"]["value"], 1);
  EXPECT_EQ(d["cores_per_socket"]["value"], 2);
  EXPECT_EQ(d["threads_per_core"]["value"], 1);
  EXPECT_EQ(d["numa_nodes"]["value"][0]["cpus"], "0-1");
  EXPECT_EQ(d["isolated"]["value"], "1");
  EXPECT_EQ(d["nohz_full"]["value"], "1");
  EXPECT_EQ(d["rcu_nocbs"]["value"], "1");
  EXPECT_EQ(d["housekeeping"]["value"], "0");
  EXPECT_EQ(d["tuned"]["value"]["variables"]["isolated_cores"], "1");
  EXPECT_EQ(d["sysctls"]["value"]["vm.stat_interval"]["value"], "10");
  EXPECT_EQ(isolated_only_irqs(d), (std::vector<unsigned>{31, 32, 33, 34, 35, 36, 37, 38}));
  EXPECT_EQ(d["not_read"], nlohmann::json::array());

  nlohmann::json t = machine_json(tarball("cm1-ocp-mg-e2e-gcp4.tar.xz", "cJf"));
  t["input"]["path"] = d["input"]["path"];
  EXPECT_EQ(t, d);
}

TEST_F(MachineCli, Cm3SosReportTarball) {
  const nlohmann::json j = machine_json(tarball("cm3-hotsos-ubuntu-openstack-2cpu.tar.gz", "czf"));
  EXPECT_EQ(j["input"]["kind"], "sos report");
  EXPECT_EQ(j["kernel_release"]["value"], "5.4.0-97-generic");
  EXPECT_EQ(j["kernel_release"]["source"][0], "sos_commands/kernel/uname_-a:1 (uname -a)");
  EXPECT_EQ(j["cpus"]["value"], "0-1");
  EXPECT_EQ(j["sockets"]["value"], 2);
  EXPECT_EQ(j["isolated"]["value"], "");
  EXPECT_EQ(j["sysctls"]["value"]["kernel.sched_rt_runtime_us"]["value"], "950000");
}

TEST_F(MachineCli, TextIsOneFactPerLineWithItsSource) {
  ProcessResult r =
      run({ISOLAB_BINARY, "machine", (kData / "cm5-ess-mcu010-atom-isolcpus0/machine").string()});
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\nisolated: 0 (1)  [proc/cmdline:1 (isolcpus=0); "
                               "sys/devices/system/cpu/isolated; "
                               "etc/tuned/realtime-variables.conf:1 (isolated_cores)]\n"));
  EXPECT_THAT(r.out, HasSubstr("\nhousekeeping: 1 (1)  [sys/devices/system/cpu/present; "));
  EXPECT_THAT(r.out, HasSubstr("\nnot read: sysctls: "));

  ProcessResult p =
      run({ISOLAB_BINARY, "machine",
           (kData / "cm4-k8s5glab-pao-r630-48cpu/performance_profile.yaml").string(), "--cmdline",
           (kData / "cm4-k8s5glab-pao-r630-48cpu/node/proc/cmdline").string()});
  ASSERT_TRUE(p.ok()) << p.err;
  EXPECT_THAT(p.out, HasSubstr("\nnote: the profile renders 'nohz_full=2-23,26-47', the node's "
                               "line has none"));
}

TEST_F(MachineCli, TruncatedTarballIsAnErrorNamingIt) {
  const fs::path whole = tarball("cm3-hotsos-ubuntu-openstack-2cpu.tar.gz", "czf");
  const std::string bytes = read_file(whole);
  const fs::path cut = dir_ / "cut.tar.gz";
  write_file_atomic(cut, bytes.substr(0, bytes.size() / 2));
  ProcessResult r = run({ISOLAB_BINARY, "machine", cut.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(cut.string() + ": a truncated or corrupt archive: reading stopped "
                                              "after "));
  EXPECT_EQ(r.out, "");
}

TEST_F(MachineCli, UnreadableYamlIsAnErrorNamingTheLine) {
  const fs::path bad = dir_ / "profile.yaml";
  write_file_atomic(bad,
                    "apiVersion: performance.openshift.io/v2\nkind: PerformanceProfile\n"
                    "metadata:\n  name: p\nspec:\n  cpu: {reserved: 0\n");
  ProcessResult r = run({ISOLAB_BINARY, "machine", bad.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("profile.yaml:"));
  EXPECT_THAT(r.err, HasSubstr("YAML: "));
}
