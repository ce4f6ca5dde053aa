// Corpus replay: every file of tests/fuzz/corpus/<target>/ goes through the same body as the
// libFuzzer target (tests/fuzz/fuzz_bodies.h), built with the normal compiler. A body throws
// only on a bug (an undocumented exception type from a parser, a violated contract, a result
// that cannot be written to result.json), so each file must pass without any exception.
// Files named crash-* are reproducers of bugs found by fuzzing, kept as regression inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "fuzz/fuzz_bodies.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;

fs::path corpus_root() { return fs::path(ISOLAB_SOURCE_DIR) / "tests" / "fuzz" / "corpus"; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const fuzz::Target& target(const std::string& name) {
  for (const auto& t : fuzz::targets())
    if (t.name == name) return t;
  throw std::logic_error("no fuzz target " + name);
}

class FuzzCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzCorpus, EveryFileReplaysWithoutUndocumentedException) {
  const fuzz::Target& t = target(GetParam());
  fs::path dir = corpus_root() / t.name;
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  // Every corpus holds at least the shared edge cases (empty, junk, nan, huge numbers, ...).
  ASSERT_GE(files.size(), 6u) << dir;
  for (const auto& f : files) {
    std::string data = slurp(f);
    ASSERT_LE(data.size(), t.max_len) << f << " is longer than the target's -max_len";
    try {
      t.body(data);
    } catch (const std::exception& e) {
      ADD_FAILURE() << f << ": " << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpus,
                         ::testing::Values("tokenize", "cpulist", "analyze", "gate",
                                           "cyclictest_json", "cyclictest_text", "oslat",
                                           "stressng_yaml", "stressng_text", "yaml_subset",
                                           "vmstat_overhead", "console", "trace", "channel",
                                           "json_document"),
                         [](const auto& info) { return info.param; });

// The list above, the registry in fuzz_bodies.h, the fuzz_<name>.cc executables and the corpus
// directories name the same targets.
TEST(FuzzCorpusLayout, RegistryExecutablesAndCorporaMatch) {
  std::set<std::string> registry, corpora, sources;
  for (const auto& t : fuzz::targets()) registry.insert(t.name);
  for (const auto& e : fs::directory_iterator(corpus_root()))
    if (e.is_directory()) corpora.insert(e.path().filename().string());
  for (const auto& e : fs::directory_iterator(corpus_root().parent_path())) {
    std::string n = e.path().filename().string();
    if (n.rfind("fuzz_", 0) == 0 && e.path().extension() == ".cc")
      sources.insert(n.substr(5, n.size() - 5 - 3));
  }
  EXPECT_EQ(registry.size(), 15u);
  EXPECT_EQ(registry, corpora);
  EXPECT_EQ(registry, sources);
}

// The replay really reaches the parsers: a known-good capture gives the documented values.
TEST(FuzzCorpusLayout, SeedCapturesAreTheRealOnes) {
  CyclictestResult r =
      parse_cyclictest_json(slurp(corpus_root() / "cyclictest_json" / "guest-6.1-tcg.json"));
  EXPECT_EQ(r.format, "json");
  EXPECT_FALSE(r.threads.empty());
  ChannelContents ch = parse_channel(slurp(corpus_root() / "channel" / "good"), fuzz::kFuzzNonce);
  EXPECT_TRUE(ch.done);
  ASSERT_NE(ch.find("uname_r"), nullptr);
  EXPECT_EQ(ch.find("uname_r")->data, "6.1.0\n");
  ChannelContents forged =
      parse_channel(slurp(corpus_root() / "channel" / "forged"), fuzz::kFuzzNonce);
  EXPECT_FALSE(forged.done);  // the DONE markers inside a record and with another nonce
  EXPECT_EQ(forged.find("forged"), nullptr);
}

}  // namespace
}  // namespace isolab
