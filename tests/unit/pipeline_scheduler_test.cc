// The scheduler (pipeline/scheduler.h): A and B balanced across slots and interleaved in
// time, every cell run once, the first error rethrown, stop() honoured, items bound to their
// slot (the multi-host path's block affinity); and the cell's host-CPU record
// (pipeline/cell.h), also for a remote host's slot (no pinning).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "pipeline/cell.h"
#include "pipeline/scheduler.h"

using namespace isolab;

namespace {

std::vector<CellPlan> cells(int variants, int reps) {
  std::vector<CellPlan> out;
  for (int r = 0; r < reps; ++r)
    for (int v = 0; v < variants; ++v)
      out.push_back({std::string(1, static_cast<char>('A' + v)) + "-r" + std::to_string(r),
                     std::string(1, static_cast<char>('A' + v)), r, false});
  return out;
}

TEST(Scheduler, PreferredSlotAlternatesVariantsAcrossSlots) {
  // 2 variants, 2 slots: A-r0 slot 0, B-r0 slot 1, A-r1 slot 1, B-r1 slot 0, ...
  std::vector<int> got;
  for (std::size_t i = 0; i < 6; ++i) got.push_back(preferred_slot(i, 2, 2));
  EXPECT_EQ(got, (std::vector<int>{0, 1, 1, 0, 0, 1}));
  EXPECT_EQ(preferred_slot(5, 2, 1), 0);
  // A slot with nothing it prefers takes the first pending cell.
  EXPECT_EQ(pick_next({2, 4}, 1, 2, 2), 0);
  EXPECT_EQ(pick_next({0, 1}, 1, 2, 2), 1);
  EXPECT_EQ(pick_next({}, 0, 2, 2), -1);
}

TEST(Scheduler, TwoSlotsRunEveryCellOnceBalancedAndAtOnce) {
  std::vector<Slot> slots(2);
  slots[1].index = 1;
  std::mutex mu;
  std::map<std::string, int> runs;
  std::map<int, std::map<std::string, int>> per_slot;  // slot -> variant -> cells
  std::atomic<int> running{0}, most{0};
  run_on_slots(
      cells(2, 4), 2, slots,
      [&](Slot& s, const CellPlan& c) {
        int now = ++running;
        most = std::max(most.load(), now);
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        --running;
        std::lock_guard<std::mutex> lock(mu);
        ++runs[c.id];
        ++per_slot[s.index][c.variant];
      },
      [] { return false; });
  EXPECT_EQ(runs.size(), 8u);
  for (const auto& [id, n] : runs) EXPECT_EQ(n, 1) << id;
  EXPECT_EQ(most.load(), 2) << "the two slots never ran at once";
  for (int s = 0; s < 2; ++s)
    EXPECT_EQ(per_slot[s], (std::map<std::string, int>{{"A", 2}, {"B", 2}})) << "slot " << s;
}

TEST(Scheduler, FirstErrorIsRethrownAndStopEndsTheQueue) {
  std::vector<Slot> slots(2);
  slots[1].index = 1;
  std::atomic<int> started{0};
  EXPECT_THROW(run_on_slots(
                   cells(2, 5), 2, slots,
                   [&](Slot&, const CellPlan& c) {
                     ++started;
                     if (c.id == "A-r0") throw Error("boom");
                     std::this_thread::sleep_for(std::chrono::milliseconds(20));
                   },
                   [] { return false; }),
               Error);
  EXPECT_LT(started.load(), 10);
  std::vector<Slot> one(1);
  int n = 0;
  run_on_slots(
      cells(2, 5), 2, one, [&](Slot&, const CellPlan&) { ++n; }, [&] { return n >= 3; });
  EXPECT_EQ(n, 3);
}

TEST(CellRecord, HostCpusComparesReadBackWithPlan) {
  Slot s;
  s.index = 1;
  s.cpus.vcpu_cpus = {CpuSet::of(2, {1})};
  s.cpus.emulator_cpus = CpuSet::of(2, {0});
  VmOutcome o;
  o.affinity = {{"vcpu", 0, 101, "1", "1"}, {"emulator", -1, 100, "0", "0"}};
  nlohmann::json j = host_cpus_json(s, o);
  EXPECT_EQ(j["vcpus"], nlohmann::json::array({"1"}));
  EXPECT_EQ(j["emulator"], "0");
  EXPECT_TRUE(j["pinned_as_planned"]);
  o.affinity[0].applied = "0-1";
  EXPECT_FALSE(host_cpus_json(s, o)["pinned_as_planned"]);
  EXPECT_FALSE(host_cpus_json(s, VmOutcome{})["pinned_as_planned"]) << "nothing read back";
}

TEST(Scheduler, AffinityPickRunsEachItemOnlyOnItsSlotAtOnce) {
  // Blocks 0..4 placed on slots 0 1 0 1 0 (as round robin over two hosts); item 5 has no slot.
  const std::vector<int> where = {0, 1, 0, 1, 0, -1};
  std::vector<Slot> slots(2);
  slots[1].index = 1;
  std::mutex mu;
  std::map<std::size_t, int> ran_on;
  std::atomic<int> running{0}, peak{0};
  auto pick = [&](const std::vector<std::size_t>& pending, const Slot& slot) {
    for (std::size_t k = 0; k < pending.size(); ++k)
      if (where[pending[k]] == slot.index) return static_cast<int>(k);
    return -1;
  };
  run_on_slots(
      where.size(), slots, pick,
      [&](Slot& slot, std::size_t i) {
        const int now = ++running;
        peak = std::max(peak.load(), now);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        --running;
        std::lock_guard<std::mutex> lock(mu);
        ran_on[i] = slot.index;
      },
      [] { return false; });
  EXPECT_EQ(ran_on, (std::map<std::size_t, int>{{0, 0}, {1, 1}, {2, 0}, {3, 1}, {4, 0}}))
      << "item 5 is for no slot and stays undone";
  EXPECT_EQ(peak.load(), 2) << "the two slots ran at the same time";
}

TEST(CellRecord, RemoteSlotSaysPinningNotApplied) {
  Slot s;
  s.index = 1;
  s.host = "qemu+ssh://bench2/system";
  EXPECT_FALSE(s.local());
  const nlohmann::json j = host_cpus_json(s, VmOutcome{});
  EXPECT_EQ(j["host"], "qemu+ssh://bench2/system");
  EXPECT_EQ(j["pinning"], "not applied");
  EXPECT_THAT(j["reason"].get<std::string>(), ::testing::HasSubstr("host CPU plan"));
  EXPECT_FALSE(j.contains("vcpus")) << "no local CPUs claimed";
  EXPECT_FALSE(j.contains("pinned_as_planned"));
}

TEST(CellRecord, GuestTopologyView) {
  // What the guest init sends for a 4-vCPU guest of 2 sockets x 2 cores (6.1 sysfs).
  EXPECT_EQ(guest_topology_view("0 0 0 0\n1 0 1 1\n2 1 0 2\n3 1 1 3\n").dump(),
            R"({"cores":2,"cpus":4,"sockets":2,"threads":1})");
  EXPECT_EQ(guest_topology_view("0 0 0 0-1\n1 0 0 0-1\n").dump(),
            R"({"cores":1,"cpus":2,"sockets":1,"threads":2})");
  EXPECT_TRUE(guest_topology_view("").is_null());
  EXPECT_TRUE(guest_topology_view("0 0 0 zz\n").is_null());
  EXPECT_TRUE(guest_topology_view("garbage\n").is_null());
}

}  // namespace
