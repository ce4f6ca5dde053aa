// Runs the real guest-tools/page-fault-bench binary (built static by CMake) on this host and
// parses what it prints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/personality.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "parse/page_fault_bench.h"
#include "sys/process.h"

namespace isolab {
namespace {

ProcessResult run(std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {ISOLAB_PAGE_FAULT_BENCH};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.timeout = std::chrono::milliseconds(60000);
  return make_real_runner()->run(spec);
}

TEST(PageFaultBenchBinary, OneWorkerThenOnePerCpu) {
  auto p = run({"--cpus", "0", "--duration-s", "1", "--pages", "32", "--warmup", "2"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  PageFaultBenchResult r = parse_page_fault_bench(p.out);
  ASSERT_EQ(r.phases.size(), 2u);
  for (const auto& ph : r.phases) {
    ASSERT_EQ(ph.workers.size(), 1u);
    EXPECT_EQ(ph.workers[0].cpu, 0);
    EXPECT_GE(ph.workers[0].batches, 1);
    EXPECT_EQ(ph.workers[0].pages, ph.workers[0].batches * 32);
    // Every timed batch is marked (the warm-up is not).
    EXPECT_EQ(ph.workers[0].marked_batches, static_cast<std::uint64_t>(ph.workers[0].batches));
    // A page fault that allocates and zeroes a page costs more than 100 TSC ticks anywhere.
    EXPECT_GT(ph.workers[0].per_page_fault(), 100);
    EXPECT_GE(ph.elapsed_ns, 1e9);
  }
  Metrics m = page_fault_bench_metrics(r);
  EXPECT_EQ(m.at("cycles_per_page_fault").unit, "cycles");
}

// Whether this process may set ADDR_NO_RANDOMIZE (a seccomp filter may refuse it): the bench's
// own answer to follow, not this host's.
bool may_turn_randomization_off() {
  const int current = personality(0xffffffff);
  if (current == -1) return false;
  const bool ok = personality(static_cast<unsigned long>(current) | ADDR_NO_RANDOMIZE) != -1;
  personality(static_cast<unsigned long>(current));
  return ok;
}

// The address of every worker's region, in the order printed.
std::vector<std::string> region_addresses(const nlohmann::json& j) {
  std::vector<std::string> out;
  for (const auto& ph : j.at("phases"))
    for (const auto& w : ph.at("workers")) out.push_back(w.at("region_address"));
  return out;
}

// --fixed-layout runs without address-space randomization (the VMA tree's shape follows the
// layout): every such run maps its regions at the same addresses. The default keeps the
// randomization that the bench inherits.
TEST(PageFaultBenchBinary, FixedLayoutMapsTheRegionsAtTheSameAddressesInEveryRun) {
  const std::vector<std::string> args = {"--cpus",   "0", "--duration-s",  "1", "--pages", "4",
                                         "--warmup", "0", "--fixed-layout"};
  auto first = run(args);
  auto second = run(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const auto a = nlohmann::json::parse(first.out), b = nlohmann::json::parse(second.out);
  const bool fixed = may_turn_randomization_off();
  EXPECT_EQ(a.at("address_randomization"), !fixed);
  if (fixed) {
    EXPECT_EQ(region_addresses(a), region_addresses(b));
    EXPECT_EQ(region_addresses(a).size(), 2u);
  }
  std::vector<std::string> plain(args.begin(), args.end() - 1);
  auto as_started = run(plain);
  ASSERT_EQ(as_started.exit_code, 0) << as_started.err;
  // The flag is inherited: a bench started from a process that has it runs without.
  const int persona = personality(0xffffffff);
  EXPECT_EQ(nlohmann::json::parse(as_started.out).at("address_randomization"),
            persona == -1 || !(persona & ADDR_NO_RANDOMIZE));
}

TEST(PageFaultBenchBinary, BadUsageExitsTwoWithAMessage) {
  for (auto args : std::vector<std::vector<std::string>>{{"--cpus", "x"},
                                                         {"--cpus", "3-1"},
                                                         {"--duration-s", "0"},
                                                         {"--pages", "-1"},
                                                         {"--frob", "1"},
                                                         {"--cpus", "4095"}}) {
    auto p = run(args);
    EXPECT_EQ(p.exit_code, 2) << args[0];
    EXPECT_THAT(p.err, testing::HasSubstr("page-fault-bench"));
    EXPECT_EQ(p.out, "");
  }
  auto help = run({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, testing::HasSubstr("--cpus LIST"));
}

}  // namespace
}  // namespace isolab
