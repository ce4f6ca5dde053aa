// The cell order of a run: blocks of one repetition of every variant, warm-ups first, the
// variants shuffled within each block by a seeded, recorded draw.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "pipeline/run_plan.h"
#include "spec/spec.h"

namespace isolab {
namespace {

Spec spec_of(std::vector<std::string> variants, int repetitions, int warmups) {
  Spec s;
  for (const auto& v : variants) s.variants.push_back(VariantSpec{v, {}, {}, "", {}});
  s.repetitions = repetitions;
  s.warmup_repetitions = warmups;
  return s;
}

std::vector<std::string> ids(const std::vector<CellPlan>& cells) {
  std::vector<std::string> out;
  for (const auto& c : cells) out.push_back(c.id);
  return out;
}

TEST(PlanCells, WithoutASeedTheSpecOrderInEveryBlock) {
  const auto cells = plan_cells(spec_of({"a", "b"}, 2, 1));
  EXPECT_EQ(ids(cells), (std::vector<std::string>{"a-w0", "b-w0", "a-r0", "b-r0", "a-r1", "b-r1"}));
  EXPECT_TRUE(cells[0].warmup);
  EXPECT_FALSE(cells[2].warmup);
}

TEST(PlanCells, SeededOrderIsAPermutationWithinEachBlock) {
  const Spec s = spec_of({"a", "b", "c"}, 20, 2);
  const auto cells = plan_cells(s, 42);
  ASSERT_EQ(cells.size(), 3u * 22);
  // Warm-ups first; each run of 3 cells is one block holding every variant once.
  for (std::size_t i = 0; i < cells.size(); i += 3) {
    std::set<std::string> variants;
    for (std::size_t j = i; j < i + 3; ++j) {
      variants.insert(cells[j].variant);
      EXPECT_EQ(cells[j].repetition, cells[i].repetition);
      EXPECT_EQ(cells[j].warmup, i < 6);
      EXPECT_EQ(cells[j].id, cells[j].variant + (cells[j].warmup ? "-w" : "-r") +
                                 std::to_string(cells[j].repetition));
    }
    EXPECT_EQ(variants, (std::set<std::string>{"a", "b", "c"}));
  }
  // The same cells as the unshuffled plan.
  auto sorted = ids(cells), plain = ids(plan_cells(s));
  std::sort(sorted.begin(), sorted.end());
  std::sort(plain.begin(), plain.end());
  EXPECT_EQ(sorted, plain);
  // Shuffled: over 22 blocks every variant comes first at least once (chance of not:
  // 3 * (2/3)^22 < 0.0005), and the spec's order is not kept throughout.
  std::map<std::string, int> first;
  for (std::size_t i = 0; i < cells.size(); i += 3) ++first[cells[i].variant];
  EXPECT_EQ(first.size(), 3u);
  EXPECT_NE(ids(cells), ids(plan_cells(s)));
}

TEST(PlanCells, SameSeedSameOrder) {
  const Spec s = spec_of({"a", "b"}, 10, 1);
  EXPECT_EQ(ids(plan_cells(s, 7)), ids(plan_cells(s, 7)));
  EXPECT_NE(ids(plan_cells(s, 7)), ids(plan_cells(s, 8)));
  // Pinned: the order of seed 7 (mt19937_64 and our unbiased draws are the same everywhere).
  const auto pinned = ids(plan_cells(spec_of({"a", "b"}, 3, 0), 7));
  EXPECT_EQ(pinned, (std::vector<std::string>{"a-r0", "b-r0", "b-r1", "a-r1", "b-r2", "a-r2"}));
}

TEST(PlanCells, SeedThreeKeepsTheSpecOrderInTwoBlocks) {
  // tests/vm/vm_multihost_test.cc sets boot_order_seed 3 to know which cell boots first.
  EXPECT_EQ(ids(plan_cells(spec_of({"vanilla", "patched"}, 2, 0), 3)),
            (std::vector<std::string>{"vanilla-r0", "patched-r0", "vanilla-r1", "patched-r1"}));
}

TEST(PlanCells, DrawnSeedsFitInJsonIntegers) {
  for (int i = 0; i < 100; ++i) EXPECT_LE(draw_boot_order_seed(), std::uint64_t(kMaxBootOrderSeed));
}

TEST(PlanCells, SpecCarriesTheSeed) {
  nlohmann::json doc = {{"name", "s"},
                        {"variants", {{{"name", "a"}}}},
                        {"guest", {{"cmdline", "isolcpus=1"}}},
                        {"workloads", {{{"name", "l"}, {"tool", "cyclictest"}}}},
                        {"boot_order_seed", 123}};
  EXPECT_EQ(parse_spec(doc, ".").boot_order_seed, 123u);
  doc.erase("boot_order_seed");
  EXPECT_FALSE(parse_spec(doc, ".").boot_order_seed.has_value());
  doc["boot_order_seed"] = -1;
  EXPECT_THROW(parse_spec(doc, "."), SpecError);
}

}  // namespace
}  // namespace isolab
