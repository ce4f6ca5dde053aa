// What `isolab machine` refuses, each with a clear error naming the file (and line): several
// nodes and no --node, YAML that does not read, a TuneD list that is none, a second command
// line; and what it reads without guessing: masks in several 32-bit words.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "machine/machine.h"
#include "machine/must_gather.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class MachineBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("isolab-machine-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& rel, const std::string& text) {
    write_file_atomic(dir_ / rel, text);
    return dir_ / rel;
  }
  std::string error_of(const fs::path& p, const MachineOptions& o = {}) {
    try {
      read_machine(p, o);
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }
  fs::path dir_;
};

DumpTree two_nodes() {
  return DumpTree::in_memory("mg", {{"nodes/worker-a/proc_cmdline", "isolcpus=1\n"},
                                    {"nodes/worker-b/proc_cmdline", "isolcpus=2-3\n"}});
}

TEST_F(MachineBadInput, SeveralNodesNeedNode) {
  const DumpTree t = two_nodes();
  MachineFacts m;
  EXPECT_THAT(
      [&] { read_must_gather(t, "", std::nullopt, m); },
      ::testing::ThrowsMessage<Error>(HasSubstr(
          "mg: the must-gather holds 2 nodes: worker-a, worker-b; choose one with --node")));
  EXPECT_THAT([&] { read_must_gather(t, "", std::string("worker-c"), m); },
              ::testing::ThrowsMessage<Error>(HasSubstr(
                  "no node 'worker-c' in this must-gather; it holds worker-a, worker-b")));
  read_must_gather(t, "", std::string("worker-b"), m);
  EXPECT_EQ(m.node, "worker-b");
  EXPECT_EQ(m.cmdline->value, "isolcpus=2-3");
  EXPECT_EQ(m.cmdline->from.front().text(), "nodes/worker-b/proc_cmdline:1");
}

TEST_F(MachineBadInput, UnreadableYamlObjectInAMustGather) {
  write("mg/nodes/n/proc_cmdline", "isolcpus=1\n");
  write("mg/cluster-scoped-resources/performance.openshift.io/performanceprofiles/p.yaml",
        "apiVersion: performance.openshift.io/v2\nkind: PerformanceProfile\nmetadata:\n"
        "  name: p\nspec:\n  cpu:\n\treserved: 0\n");
  const std::string e = error_of(dir_ / "mg");
  EXPECT_THAT(e, HasSubstr("cluster-scoped-resources/performance.openshift.io/performanceprofiles/"
                           "p.yaml:7:"));
  EXPECT_THAT(e, HasSubstr("YAML: "));
}

TEST_F(MachineBadInput, TunedVariablesThatAreNoCpuList) {
  const fs::path v = write("cpu-partitioning-variables.conf", "# comment\nisolated_cores=2-5,x\n");
  EXPECT_THAT(error_of(v), HasSubstr("cpu-partitioning-variables.conf:2: isolated_cores: 'x' is "
                                     "not a CPU, a range A-B or a 0x mask"));
}

TEST_F(MachineBadInput, CmdlineTwiceOrOfTwoLines) {
  const fs::path two = write("cmdline", "isolcpus=1\nnohz_full=1\n");
  EXPECT_THAT(error_of(two), HasSubstr("cmdline: 2 non-empty lines; /proc/cmdline holds one"));
  const fs::path line = write("proc_cmdline", "isolcpus=1\n");
  MachineOptions o;
  o.cmdline_file = line;
  EXPECT_THAT(error_of(line, o), HasSubstr("a command line, and --cmdline gives another"));
  write("dump/proc/cmdline", "isolcpus=1\n");
  EXPECT_THAT(error_of(dir_ / "dump", o), HasSubstr("a dump brings its own command line"));
  EXPECT_THAT(error_of(dir_ / "none"), HasSubstr("none: no such file or directory"));
}

// TuneD writes masks of more than 32 CPUs as comma-separated 32-bit words, most significant
// first: 00030000,00000003 is CPUs 0,1,48,49 of a 96-CPU machine.
TEST_F(MachineBadInput, MaskInTwoWords) {
  const fs::path line = write(
      "proc_cmdline",
      "isolcpus=managed_irq,2-47,50-95 nohz_full=2-47,50-95 tuned.non_isolcpus=00030000,00000003 "
      "systemd.cpu_affinity=0,1,48,49\n");
  const MachineFacts m = read_machine(line);
  EXPECT_EQ(m.isolated->value.to_list(), "2-47,50-95");
  EXPECT_EQ(m.housekeeping->value.to_list(), "0-1,48-49");
  bool noted = false;
  for (const std::string& n : m.notes)
    noted = noted || n.find("tuned.non_isolcpus=00030000,00000003: housekeeping CPUs 0-1,48-49") !=
                         std::string::npos;
  EXPECT_TRUE(noted);
}

// A line whose mask TuneD could not have written is not used, and the note says why.
TEST_F(MachineBadInput, MaskThatIsNoneIsNotUsed) {
  const fs::path line = write("proc_cmdline", "nohz_full=2-3 tuned.non_isolcpus=0000000g\n");
  const MachineFacts m = read_machine(line);
  EXPECT_EQ(m.housekeeping->value.to_list(), "0-1");
  bool noted = false;
  for (const std::string& n : m.notes)
    noted = noted ||
            n.find("tuned.non_isolcpus=0000000g: cpumask '0000000g': EINVAL") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace isolab
