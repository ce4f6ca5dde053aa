// Cell classification rules that need no boot: when an RCU stall is the host's doing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/files.h"
#include "parse/console.h"
#include "pipeline/cell.h"

using nlohmann::json;

namespace isolab {
namespace {

ConsoleReport real_starved_stall() {
  return classify_console(read_file(std::string(ISOLAB_TEST_DATA_DIR) +
                                    "/console/rcu-stall-gp-kthread-starved-tcg-6.1.log"));
}

// The real capture (tests/data/console/rcu-stall-gp-kthread-starved-tcg-6.1.log): under TCG or
// on an overcommitted slot the host starved the guest; on dedicated KVM CPUs, and for a stall
// without the starved kthread line, it stays the kernel's.
TEST(CellHostStarvation, StarvedGpKthreadIsTheHostsOnlyUnderTcgOrOvercommit) {
  const ConsoleReport starved = real_starved_stall();
  EXPECT_TRUE(host_starved_guest({{"accelerator", "tcg"}, {"overcommitted", false}}, starved));
  EXPECT_TRUE(host_starved_guest({{"accelerator", "kvm"}, {"overcommitted", true}}, starved));
  EXPECT_FALSE(host_starved_guest({{"accelerator", "kvm"}, {"overcommitted", false}}, starved));
  EXPECT_FALSE(host_starved_guest({{"accelerator", "kvm"}, {"overcommitted", nullptr}}, starved));

  const ConsoleReport plain = classify_console(
      read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/console/constructed-stalls-lockups-6.1.txt"));
  ASSERT_TRUE(plain.fatal.has_value());
  EXPECT_EQ(plain.fatal->klass, "rcu_stall");
  EXPECT_FALSE(host_starved_guest({{"accelerator", "tcg"}, {"overcommitted", true}}, plain));
  EXPECT_FALSE(host_starved_guest({{"accelerator", "tcg"}}, ConsoleReport{}));
}

// The real capture tests/data/console/int3-stale-text-poke-tcg-6.1.log: under TCG the int3
// where memory holds e8 is the emulator's; on KVM it stays the kernel's.
TEST(CellStaleInt3, AnInt3MemoryDoesNotHoldIsTheEmulatorsUnderTcg) {
  const std::string console =
      read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/console/int3-stale-text-poke-tcg-6.1.log");
  EXPECT_EQ(emulator_stale_int3({{"accelerator", "tcg"}}, console), "e8");
  EXPECT_EQ(emulator_stale_int3({{"accelerator", "kvm"}}, console), std::nullopt);
  EXPECT_EQ(
      emulator_stale_int3({{"accelerator", "tcg"}}, "int3: 0000 [#1] SMP\nCode: 90 cc <0f> 1f\n"),
      std::nullopt);
}

}  // namespace
}  // namespace isolab
