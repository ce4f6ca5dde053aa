// machine/cpu_topology.h and cpu_files.h: the CPU files of a dump parsed (real ones from
// tests/data/machine), the facts computed from them in order of trust, and the dump whose
// per-CPU directories stop at 64.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "machine/cpu_files.h"
#include "machine/cpu_topology.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

std::string text(const std::string& rel) {
  return read_file(std::filesystem::path(ISOLAB_TEST_DATA_DIR) / "machine" / rel);
}

const std::string kCm3 = "cm3-hotsos-ubuntu-openstack-2cpu/";

TEST(MachineCpuFiles, LscpuSummary) {
  const LscpuSummary s = parse_lscpu(text(kCm3 + "sos_commands/processor/lscpu"), "lscpu");
  ASSERT_TRUE(s.cpus && s.sockets && s.cores_per_socket && s.threads_per_core && s.online);
  EXPECT_EQ(s.cpus->value, 2u);
  EXPECT_EQ(s.cpus->from.front().text(), "lscpu:5 (lscpu: CPU(s))");
  EXPECT_EQ(s.sockets->value, 2u);
  EXPECT_EQ(s.cores_per_socket->value, 1u);
  EXPECT_EQ(s.threads_per_core->value, 1u);
  EXPECT_EQ(s.online->value.to_list(), "0-1");
  ASSERT_EQ(s.numa.size(), 1u);
  EXPECT_EQ(s.numa[0].cpus.to_list(), "0-1");
}

TEST(MachineCpuFiles, LscpuTableWithOfflineRows) {
  const std::string t =
      text("cm1-ocp-mg-e2e-gcp4/nodes/ci-ln-t0prq3t-72292-h4x2n-worker-a-wqnqt/lscpu");
  ASSERT_TRUE(is_lscpu_table(t));  // its header has a column named L1d:L1i:L2:L3
  const auto rows = parse_lscpu_table(t, "lscpu");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1].core, 1u);
  EXPECT_EQ(rows[2].online, false);
  EXPECT_EQ(rows[2].socket, std::nullopt);  // '-' for an offline CPU
  EXPECT_FALSE(is_lscpu_table(text(kCm3 + "sos_commands/processor/lscpu")));
  EXPECT_TRUE(is_lscpu_table(text(kCm3 + "sos_commands/processor/lscpu_-ae")));
  try {
    parse_lscpu_table("CPU NODE SOCKET CORE ONLINE\n0 0 0 0 yes\n1 0 0 yes\n", "lscpu");
    FAIL() << "a row with a missing column must be refused";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("lscpu:3: 4 columns where the header has 5"));
  }
}

TEST(MachineCpuFiles, CpuinfoAndNumactl) {
  const auto cpus = parse_cpuinfo(text(kCm3 + "proc/cpuinfo"), "cpuinfo");
  ASSERT_EQ(cpus.size(), 2u);
  EXPECT_EQ(cpus[1].physical_id, 1u);
  EXPECT_EQ(cpus[1].core_id, 0u);
  const auto nodes =
      parse_numactl_hardware(text(kCm3 + "sos_commands/numa/numactl_--hardware"), "n");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].cpus.to_list(), "0-1");
  EXPECT_THROW(parse_cpuinfo("processor\t: x\n", "cpuinfo"), Error);
}

TEST(MachineCpuFiles, UnevenTopologyIsNoTopology) {
  std::string why;
  // Socket 0 with two cores, socket 1 with one.
  EXPECT_FALSE(topology_of(
      {{0, 0, core_key(0, 0, 0)}, {1, 0, core_key(0, 0, 1)}, {2, 1, core_key(1, 0, 0)}}, why));
  EXPECT_THAT(why, HasSubstr("not all have the same number of cores"));
  const auto t = topology_of({{0, 0, core_key(0, 0, 0)},
                              {48, 0, core_key(0, 0, 0)},
                              {1, 1, core_key(1, 0, 0)},
                              {49, 1, core_key(1, 0, 0)}},
                             why);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->threads_per_core, 2u);
}

// A per-CPU directory of sysfs with its topology files.
void add_cpu(std::vector<std::pair<std::string, std::string>>& files, unsigned cpu) {
  const std::string d = "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
  files.emplace_back(d + "physical_package_id", std::to_string(cpu % 2) + "\n");
  files.emplace_back(d + "core_id", std::to_string(cpu % 48 / 2) + "\n");
}

// sos copies /sys/devices/system/cpu/cpuN one by one until its size limit: on a 96-CPU machine
// the dump's directories stop at cpu63. They never give the count, and their topology is not
// used when it misses online CPUs.
TEST(MachineCpuFiles, PerCpuDirectoriesCutAt64) {
  std::vector<std::pair<std::string, std::string>> files;
  for (unsigned c = 0; c < 64; ++c) add_cpu(files, c);
  {
    const DumpTree t = DumpTree::in_memory("sos", files);
    MachineFacts m;
    CpuFiles f;
    read_cpu_files({&t, "", ""}, f);
    cpu_facts(f, m);
    EXPECT_FALSE(m.cpus);
    EXPECT_FALSE(m.sockets);
    std::string why;
    for (const NotRead& n : m.not_read)
      if (n.fact == "cpus") why = n.why;
    EXPECT_THAT(why, HasSubstr("the per-CPU directories (0-63, 64 of them) do not give it"));
  }
  // With lscpu the count is 96; the directories stop short of the online CPUs, so the
  // topology comes from lscpu.
  files.emplace_back("sos_commands/processor/lscpu",
                     "CPU(s):              96\nOn-line CPU(s) list: 0-95\nThread(s) per core:  2\n"
                     "Core(s) per socket:  24\nSocket(s):           2\n");
  const DumpTree t = DumpTree::in_memory("sos", files);
  MachineFacts m;
  CpuFiles f;
  read_cpu_files({&t, "", ""}, f);
  cpu_facts(f, m);
  ASSERT_TRUE(m.cpus && m.sockets && m.threads_per_core);
  EXPECT_EQ(m.cpus->value.to_list(), "0-95");
  EXPECT_EQ(m.sockets->value, 2u);
  EXPECT_EQ(m.threads_per_core->value, 2u);
  EXPECT_EQ(m.sockets->from.front().text(), "sos_commands/processor/lscpu:5 (lscpu: Socket(s))");
  bool noted = false;
  for (const std::string& n : m.notes)
    noted = noted || n.find("stop short of the online CPUs 0-95") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(MachineCpuFiles, DisagreeingSourcesKeepTheFirstAndSayBoth) {
  const DumpTree t =
      DumpTree::in_memory("d", {{"sys/devices/system/cpu/present", "0-3\n"},
                                {"sos_commands/processor/lscpu", "CPU(s):              8\n"}});
  MachineFacts m;
  CpuFiles f;
  read_cpu_files({&t, "", ""}, f);
  cpu_facts(f, m);
  EXPECT_EQ(m.cpus->value.to_list(), "0-3");
  ASSERT_FALSE(m.notes.empty());
  EXPECT_EQ(m.notes.front(),
            "cpus: sys/devices/system/cpu/present says 0-3, sos_commands/processor/lscpu:1 "
            "(lscpu: CPU(s)) says 0-7; the first is kept");
}

}  // namespace
}  // namespace isolab
