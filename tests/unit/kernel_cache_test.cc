// The cache's pure parts: which entries a prune policy removes, and sizes as the user writes
// them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "kernel/cache.h"

namespace isolab {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::uint64_t kGiB = 1ull << 30;

CacheEntry entry(std::string kind, std::string id, std::uint64_t bytes, std::int64_t last_use,
                 std::string source = "") {
  CacheEntry e;
  e.kind = std::move(kind);
  e.id = std::move(id);
  e.bytes = bytes;
  e.last_use = last_use;
  e.source_id = std::move(source);
  return e;
}

std::vector<std::string> names(const std::vector<CacheEntry>& v) {
  std::vector<std::string> out;
  for (const auto& e : v) out.push_back(e.kind + "/" + e.id);
  return out;
}

// Three kernels (30 MiB each; k1 the oldest entry), two build slots of one source (1.5 GiB each),
// the source (2 GiB).
std::vector<CacheEntry> sample() {
  return {
      entry("kernel", "k1", 30 << 20, 50),           entry("kernel", "k2", 30 << 20, 300),
      entry("kernel", "k3", 30 << 20, 200),          entry("slot", "s1", 3 * kGiB / 2, 100, "src"),
      entry("slot", "s2", 3 * kGiB / 2, 300, "src"), entry("source", "src", 2 * kGiB, 300)};
}

TEST(CachePrune, KeepLastKeepsTheNewestOfEachKind) {
  EXPECT_THAT(names(select_prunable(sample(), {1, std::nullopt})),
              ElementsAre("kernel/k1", "slot/s1", "kernel/k3"));
  EXPECT_THAT(names(select_prunable(sample(), {3, std::nullopt})), ElementsAre());
}

TEST(CachePrune, SourceStaysWhileAKeptSlotUsesIt) {
  // keep-last 0 removes every slot, so the source goes too (after its slots).
  EXPECT_THAT(
      names(select_prunable(sample(), {0, std::nullopt})),
      ElementsAre("kernel/k1", "slot/s1", "kernel/k3", "slot/s2", "kernel/k2", "source/src"));
  // A busy (pinned) slot keeps its source.
  EXPECT_THAT(names(select_prunable(sample(), {0, std::nullopt}, {"slot/s2"})),
              ElementsAre("kernel/k1", "slot/s1", "kernel/k3", "kernel/k2"));
}

TEST(CachePrune, MaxSizeRemovesOldestUntilUnder) {
  // Total 5.09 GiB; at most 4 GiB: the oldest entries go until the rest fits: k1 (30 MiB) is
  // not enough, s1 (1.5 GiB) is.
  EXPECT_THAT(names(select_prunable(sample(), {std::nullopt, 4 * kGiB})),
              ElementsAre("kernel/k1", "slot/s1"));
  // When s1 is busy, the next-oldest are taken instead; the source stays (s1 needs it).
  EXPECT_THAT(names(select_prunable(sample(), {std::nullopt, 4 * kGiB}, {"slot/s1"})),
              ElementsAre("kernel/k1", "kernel/k3", "slot/s2"));
}

TEST(CachePrune, MaxSizeZeroEmptiesWhatIsNotPinned) {
  EXPECT_EQ(select_prunable(sample(), {std::nullopt, 0}).size(), 6u);
}

TEST(CachePrune, PolicyNeedsALimit) {
  EXPECT_THAT([] { select_prunable(sample(), {}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("--keep-last N and/or --max-size")));
  EXPECT_THAT(
      [] {
        select_prunable(sample(), {-1, std::nullopt});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("--keep-last must be >= 0, got -1")));
}

TEST(CacheSize, ParsesBinarySuffixes) {
  EXPECT_EQ(parse_size("1048576"), 1048576u);
  EXPECT_EQ(parse_size("20G"), 20 * kGiB);
  EXPECT_EQ(parse_size("20g"), 20 * kGiB);
  EXPECT_EQ(parse_size("500MiB"), 500ull << 20);
  EXPECT_EQ(parse_size("500MB"), 500ull << 20);
  EXPECT_EQ(parse_size("1.5T"), 3ull << 39);
  EXPECT_EQ(parse_size("0"), 0u);
}

TEST(CacheSize, RejectsJunkQuotingIt) {
  for (const char* bad : {"", "G", "-1G", "12X", "1.2.3G", "10 G", "1e3"})
    EXPECT_THAT([&] { parse_size(bad); },
                ::testing::ThrowsMessage<Error>(HasSubstr(std::string("size '") + bad + "'")))
        << bad;
}

TEST(CacheSize, Formats) {
  EXPECT_EQ(format_size(17), "17 B");
  EXPECT_EQ(format_size(512ull << 20), "512.0 MiB");
  EXPECT_EQ(format_size(3435973837ull), "3.2 GiB");
}

}  // namespace
}  // namespace isolab
