// Runs the real guest-tools/madvise-pressure binary (built static by CMake, beside
// vmstat-overhead) on this host and parses what it prints.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/error.h"
#include "parse/latency_trace.h"
#include "sys/process.h"

namespace isolab {
namespace {

ProcessResult run(std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {
      (std::filesystem::path(ISOLAB_VMSTAT_OVERHEAD).parent_path() / "madvise-pressure").string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.timeout = std::chrono::seconds(60);
  return make_real_runner()->run(spec);
}

TEST(MadvisePressureBinary, PageoutLoopReportsCalls) {
  auto p = run({"--mib", "4", "--procs", "2", "--duration-s", "1", "--advice", "both"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  MadvisePressureResult r = parse_madvise_pressure(p.out);
  EXPECT_EQ(r.advice, "both");
  EXPECT_EQ(r.procs, 2);
  EXPECT_EQ(r.mib, 4);
  EXPECT_GT(r.calls, 0);
  EXPECT_EQ(r.failed_calls, 0);
  EXPECT_GE(r.max_call_us, r.mean_call_us);
  EXPECT_GE(r.elapsed_s, 1.0);
  Metrics m = madvise_pressure_metrics(r);
  EXPECT_EQ(m.at("madvise_calls").values.at(0), static_cast<double>(r.calls));
  EXPECT_EQ(m.at("madvise_call_max_us").unit, "us");
}

TEST(MadvisePressureBinary, BadUsageExits2WithMessage) {
  auto p = run({"--advice", "dontneed"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("unknown advice 'dontneed'"), std::string::npos) << p.err;
  p = run({"--mib", "0"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("--mib"), std::string::npos) << p.err;
}

TEST(MadvisePressureParse, RejectsForeignAndBrokenOutput) {
  EXPECT_THROW(parse_madvise_pressure(""), Error);
  EXPECT_THROW(parse_madvise_pressure("{\"tool\":\"vmstat-overhead\",\"version\":1}"), Error);
  EXPECT_THROW(parse_madvise_pressure("{\"tool\":\"madvise-pressure\",\"version\":1,"
                                      "\"advice\":\"cold\",\"procs\":1,\"mib\":1,\"calls\":-3}"),
               Error);
}

}  // namespace
}  // namespace isolab
