// Where a run's time went: a boot's phases from the guest's timeline and step windows (untrusted
// text), the run's summary over its cells, and the table `isolab run` prints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "guest/channel.h"
#include "pipeline/timings.h"

namespace isolab {
namespace {

using nlohmann::json;
using ::testing::DoubleNear;
using ::testing::HasSubstr;

ChannelContents records(std::vector<std::pair<std::string, std::string>> recs) {
  ChannelContents ch;
  for (auto& [name, data] : recs) ch.records.push_back({name, 0, data, false});
  ch.done = true;
  return ch;
}

// The shape of a default boot: /init at 12.5 s of uptime, two steps of 5 s, finish at 40 s,
// QEMU ran 44 s.
BootPhaseInput default_boot(const ChannelContents& ch) {
  return {0.4, 44.0, 1.5, &ch, {"vmstat-idle", "latency"}};
}

TEST(BootPhases, GuestTimelineAndWindowsSplitTheBoot) {
  const ChannelContents ch = records({{"timeline", "init 12.50\nfinish 40.00\n"},
                                      {"vmstat-idle.window", "20.00 25.00\n"},
                                      {"latency.window", "27.00 32.00\n"}});
  const json p = boot_phases(default_boot(ch));
  EXPECT_DOUBLE_EQ(p["image"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(p["qemu"].get<double>(), 44.0);
  EXPECT_DOUBLE_EQ(p["host_collect"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(p["kernel_boot"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(p["setup"].get<double>(), 7.5);  // /init to the first window
  EXPECT_DOUBLE_EQ(p["steps"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(p["collection"].get<double>(), 10.0);  // 27.5 of guest time - 7.5 - 10
  EXPECT_DOUBLE_EQ(p["firmware_poweroff"].get<double>(), 4.0);
  EXPECT_FALSE(p.contains("note"));
}

TEST(BootPhases, NoTimelineKeepsTheHostPhasesAndSaysWhy) {
  const ChannelContents ch = records({{"latency.window", "27.00 32.00\n"}});
  const json p = boot_phases(default_boot(ch));
  EXPECT_TRUE(p.contains("qemu"));
  EXPECT_FALSE(p.contains("kernel_boot"));
  EXPECT_FALSE(p.contains("steps"));
  EXPECT_THAT(p["note"].get<std::string>(), HasSubstr("no timeline record"));
}

// A patched kernel can print anything: numbers that run backwards, that are not numbers, or
// that claim more time than QEMU ran are refused, never turned into negative phases.
TEST(BootPhases, HostileGuestTimesAreRefused) {
  for (const auto& [timeline, window, why] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"init 40\nfinish 12\n", "20 25", "two increasing uptimes"},
           {"init -1\nfinish 12\n", "20 25", "two increasing uptimes"},
           {"init 1e3\nfinish 2e3\n", "20 25", "two increasing uptimes"},
           {"init 12\nfinish 400\n", "20 25", "ends after QEMU"},
           {"init 12\nfinish 40\nextra 1\n", "20 25", "two increasing uptimes"},
           {"init 12\nfinish 40\n", "5 25", "not inside the guest's timeline"},
           {"init 12\nfinish 40\n", "25 20", "not inside the guest's timeline"}}) {
    const ChannelContents ch = records({{"timeline", timeline}, {"latency.window", window}});
    const json p = boot_phases(default_boot(ch));
    EXPECT_FALSE(p.contains("steps")) << timeline << " / " << window;
    EXPECT_THAT(p.value("note", ""), HasSubstr(why)) << timeline << " / " << window;
  }
}

TEST(RunTimings, MediansAndSumsOverTheCells) {
  json cells = json::array();
  for (double steps : {10.0, 12.0, 11.0})
    cells.push_back({{"wall_seconds", 44.0},
                     {"phases",
                      {{"image", 0.5},
                       {"qemu", 44.0},
                       {"host_collect", 1.5},
                       {"steps", steps},
                       {"kernel_boot", 12.0}}}});
  cells.push_back({{"wall_seconds", 30.0}});  // an older result without phases
  cells.push_back({{"id", "never booted"}});
  const json stages =
      json::array({timing_stage("host and accelerator probe", 3.0),
                   timing_stage("kernel vanilla", 500.0, {{"source", 34.0}, {"make", 417.5}})});
  const json t = run_timings(stages, results::cell_times({{"cells", cells}}), 700.0);
  EXPECT_EQ(t["boots"]["count"].get<int>(), 4);
  EXPECT_DOUBLE_EQ(t["boots"]["seconds"].get<double>(), 3 * 46.0 + 30.0);
  EXPECT_DOUBLE_EQ(t["boots"]["median"]["steps"].get<double>(), 11.0);
  EXPECT_DOUBLE_EQ(t["boots"]["sum"]["steps"].get<double>(), 33.0);
  EXPECT_DOUBLE_EQ(t["total_s"].get<double>(), 700.0);

  const std::string table = timings_table(*results::recorded_timings({{"timings", t}}));
  EXPECT_THAT(table, HasSubstr("host and accelerator probe"));
  EXPECT_THAT(table, HasSubstr("kernel vanilla"));
  EXPECT_THAT(table, HasSubstr("source 34.0, make 417.5"));
  EXPECT_THAT(table, HasSubstr("4 boots"));
  EXPECT_THAT(table, HasSubstr("kernel boot 12.0"));
  EXPECT_THAT(table, HasSubstr("steps 11.0"));
  EXPECT_THAT(table, HasSubstr("total"));
}

TEST(RunTimings, NoStagesNoTable) { EXPECT_EQ(timings_table(results::RecordedTimings{}), ""); }

// A timings object of another shape than run_timings writes reads as absent or zero, and the
// table says no more than what it holds (results/run_facts.h recorded_timings).
TEST(RunTimings, AMalformedTimingsObjectReadsLeniently) {
  EXPECT_FALSE(results::recorded_timings(json::array()));
  EXPECT_FALSE(results::recorded_timings({{"timings", "soon"}}));
  const auto t = results::recorded_timings(
      {{"timings",
        {{"stages", {{{"stage", "kernel a"}, {"seconds", "long"}, {"parts", 3}}, 7}},
         {"boots", {{"count", -2}, {"median", {{"steps", "x"}, {"setup", 4.0}}}}},
         {"total_s", 9.0}}}});
  ASSERT_TRUE(t);
  ASSERT_EQ(t->stages.size(), 2u);
  EXPECT_EQ(t->stages[0].stage, "kernel a");
  EXPECT_EQ(t->stages[0].seconds, 0.0);
  EXPECT_TRUE(t->stages[0].parts.empty());
  EXPECT_EQ(t->stages[1].stage, "");
  EXPECT_EQ(t->boot_count, 0u);
  EXPECT_EQ(t->boot_median.size(), 1u);
  const std::string table = timings_table(*t);
  EXPECT_THAT(table, HasSubstr("kernel a"));
  EXPECT_THAT(table, ::testing::Not(HasSubstr("boot")));
  EXPECT_THAT(table, HasSubstr("9.0"));
}

}  // namespace
}  // namespace isolab
