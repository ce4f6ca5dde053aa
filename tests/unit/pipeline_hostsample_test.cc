// Reading the host's load from /proc for cells[].host_load.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/files.h"
#include "pipeline/host_sample.h"

namespace isolab {
namespace {

TEST(HostSample, ParsesLoadavg) {
  const auto a = parse_loadavg("7.51 8.51 7.92 6/126 30566\n");
  ASSERT_TRUE(a);
  EXPECT_DOUBLE_EQ((*a)[0], 7.51);
  EXPECT_DOUBLE_EQ((*a)[2], 7.92);
  EXPECT_FALSE(parse_loadavg("garbage"));
  EXPECT_FALSE(parse_loadavg(""));
}

TEST(HostSample, ParsesCpuPressure) {
  EXPECT_DOUBLE_EQ(
      *parse_cpu_pressure_some_avg10("some avg10=97.88 avg60=98.06 avg300=97.40 total=1943326674\n"
                                     "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"),
      97.88);
  EXPECT_FALSE(parse_cpu_pressure_some_avg10("full avg10=1.00\n"));
  EXPECT_FALSE(parse_cpu_pressure_some_avg10(""));
}

TEST(HostSample, ParsesStealOfTheAggregateCpuLine) {
  EXPECT_EQ(*parse_proc_stat_steal("cpu  82526 245099 81397 15449 524 0 394 17 0 0\n"
                                   "cpu0 1 2 3 4 5 6 7 99 0 0\n"),
            17u);
  EXPECT_FALSE(parse_proc_stat_steal("cpu  1 2 3 4 5 6 7\n"));  // before steal was added
  EXPECT_FALSE(parse_proc_stat_steal("intr 1 2\n"));
}

TEST(HostSample, SamplesAProcTreeAndRecordsTheDelta) {
  const auto root = std::filesystem::temp_directory_path() / "isolab-host-sample-test";
  std::filesystem::remove_all(root);
  write_file_atomic(root / "loadavg", "1.00 2.00 3.00 1/2 3\n");
  write_file_atomic(root / "stat", "cpu  1 2 3 4 5 6 7 100 0 0\n");
  const HostLoadSample start = sample_host_load(root);
  write_file_atomic(root / "loadavg", "3.00 2.00 3.00 1/2 3\n");
  write_file_atomic(root / "stat", "cpu  1 2 3 4 5 6 7 350 0 0\n");
  const HostLoadSample end = sample_host_load(root);
  EXPECT_FALSE(start.cpu_pressure_some_avg10);  // no pressure/cpu: PSI off
  const nlohmann::json j = host_load_json(start, end, 100);
  EXPECT_EQ(j["loadavg_start"], nlohmann::json({1.0, 2.0, 3.0}));
  EXPECT_EQ(j["loadavg_end"][0], 3.0);
  EXPECT_TRUE(j["cpu_pressure_some_avg10_start"].is_null());
  EXPECT_DOUBLE_EQ(j["steal_s"].get<double>(), 2.5);
  EXPECT_FALSE(j["started_at"].get<std::string>().empty());
  std::filesystem::remove_all(root);
  EXPECT_FALSE(sample_host_load(root).loadavg);  // nothing readable: nothing recorded
}

}  // namespace
}  // namespace isolab
