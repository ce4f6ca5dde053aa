// The /init fragment that sets the customer's runtime settings (guest/runtime_script.h): what it
// renders, and what it does when run by a shell against a fake /proc and /sys (a missing sysctl
// skips the steps; each write is reported with what it left behind).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "guest/init_script.h"
#include "guest/runtime_script.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

GuestRuntime cm1_runtime() {
  GuestRuntime r;
  r.sysctls = {{"vm.stat_interval", "10"}, {"kernel.sched_rt_runtime_us", "-1"}};
  r.housekeeping = "0";
  r.housekeeping_mask = "1";
  return r;
}

TEST(GuestRuntimeScript, RendersEveryWriteAndTheRecord) {
  const std::string sh = render_runtime_settings(cm1_runtime());
  EXPECT_THAT(sh, HasSubstr("rt_sysctl vm.stat_interval /proc/sys/vm/stat_interval '10'\n"));
  EXPECT_THAT(sh, HasSubstr("rt_sysctl kernel.sched_rt_runtime_us "
                            "/proc/sys/kernel/sched_rt_runtime_us '-1'\n"));
  EXPECT_THAT(sh,
              HasSubstr("rt_write workqueue_cpumask /sys/devices/virtual/workqueue/cpumask 1\n"));
  EXPECT_THAT(sh, HasSubstr("rt_write default_smp_affinity /proc/irq/default_smp_affinity 1\n"));
  EXPECT_THAT(sh, HasSubstr("echo 0 > $d/smp_affinity_list"));
  EXPECT_THAT(sh, HasSubstr("taskset -p -c 0 ${p##*/}"));
  EXPECT_THAT(sh, HasSubstr("rec runtime 0 /tmp/runtime\n"));
  EXPECT_EQ(render_runtime_settings(GuestRuntime{}), "");
}

TEST(GuestRuntimeScript, RefusesWhatAShellWordCannotCarry) {
  GuestRuntime r = cm1_runtime();
  r.sysctls = {{"vm.stat_interval", "10; reboot"}};
  EXPECT_THROW(render_runtime_settings(r), Error);
  r = cm1_runtime();
  r.housekeeping = "0 $(x)";
  EXPECT_THROW(render_runtime_settings(r), Error);
}

TEST(GuestRuntimeScript, InitSetsThemAfterThePrecheckAndBeforeTheVariantsSysctls) {
  GuestPlan p;
  p.nonce = "abcdefgh12";
  p.runtime = cm1_runtime();
  p.sysctls = {{"vm.stat_interval", "1"}};
  const std::string init = render_plan_files(p).front().second;
  const auto precheck = init.find("rec precheck"), runtime = init.find("rec runtime"),
             sysctls = init.find("rec sysctls");
  ASSERT_NE(runtime, std::string::npos);
  EXPECT_LT(precheck, runtime);
  EXPECT_LT(runtime, sysctls);
  EXPECT_LT(sysctls, init.find("if [ $skip = 0 ]"));
}

// Runs the fragment under /bin/sh with /proc, /sys and /tmp/runtime moved under a scratch root
// and taskset faked (pid 2 moves, any other refuses), and returns the record it wrote.
std::string run_fragment(const GuestRuntime& r, const fs::path& root, std::string* skip) {
  std::string sh = render_runtime_settings(r);
  for (const std::string from : {" /proc/", " /sys/", " /tmp/runtime"})
    for (std::size_t at = 0; (at = sh.find(from, at)) != std::string::npos;
         at += root.string().size() + from.size())
      sh.insert(at + 1, root.string());
  write_file_atomic(root / "bin/taskset", "#!/bin/sh\n[ \"$4\" = 2 ] && { echo $3 > " +
                                              (root / "proc/2/allowed").string() +
                                              "; exit 0; }\nexit 1\n");
  fs::permissions(root / "bin/taskset", fs::perms::owner_all);
  const std::string script = "export PATH=" + (root / "bin").string() + ":$PATH\nskip=0\n" +
                             "rec() { :; }\n" + sh + "echo $skip > " + (root / "skip").string() +
                             "\n";
  write_file_atomic(root / "frag.sh", script);
  EXPECT_EQ(std::system(("/bin/sh " + (root / "frag.sh").string() + " > /dev/null 2>&1").c_str()),
            0);
  *skip = read_file(root / "skip");
  return read_file(root / "tmp/runtime");
}

TEST(GuestRuntimeScript, RunByAShellItWritesReadsBackAndSkipsOnAMissingSysctl) {
  const fs::path root = fs::temp_directory_path() / ("isolab-rt-" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const char* d : {"proc/sys/vm", "proc/irq/4", "proc/irq/0", "proc/2", "proc/77",
                        "sys/devices/virtual/workqueue", "bin", "tmp"})
    fs::create_directories(root / d);
  write_file_atomic(root / "proc/sys/vm/stat_interval", "1\n");
  write_file_atomic(root / "proc/irq/4/smp_affinity_list", "0-1\n");
  fs::create_directory(root / "proc/irq/0/smp_affinity_list");  // a write there fails
  write_file_atomic(root / "proc/irq/default_smp_affinity", "3\n");
  write_file_atomic(root / "sys/devices/virtual/workqueue/cpumask", "3\n");
  for (const char* pid : {"2", "77"}) {
    write_file_atomic(root / "proc" / pid / "cmdline", "");
    write_file_atomic(root / "proc" / pid / "comm",
                      std::string(pid) == "2" ? "kthreadd\n" : "ksoftirqd/1\n");
    write_file_atomic(root / "proc" / pid / "status", "Name:\tx\nCpus_allowed_list:\t0-1\n");
  }
  std::string skip;
  const std::string rec = run_fragment(cm1_runtime(), root, &skip);
  EXPECT_THAT(rec, HasSubstr("sysctl\tvm.stat_interval\t0\t10\n"));
  EXPECT_THAT(rec, HasSubstr("sysctl\tkernel.sched_rt_runtime_us\tmissing\t\n"));
  EXPECT_EQ(skip, "1\n");  // no step runs without the customer's setting
  EXPECT_THAT(rec, HasSubstr("workqueue_cpumask\t0\t1\n"));
  EXPECT_THAT(rec, HasSubstr("default_smp_affinity\t0\t1\n"));
  EXPECT_THAT(rec, HasSubstr("irq\t4\t0\t0\n"));
  EXPECT_THAT(rec, testing::ContainsRegex("irq\t0\t[1-9][0-9]*\t"));
  EXPECT_THAT(rec, HasSubstr("kthread\t2\t0\tkthreadd\t0-1\n"));
  EXPECT_THAT(rec, HasSubstr("kthread\t77\t1\tksoftirqd/1\t0-1\n"));
  fs::remove_all(root);
}

}  // namespace
}  // namespace isolab
