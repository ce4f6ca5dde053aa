// vm tier: guest instructions per system call, counted by isolab's QEMU TCG plugin, agree
// between boots of one kernel. Three boots under TCG (forced: the plugin exists only there) of
// the example specs' vanilla kernel (base, isolation and SLUB fragments), 10000 mlock+munlock
// pairs each on nohz_full CPU 5, with RCU's bypass decision pinned (the spec's description and
// docs/instruction-counts.md say why: without it the median pair follows the host's load in
// some boots). The instruction metrics' threshold in compare rests on this spread; the cycles
// of the same pairs are printed beside it for contrast, not asserted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "vm/isolab_run.h"

namespace isolab {
namespace {

using namespace vmtest;
using nlohmann::json;

// The largest relative difference between two boots' values: (max - min) / min.
double spread(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return (*hi - *lo) / *lo;
}

TEST(WorkloadInsnSpread, InstructionsPerSyscallAgreeBetweenBoots) {
  auto dir = temp_dir("insn-spread");
  IsolabRun r = run_isolab(load_spec("insn-spread-short.json"), dir, {}, {"--accel", "tcg"});
  ASSERT_EQ(r.proc.exit_code, 0) << read_file(dir / "isolab.stderr", 20000);
  ASSERT_EQ(r.result["cells"].size(), 3u);
  std::vector<double> insns, kernel, cycles;
  for (const json& c : r.result["cells"]) {
    ASSERT_EQ(c.value("status", ""), "ok") << c.dump(1).substr(0, 4000);
    const json& m = metric(c, "vmstat-syscall.insns_per_syscall");
    ASSERT_TRUE(m.is_object()) << c["insn_counts"].dump(1).substr(0, 4000);
    EXPECT_EQ(m["kind"], "instructions");
    EXPECT_EQ(m["source"], "tcg-plugin");
    insns.push_back(m["values"][0].get<double>());
    kernel.push_back(
        metric(c, "vmstat-syscall.kernel_insns_per_syscall")["values"][0].get<double>());
    cycles.push_back(metric(c, "vmstat-syscall.cycles_per_syscall")["values"][0].get<double>());
    EXPECT_LT(kernel.back(), insns.back());  // the user part: the call stubs and the markers
    EXPECT_GT(kernel.back(), 0.5 * insns.back());
  }
  for (std::size_t i = 0; i < insns.size(); ++i)
    std::printf("boot %zu: %.1f instructions per syscall (%.1f kernel), %.0f cycles\n", i, insns[i],
                kernel[i], cycles[i]);
  std::printf("spread: instructions %.3f%%, cycles %.1f%%\n", 100 * spread(insns),
              100 * spread(cycles));
  EXPECT_LE(spread(insns), 0.005);
  EXPECT_LE(spread(kernel), 0.005);
}

}  // namespace
}  // namespace isolab
