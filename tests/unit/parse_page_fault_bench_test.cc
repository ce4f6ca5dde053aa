// page-fault-bench output captured here: host-2cpus.json (this 2-CPU host, a NUMA kernel, one
// node) and, from a two-node 6.1 TCG guest of examples/vmstat-numa-stat.json,
// guest-numa-stat-on.json / guest-numa-stat-off.json (vm.numa_stat 1 and 0).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "base/error.h"
#include "base/files.h"
#include "parse/page_fault_bench.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/page-fault-bench/" + name);
}

std::string error_of(const std::string& text) {
  try {
    parse_page_fault_bench(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PageFaultBench, HostOutputParses) {
  PageFaultBenchResult r = parse_page_fault_bench(data("host-2cpus.json"));
  EXPECT_EQ(r.counter, "tsc");
  EXPECT_EQ(r.page_size, 4096);
  EXPECT_EQ(r.pages_per_batch, 64);
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_EQ(r.phases[0].name, "single");
  ASSERT_EQ(r.phases[0].workers.size(), 1u);
  EXPECT_EQ(r.phases[0].workers[0].cpu, 0);
  EXPECT_EQ(r.phases[0].workers[0].pages, r.phases[0].workers[0].batches * 64);
  ASSERT_EQ(r.phases[1].workers.size(), 2u);
  EXPECT_EQ(r.phases[1].workers[1].cpu, 1);
  Metrics m = page_fault_bench_metrics(r);
  ASSERT_EQ(m.at("cycles_per_page_fault").values.size(), 1u);
  EXPECT_EQ(m.at("cycles_per_page_fault").unit, "cycles");
  EXPECT_DOUBLE_EQ(m.at("cycles_per_page_fault").values[0],
                   r.phases[0].workers[0].fault_total / r.phases[0].workers[0].pages);
  EXPECT_EQ(m.at("cycles_per_page_fault_per_cpu").values.size(), 2u);
  // This host's allocations all hit node 0 (one node): numa_hit moved, numa_miss did not.
  EXPECT_GT(m.at("numa_hit").values[0], 0);
  EXPECT_EQ(m.at("numa_miss").values[0], 0);
  EXPECT_EQ(m.at("numa_hit").unit, "count");
  EXPECT_EQ(m.at("numa_hit").aggregate, "sum");
}

TEST(PageFaultBench, GuestNumaStatOnCountsEveryAllocation) {
  PageFaultBenchResult r = parse_page_fault_bench(data("guest-numa-stat-on.json"));
  ASSERT_EQ(r.phases.size(), 2u);
  ASSERT_EQ(r.phases[1].workers.size(), 4u);
  // Two nodes: CPUs 0-1 on node 0, 2-3 on node 1.
  EXPECT_EQ(r.phases[1].workers[0].node, 0);
  EXPECT_EQ(r.phases[1].workers[3].node, 1);
  Metrics m = page_fault_bench_metrics(r);
  double pages = 0;
  for (const auto& ph : r.phases)
    for (const auto& w : ph.workers) pages += w.pages;
  // Every faulted page is one allocation counted as numa_hit (and numa_local: each worker
  // allocates on its own node); the warm-up and the rest of the guest add a few more.
  EXPECT_GE(m.at("numa_hit").values[0], pages);
  EXPECT_GE(m.at("numa_local").values[0], pages);
  EXPECT_EQ(m.at("numa_miss").values[0], 0);
}

TEST(PageFaultBench, GuestNumaStatOffCountsNothing) {
  Metrics m = page_fault_bench_metrics(parse_page_fault_bench(data("guest-numa-stat-off.json")));
  for (const auto& name : numa_vmstat_counters()) EXPECT_EQ(m.at(name).values[0], 0) << name;
  EXPECT_GT(m.at("cycles_per_page_fault").values[0], 0);
}

TEST(PageFaultBench, BadOutputNamesTheProblem) {
  EXPECT_THAT(error_of(""), HasSubstr("no JSON line"));
  EXPECT_THAT(error_of("{\"tool\":\"page-fault-bench\",\"version\":1,\"phases\":["),
              HasSubstr("not valid JSON"));
  EXPECT_THAT(error_of(R"({"tool":"vmstat-overhead","version":1})"), HasSubstr("\"tool\""));
  EXPECT_THAT(error_of(R"({"tool":"page-fault-bench","version":2})"), HasSubstr("\"version\""));
  std::string good = data("host-2cpus.json");
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  EXPECT_THAT(error_of(replaced("\"pages\":", "\"pagez\":")),
              HasSubstr("phases/0/workers/0/pages"));
  EXPECT_THAT(error_of(replaced("\"numa_miss\":0", "\"numa_miss\":-1")),
              HasSubstr("phases/0/vmstat_before/numa_miss"));
  EXPECT_THAT(error_of(replaced("\"numa_foreign\":0,", "")), HasSubstr("numa_foreign"));
  EXPECT_THAT(error_of(replaced("\"name\":\"single\"", "\"name\":\"double\"")),
              HasSubstr("phases/0/name"));
  EXPECT_THAT(error_of(replaced("\"counter\":\"tsc\"", "\"counter\":7")), HasSubstr("counter"));
}

TEST(PageFaultBench, CountersThatGoDownAreRejected) {
  std::string s = R"({"tool":"page-fault-bench","version":1,"counter":"ns","page_size":4096,
    "pages_per_batch":1,"duration_s":1,"warmup_batches":0,"phases":[{"name":"single",
    "elapsed_ns":5,"vmstat_before":{"numa_hit":9,"numa_miss":0,"numa_foreign":0,
    "numa_interleave":0,"numa_local":9,"numa_other":0},"vmstat_after":{"numa_hit":2,
    "numa_miss":0,"numa_foreign":0,"numa_interleave":0,"numa_local":2,"numa_other":0},
    "workers":[{"cpu":0,"node":0,"batches":1,"pages":1,"fault_total":5,"free_total":1,
    "min_batch_fault":5,"max_batch_fault":5}]}]})";
  s.erase(std::remove(s.begin(), s.end(), '\n'), s.end());
  EXPECT_THAT(error_of(s), HasSubstr("numa_hit went down"));
}

TEST(PageFaultBench, KernelWithoutNumaHasNoCounterMetrics) {
  std::string s = R"({"tool":"page-fault-bench","version":1,"counter":"ns","page_size":4096,)"
                  R"("pages_per_batch":1,"duration_s":1,"warmup_batches":0,"phases":[)"
                  R"({"name":"single","elapsed_ns":5,"vmstat_before":{},"vmstat_after":{},)"
                  R"("workers":[{"cpu":0,"node":-1,"batches":2,"pages":2,"fault_total":8,)"
                  R"("free_total":2,"min_batch_fault":3,"max_batch_fault":5}]}]})";
  Metrics m = page_fault_bench_metrics(parse_page_fault_bench(s));
  EXPECT_EQ(m.count("numa_hit"), 0u);
  EXPECT_EQ(m.at("cycles_per_page_fault").values[0], 4);
  EXPECT_EQ(m.at("cycles_per_page_fault").unit, "ns");
}

// "marked_batches" (the batches bracketed with instruction-count markers) is optional: the
// captures predate it.
TEST(PageFaultBench, MarkedBatchesAreReadWhenPresent) {
  const std::string good = data("host-2cpus.json");
  EXPECT_FALSE(parse_page_fault_bench(good).phases[0].workers[0].marked_batches);
  auto with = [&](const std::string& value) {
    std::string s = good;
    const std::string key = "\"max_batch_fault\":";
    const std::size_t at = s.find('}', s.find(key));
    return s.insert(at, ",\"marked_batches\":" + value);
  };
  PageFaultBenchResult r = parse_page_fault_bench(with("154"));
  EXPECT_EQ(r.phases[0].workers[0].marked_batches, std::optional<std::uint64_t>(154));
  EXPECT_FALSE(r.phases[1].workers[0].marked_batches);
  EXPECT_EQ(parse_page_fault_bench(with("0")).phases[0].workers[0].marked_batches, 0u);
  for (const char* bad : {"-1", "1.5", "\"7\"", "null", "1000000000000000001"})
    EXPECT_THAT(error_of(with(bad)), HasSubstr("phases/0/workers/0/marked_batches")) << bad;
}

}  // namespace
}  // namespace isolab
