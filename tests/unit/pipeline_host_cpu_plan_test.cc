// The host CPU planner (pipeline/host_cpu_plan.h) on table-driven host topologies, and the sysfs
// reader on a sysfs-shaped tree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "base/files.h"
#include "pipeline/host_cpu_plan.h"

namespace fs = std::filesystem;
using namespace isolab;
using ::testing::HasSubstr;

namespace {

GuestCpuNeeds guest(int vcpus, std::string isolated, bool overcommit = false, int parallel = 0) {
  GuestCpuNeeds n;
  n.vcpus = vcpus;
  n.isolated_vcpus = parse_cpulist(isolated, static_cast<unsigned>(vcpus));
  n.overcommit = overcommit;
  n.parallel = parallel;
  return n;
}

// "vcpu0,vcpu1,...|emulator" per slot, e.g. "1|0".
std::vector<std::string> slots_text(const HostPlan& p) {
  std::vector<std::string> out;
  for (const SlotPlan& s : p.slots) {
    std::string t;
    for (std::size_t v = 0; v < s.vcpu_cpus.size(); ++v)
      t += (v ? "," : "") + s.vcpu_cpus[v].to_list();
    out.push_back(t + "|" + s.emulator_cpus.to_list());
  }
  return out;
}

// 32 cores x 2 threads, siblings (i, i+32), one node.
std::vector<std::string> smt_pairs(int cores) {
  std::vector<std::string> v;
  for (int i = 0; i < cores; ++i) v.push_back(std::to_string(i) + "," + std::to_string(i + cores));
  return v;
}

struct Row {
  const char* name;
  HostTopology host;
  GuestCpuNeeds needs;
  std::vector<std::string> slots;  // slots_text of the plan; empty: refused
  bool overcommitted;
  int fits_dedicated;
};

TEST(HostPlan, TableOfTopologies) {
  const HostTopology two = make_host_topology("0-1", {}, {});
  const HostTopology big = make_host_topology("0-63", {}, {}, "8-63", "8-63");
  const HostTopology numa = make_host_topology("0-7", {}, {"0-3", "4-7"});
  const std::vector<Row> rows = {
      // This machine: 2 CPUs, no isolation. A 1-vCPU guest gets CPU 1, the emulator CPU 0.
      {"two-cpus-1vcpu-auto", two, guest(1, ""), {"1|0"}, false, 2},
      // Two at once: each vCPU its own CPU, the emulators share both (none left free).
      {"two-cpus-1vcpu-parallel2", two, guest(1, "", false, 2), {"1|0-1", "0|0-1"}, false, 2},
      // The default spec (8 vCPUs, 5-7 isolated) does not fit: refused without overcommit ...
      {"two-cpus-default-refused", two, guest(8, "5-7"), {}, false, 0},
      // ... and shares both CPUs with it.
      {"two-cpus-default-overcommit",
       two,
       guest(8, "5-7", true),
       {"0-1,0-1,0-1,0-1,0-1,0-1,0-1,0-1|0-1"},
       true,
       0},
      // 64 CPUs without SMT, isolcpus=8-63 nohz_full=8-63: 7 guests of 8 dedicated isolated
      // CPUs each (isolated vCPUs 5-7 first), every emulator on housekeeping 0-7.
      {"64cpus-isolated-8-63-default",
       big,
       guest(8, "5-7"),
       {"11,12,13,14,15,8,9,10|0-7", "19,20,21,22,23,16,17,18|0-7", "27,28,29,30,31,24,25,26|0-7",
        "35,36,37,38,39,32,33,34|0-7", "43,44,45,46,47,40,41,42|0-7", "51,52,53,54,55,48,49,50|0-7",
        "59,60,61,62,63,56,57,58|0-7"},
       false,
       7},
      // Two NUMA nodes, no isolation, 2-vCPU guests: slots stay within a node, one housekeeping
      // CPU (4 or 5) stays free for the emulators and the host.
      {"numa-2x4-2vcpus", numa, guest(2, ""), {"3,2|4-5", "1,0|4-5", "7,6|4-5"}, false, 4},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    HostPlan p = plan_host(r.host, r.needs);
    EXPECT_EQ(p.ok, !r.slots.empty()) << p.error;
    EXPECT_EQ(slots_text(p), r.slots);
    EXPECT_EQ(p.overcommitted, r.overcommitted);
    EXPECT_EQ(p.fits_dedicated, r.fits_dedicated);
  }
}

// The 64-CPU host as 32 cores x 2 threads (siblings i and i+32), isolcpus=8-63: each isolated
// vCPU takes a whole core, and no other vCPU (of any guest) lands on its sibling.
TEST(HostPlan, SmtSiblingsOfIsolatedVcpusStayIdle) {
  const HostTopology host = make_host_topology("0-63", smt_pairs(32), {}, "8-63", "8-63");
  const GuestCpuNeeds needs = guest(8, "5-7");
  HostPlan p = plan_host(host, needs);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.slots.size(), 4u);
  EXPECT_EQ(slots_text(p)[0], "11,12,13,14,15,8,9,10|3-7");
  CpuSet isolated_siblings(64), vcpu_cpus(64);
  for (const SlotPlan& s : p.slots) {
    for (int v = 0; v < 8; ++v) {
      const unsigned c = *s.vcpu_cpus[v].first();
      EXPECT_FALSE(vcpu_cpus.test(c)) << "host CPU " << c << " given twice";
      vcpu_cpus.set(c);
      if (v >= 5) {
        isolated_siblings.set(c < 32 ? c + 32 : c - 32);
        EXPECT_TRUE(host.isolated.test(c)) << "isolated vCPU on housekeeping CPU " << c;
      }
    }
    EXPECT_TRUE(s.emulator_cpus.subset_of(host.housekeeping()));
  }
  EXPECT_FALSE(vcpu_cpus.intersects(isolated_siblings))
      << "vCPUs " << vcpu_cpus.to_list() << ", isolated siblings " << isolated_siblings.to_list();
}

TEST(HostPlan, RefusalNamesTheNumbers) {
  HostPlan p = plan_host(make_host_topology("0-1", {}, {}), guest(8, "5-7"));
  ASSERT_FALSE(p.ok);
  EXPECT_THAT(p.error, HasSubstr("8 vCPUs (3 isolated)"));
  EXPECT_THAT(p.error, HasSubstr("2 online CPUs (0 isolated, 2 housekeeping"));
  EXPECT_THAT(p.error, HasSubstr("0 such guests fit"));
  EXPECT_THAT(p.error, HasSubstr("\"overcommit\": true"));
  // Asking for more guests at once than fit is refused too.
  HostPlan q = plan_host(make_host_topology("0-1", {}, {}), guest(1, "", false, 3));
  ASSERT_FALSE(q.ok);
  EXPECT_THAT(q.error, HasSubstr("2 such guests fit at once, 3 asked"));
}

// The host's isolated CPUs are reserved for vCPUs: a guest whose isolated vCPUs outnumber them
// does not get dedicated CPUs even when housekeeping CPUs are free.
TEST(HostPlan, IsolatedVcpusNeedHostIsolatedCpus) {
  HostPlan p = plan_host(make_host_topology("0-7", {}, {}, "6-7"), guest(4, "1-3"));
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.fits_dedicated, 0);
}

TEST(HostPlan, ReadsSysfsTree) {
  const fs::path root = fs::temp_directory_path() / ("hostplan-sysfs-" + std::to_string(getpid()));
  fs::remove_all(root);
  const fs::path cpu = root / "devices/system/cpu";
  write_file_atomic(cpu / "online", "0-3\n");
  write_file_atomic(cpu / "isolated", "2-3\n");
  write_file_atomic(cpu / "nohz_full", "3\n");
  for (int c = 0; c < 4; ++c)
    write_file_atomic(cpu / ("cpu" + std::to_string(c)) / "topology/thread_siblings_list",
                      c % 2 ? std::to_string(c - 1) + "-" + std::to_string(c) + "\n"
                            : std::to_string(c) + "-" + std::to_string(c + 1) + "\n");
  write_file_atomic(root / "devices/system/node/node0/cpulist", "0-1\n");
  write_file_atomic(root / "devices/system/node/node1/cpulist", "2-3\n");
  HostTopology t = read_host_topology(root);
  EXPECT_EQ(to_json(t).dump(),
            R"({"cores":["0-1","2-3"],"housekeeping":"0-1","isolated":"2-3","nodes":["0-1","2-3"],)"
            R"("nohz_full":"3","online":"0-3"})");
  write_file_atomic(cpu / "isolated", "2-x\n");
  try {
    read_host_topology(root);
    ADD_FAILURE() << "a bad isolated list was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("devices/system/cpu/isolated"));
  }
  fs::remove_all(root);
}

// This host's own sysfs parses (whatever it holds) and has an online CPU.
TEST(HostPlan, ReadsThisHost) {
  HostTopology t = read_host_topology();
  EXPECT_GE(t.online.count(), 1u);
  EXPECT_FALSE(t.cores.empty());
}

}  // namespace
