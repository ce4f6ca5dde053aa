// vm tier (docs/examples/vmstat-shepherd-locks.md): zone and pcp lock contention in a real 6.1
// guest (the vm tier's vanilla kernel from the cache), from lock:contention_begin/end with a stack
// trace per contention:
// every isolated CPU gets the metrics, and the zone-lock count moves under an allocation-heavy
// load and stays at or near 0 without one.
#include <gtest/gtest.h>

#include "vm/isolab_run.h"

namespace isolab {
namespace {

using namespace vmtest;
using nlohmann::json;

// The per-CPU count metric of a step: present, one slot per isolated CPU (2, 3), every slot a
// number. Returns the summed counts.
long long isolated_counts(const json& cell, const std::string& name) {
  const json& m = metric(cell, name);
  EXPECT_TRUE(m.is_object()) << name << " missing";
  if (!m.is_object()) return -1;
  EXPECT_EQ(m["cpus"], json::array({2, 3})) << name << ": " << m.dump();
  EXPECT_EQ(m["kind"], "count") << name;
  for (const auto& v : m["values"]) EXPECT_TRUE(v.is_number()) << name << ": " << m.dump();
  long long n = 0;
  for (const auto& c : m["counts"]) n += c.get<long long>();
  return n;
}

// Zone + pcp contentions of every CPU of the guest in a step (details, counts not rates).
long long all_cpus_count(const json& cell, const std::string& wl, const char* lock) {
  const json& lc = cell["noise"][wl]["lock_contention"];
  EXPECT_EQ(lc.value("status", ""), "ok") << lc.dump();
  return lc["all_cpus"][lock]["count"].get<long long>();
}

TEST(WorkloadLockContention, ZoneLockMovesUnderAllocationLoadOnly) {
  auto dir = temp_dir("lock-contention");
  IsolabRun r = run_isolab(load_spec("lock-contention-short.json"), dir);
  ASSERT_EQ(r.proc.exit_code, 0) << read_file(dir / "isolab.stderr", 20000);
  ASSERT_EQ(r.result["cells"].size(), 1u);
  const json& c = r.result["cells"][0];
  ASSERT_EQ(c.value("status", ""), "ok") << c.dump(1).substr(0, 4000);

  std::map<std::string, long long> zone, pcp, zone_all, pcp_all;
  for (const std::string wl : {"quiet", "alloc"}) {
    zone[wl] = isolated_counts(c, wl + ".noise.zone_lock_contentions_per_s");
    pcp[wl] = isolated_counts(c, wl + ".noise.pcp_lock_contentions_per_s");
    for (const char* m : {".noise.zone_lock_contentions_all_cpus_per_s",
                          ".noise.pcp_lock_contentions_all_cpus_per_s", ".noise.zone_lock_wait_us",
                          ".noise.zone_lock_wait_all_cpus_us"})
      EXPECT_TRUE(metric(c, wl + m).is_object()) << wl + m;
    zone_all[wl] = all_cpus_count(c, wl, "zone");
    pcp_all[wl] = all_cpus_count(c, wl, "pcp");
  }
  // page-fault-bench with 4096-page batches on every CPU: pcp refills and flushes take the
  // zone lock, on the isolated CPUs too.
  EXPECT_GT(zone["alloc"], 0);
  EXPECT_GT(metric(c, "alloc.noise.zone_lock_wait_us")["values"][0].get<double>() +
                metric(c, "alloc.noise.zone_lock_wait_us")["values"][1].get<double>(),
            0.0);
  // Without an allocating load: nothing on the isolated CPUs (idle), and over all CPUs only the
  // few of stress-ng's start-up (its workers' first page faults: 0 to 6 here), far fewer than
  // under the load (171 to 274 here).
  EXPECT_EQ(zone["quiet"] + pcp["quiet"], 0);
  EXPECT_LT(4 * (zone_all["quiet"] + pcp_all["quiet"]), zone_all["alloc"]);
}

}  // namespace
}  // namespace isolab
