// results/cell_facts.h: the open-ended records of a cell, read from the captured planted run and
// from cells of every shape their readers must tolerate.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "base/files.h"
#include "results/cell_facts.h"

namespace isolab {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;

results::CellRecord cell(json fields) {
  fields["id"] = "a-r0";
  return results::cell_from_json(fields, "/cells/0");
}

const results::RunResult& planted() {
  static const results::RunResult run = results::result_from_json(json::parse(read_file(
      std::filesystem::path(ISOLAB_TEST_DATA_DIR) / "runs/planted-regression-kqin12/result.json")));
  return run;
}

TEST(ResultsCellFacts, GateRowsOfTheCapturedRun) {
  const auto rows = results::gate_rows(planted().cells[0]);
  ASSERT_EQ(rows.size(), 11u);
  EXPECT_EQ(rows[0].check, "cmdline");
  EXPECT_EQ(rows[0].pass, true);
  EXPECT_EQ(rows[0].warning, false);
  EXPECT_EQ(rows[0].detail, "");
  EXPECT_EQ(rows[10].check, "clock");
  EXPECT_EQ(rows[10].warning, true);
}

TEST(ResultsCellFacts, GateRowsKeepWhatIsThereAndNothingElse) {
  const auto rows = results::gate_rows(
      cell({{"gate",
             {{"rows", json::array({{{"check", 5}, {"pass", "no"}, {"expected", 3}}, "junk"})}}}}));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].check, 5);
  EXPECT_EQ(rows[0].expected, 3);
  EXPECT_TRUE(rows[0].effective.is_null());
  EXPECT_FALSE(rows[0].pass);  // "no" is no boolean
  EXPECT_TRUE(rows[1].check.is_null());
  EXPECT_TRUE(results::gate_rows(cell({{"gate", {{"rows", 3}}}})).empty());
  EXPECT_TRUE(results::gate_rows(cell({{"gate", "PASS"}})).empty());
  EXPECT_TRUE(results::gate_rows(cell(json::object())).empty());
}

TEST(ResultsCellFacts, LatencyTracesWithANumericMaximumOnly) {
  const auto traces = results::latency_traces(
      cell({{"latency_traces",
             {{"b",
               {{"tracer", "wakeup_rt"},
                {"max_latency_us", 41.5},
                {"task", "cyclictest-250"},
                {"cpu", 6},
                {"switch_frames", json::array({"madvise_pageout+0x1a/0x40", 3, "schedule"})},
                {"file", "cells/a-r0/b.trace"}}},
              {"a", {{"max_latency_us", "41"}}},
              {"c", {{"max_latency_us", 7}, {"cpu", 6.5}}}}}}));
  ASSERT_EQ(traces.size(), 2u);
  EXPECT_EQ(traces[0].workload, "b");
  EXPECT_EQ(traces[0].tracer, "wakeup_rt");
  EXPECT_DOUBLE_EQ(traces[0].max_latency_us, 41.5);
  EXPECT_EQ(traces[0].task, "cyclictest-250");
  EXPECT_EQ(traces[0].cpu, 6);
  EXPECT_THAT(traces[0].switch_frames, ElementsAre("madvise_pageout+0x1a/0x40", "schedule"));
  EXPECT_EQ(traces[0].file, "cells/a-r0/b.trace");
  EXPECT_EQ(traces[1].workload, "c");
  EXPECT_FALSE(traces[1].cpu);
  EXPECT_EQ(traces[1].tracer, "");
}

TEST(ResultsCellFacts, HostAndItsCpus) {
  const auto h = results::cell_host(cell({{"host",
                                           {{"uri", "qemu+ssh://h1/system"},
                                            {"hostname", "h1"},
                                            {"cpu_model", "Skylake"},
                                            {"cpu_vendor", "Intel"},
                                            {"cpus", 16},
                                            {"fingerprint_sha256", "ab12"},
                                            {"libvirt_version", "9.0.0"},
                                            {"hypervisor", "QEMU"},
                                            {"hypervisor_version", 7}}}}));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->uri, "qemu+ssh://h1/system");
  EXPECT_EQ(h->hostname, "h1");
  EXPECT_EQ(h->cpu_vendor, "Intel");
  EXPECT_EQ(h->fingerprint_sha256, "ab12");
  EXPECT_EQ(h->libvirt_version, "9.0.0");
  EXPECT_EQ(h->hypervisor_version, "");  // no string
  EXPECT_EQ(h->cpu_count(), 16);
  EXPECT_EQ(results::cell_host(cell({{"host", {{"uri", "u"}}}}))->cpu_count(), 0);
  EXPECT_THROW(results::cell_host(cell({{"host", {{"cpus", "many"}}}}))->cpu_count(),
               nlohmann::json::type_error);
  EXPECT_FALSE(results::cell_host(cell({{"host", "u"}})));
}

TEST(ResultsCellFacts, ToolVersionsInsnCountsAndEarlierAttempts) {
  const results::CellRecord c =
      cell({{"tool_versions", {{"latency", {{"cyclictest", "2.40"}, {"x", 3}}}, {"y", "z"}}},
            {"insn_counts", {{"source", nullptr}, {"reason", "no guest PMU"}}},
            {"earlier_attempts", json::array({json::object(), json::object()})}});
  const auto v = results::tool_versions(c);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].workload, "latency");
  EXPECT_EQ(v[0].tool, "cyclictest");
  EXPECT_EQ(v[0].version, "2.40");
  EXPECT_EQ(results::insn_counts_missing(c), "no guest PMU");
  EXPECT_EQ(results::insn_counts_missing(cell({{"insn_counts", json::object()}})),
            "no instruction counts recorded");
  EXPECT_FALSE(results::insn_counts_missing(cell({{"insn_counts", {{"source", "pmu"}}}})));
  EXPECT_FALSE(results::insn_counts_missing(cell(json::object())));
  EXPECT_EQ(results::earlier_attempts(c), 2u);
  EXPECT_EQ(results::earlier_attempts(cell({{"earlier_attempts", 2}})), 0u);
}

TEST(ResultsCellFacts, ProfileListsSkipWhatIsNotAList) {
  const auto p = results::insn_profile(
      cell({{"insn_counts",
             {{"profile",
               {{"vmstat-idle",
                 {{"6", json::array({{{"function", "refresh_cpu_vm_stats"}, {"insns", 9000}},
                                     {{"function", 3}, {"insns", 1}},
                                     {{"function", "tick_sched_timer"}, {"insns", 120.5}}})},
                  {"x", json::array()},
                  {"7", "none"}}},
                {"junk", 3}}}}}}));
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ((*p)[0].step, "vmstat-idle");
  EXPECT_EQ((*p)[0].cpu, 6u);
  ASSERT_EQ((*p)[0].entries.size(), 2u);
  EXPECT_EQ((*p)[0].entries[1].function, "tick_sched_timer");
  EXPECT_DOUBLE_EQ((*p)[0].entries[1].insns, 120.5);
  EXPECT_FALSE(results::insn_profile(cell({{"insn_counts", {{"profile", 3}}}})));
}

TEST(ResultsCellFacts, HostLoadMeansTheEnds) {
  const auto l = results::cell_host_load(cell({{"host_load",
                                                {{"loadavg_start", {1.0, 0, 0}},
                                                 {"loadavg_end", {3.0, 0, 0}},
                                                 {"cpu_pressure_some_avg10_start", nullptr},
                                                 {"cpu_pressure_some_avg10_end", 40.0},
                                                 {"steal_s", "x"}}}}));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->cell_id, "a-r0");
  EXPECT_DOUBLE_EQ(*l->loadavg_1min, 2.0);
  EXPECT_DOUBLE_EQ(*l->cpu_pressure_some_avg10, 40.0);
  EXPECT_FALSE(l->steal_s);
  EXPECT_FALSE(results::cell_host_load(cell({{"host_load", nullptr}})));
}

TEST(ResultsCellFacts, NoiseOfTheCapturedRunAndOfOddShapes) {
  const results::CellRecord& c = planted().cells[0];
  EXPECT_THAT(results::noise_workloads(c), ElementsAre("latency", "vmstat-idle", "vmstat-syscall"));
  const auto cpus = results::noise_cpus(c, "latency");
  ASSERT_EQ(cpus.size(), 3u);
  EXPECT_EQ(cpus[0].cpu, 5);
  EXPECT_NEAR(cpus[0].per_s.at("vmstat_update"), 0.26881720430107536, 1e-15);
  const results::CellRecord odd = cell(
      {{"noise",
        {{"w",
          {{"cpus",
            json::array(
                {{{"cpu", 5.5}},
                 "junk",
                 {{"cpu", 7},
                  {"causes", {{"irq", {{"per_s", "x"}}}, {"local_timer", {{"per_s", 3}}}}}}})}}},
         {"v", json::array()}}}});
  const auto odd_cpus = results::noise_cpus(odd, "w");
  ASSERT_EQ(odd_cpus.size(), 1u);
  EXPECT_EQ(odd_cpus[0].cpu, 7);
  EXPECT_EQ(odd_cpus[0].per_s, (std::map<std::string, double>{{"local_timer", 3}}));
  EXPECT_TRUE(results::noise_cpus(odd, "v").empty());
  EXPECT_TRUE(results::noise_cpus(odd, "none").empty());
}

TEST(ResultsCellFacts, NotesAsTheReportShowsThem) {
  const results::CellNotes n = results::cell_notes(planted().cells[0]);
  EXPECT_EQ(n.guest_uname_r, "6.1.192-isolab-6615e1979a99\n");  // as the guest printed it
  EXPECT_EQ(n.gate_reason, "PASS");
  EXPECT_DOUBLE_EQ(n.wall_seconds, 29.676316728);
  const results::CellNotes odd =
      results::cell_notes(cell({{"guest", {{"uname_r", 42}, {"cmdline", "a b\n"}}},
                                {"gate_reason", {"x"}},
                                {"wall_seconds", "slow"}}));
  EXPECT_EQ(odd.guest_uname_r, "42");
  EXPECT_EQ(odd.guest_cmdline, "a b\n");
  EXPECT_EQ(odd.gate_reason, "");
  EXPECT_DOUBLE_EQ(odd.wall_seconds, 0);
}

}  // namespace
}  // namespace isolab
