// Placing whole A/B blocks on libvirt hosts and re-planning them when a host is lost.
#include <gtest/gtest.h>

#include "base/error.h"
#include "pipeline/placement.h"
#include "pipeline/run_plan.h"

namespace isolab {
namespace {

std::vector<CellPlan> cells() {
  // As plan_cells orders them: warm-up first, then A B per repetition.
  return {{"a-w1", "a", 1, true},  {"b-w1", "b", 1, true},  {"a-r1", "a", 1, false},
          {"b-r1", "b", 1, false}, {"a-r2", "a", 2, false}, {"b-r2", "b", 2, false},
          {"a-r3", "a", 3, false}, {"b-r3", "b", 3, false}};
}

TEST(Placement, BlocksHoldEveryVariantOfOneRepetition) {
  const auto blocks = group_blocks(cells());
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[0].key, "w1");
  EXPECT_EQ(blocks[1].key, "r1");
  EXPECT_EQ(blocks[3].key, "r3");
  for (const auto& b : blocks) {
    ASSERT_EQ(b.cells.size(), 2u);
    EXPECT_EQ(b.cells[0].variant, "a");
    EXPECT_EQ(b.cells[1].variant, "b");
    EXPECT_EQ(b.cells[0].repetition, b.cells[1].repetition);
  }
}

TEST(Placement, RoundRobinOverUsableHosts) {
  EXPECT_EQ(place_blocks(5, {true, true}), (std::vector<std::size_t>{0, 1, 0, 1, 0}));
  EXPECT_EQ(place_blocks(4, {true, false, true}), (std::vector<std::size_t>{0, 2, 0, 2}));
  EXPECT_EQ(place_blocks(2, {false}), (std::vector<std::size_t>{kNoHost, kNoHost}));
  EXPECT_TRUE(place_blocks(0, {true}).empty());
}

TEST(Placement, LostHostsUnfinishedBlocksMoveToTheLeastLoaded) {
  // Blocks 0..5 on hosts 0,1,2 round robin; block 0 and 1 done; host 1 lost.
  const std::vector<std::size_t> where = {0, 1, 2, 0, 1, 2};
  const std::vector<bool> done = {true, true, false, false, false, false};
  const auto out = replan_blocks(where, done, {true, false, true});
  // Block 1 is done and stays; block 4 moves: host 0 has 1 unfinished block (3), host 2 has 2.
  EXPECT_EQ(out, (std::vector<std::size_t>{0, 1, 2, 0, 0, 2}));
}

TEST(Placement, NoHostLeftGivesNoHost) {
  const auto out = replan_blocks({0, 1}, {true, false}, {false, false});
  EXPECT_EQ(out, (std::vector<std::size_t>{0, kNoHost}));
  EXPECT_THROW(replan_blocks({0, 1}, {true}, {true}), Error);
}

}  // namespace
}  // namespace isolab
