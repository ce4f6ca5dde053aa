// vm tier (docs/examples/vmstat-numa-stat.md): the NUMA kernel of examples/vmstat-numa-stat.json
// (built or taken from the cache) on a two-node guest, one boot with vm.numa_stat=1 and one with 0.
// The guest must see both nodes, read the sysctl back, and page-fault-bench must show the
// numa_* counters moving with the statistics on and standing still with them off.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "vm/isolab_run.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {
namespace {

using namespace vmtest;

const json* cell(const json& result, const std::string& id) {
  for (const auto& c : result["cells"])
    if (c["id"] == id) return &c;
  return nullptr;
}

double metric(const json& c, const std::string& name) {
  EXPECT_TRUE(c["metrics"].contains(name)) << name << " in " << c["metrics"].dump(1);
  if (!c["metrics"].contains(name)) return -1;
  return c["metrics"][name]["values"][0].get<double>();
}

TEST(PipelineNuma, NumaStatOnCountsOffDoesNot) {
  fs::path dir = temp_dir("numa");
  IsolabRun r = run_isolab(load_spec("numa-short.json"), dir);
  const std::string err = read_file(dir / "isolab.stderr", 20000);
  ASSERT_EQ(r.proc.exit_code, 0) << err;
  ASSERT_FALSE(r.result.is_null()) << err;
  EXPECT_EQ(r.result["status"], "complete") << err;
  // Both variants differ only by a sysctl: one kernel, one build key.
  EXPECT_EQ(r.result["variants"]["numa-stat-on"]["build_key"],
            r.result["variants"]["numa-stat-off"]["build_key"]);
  for (const auto& [id, value] : std::vector<std::pair<std::string, std::string>>{
           {"numa-stat-on-r0", "1"}, {"numa-stat-off-r0", "0"}}) {
    const json* c = cell(r.result, id);
    ASSERT_NE(c, nullptr) << id;
    EXPECT_EQ((*c)["status"], "ok") << id << ": " << (*c)["reason"];
    // The guest saw the two nodes QEMU described (ACPI SRAT), with the CPUs asked.
    EXPECT_EQ((*c)["guest"]["node_online"], "0-1\n") << (*c)["guest"].dump(1);
    EXPECT_THAT((*c)["guest"]["numa_nodes"].get<std::string>(),
                testing::ContainsRegex("node0 0-1 [0-9]+\nnode1 2-3 [0-9]+\n"));
    EXPECT_EQ((*c)["sysctls"]["vm.numa_stat"]["read"], value) << (*c)["sysctls"].dump(1);
    EXPECT_EQ((*c)["sysctls"]["vm.numa_stat"]["write_status"], 0);
    EXPECT_GT(metric(*c, "pagefault.cycles_per_page_fault"), 0);
    EXPECT_EQ((*c)["metrics"]["pagefault.cycles_per_page_fault_per_cpu"]["values"].size(), 4u);
  }
  const json& on = *cell(r.result, "numa-stat-on-r0");
  const json& off = *cell(r.result, "numa-stat-off-r0");
  EXPECT_GT(metric(on, "pagefault.numa_hit"), 0);
  EXPECT_GT(metric(on, "pagefault.numa_local"), 0);
  for (const char* m :
       {"numa_hit", "numa_miss", "numa_foreign", "numa_interleave", "numa_local", "numa_other"})
    EXPECT_EQ(metric(off, std::string("pagefault.") + m), 0) << m;
}

}  // namespace
}  // namespace isolab
