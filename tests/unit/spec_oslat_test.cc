// A spec's oslat workload (workload/tools/oslat.cc read_fields): its defaults, and every bad
// field refused with its JSON pointer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "spec/spec.h"

namespace isolab {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json spec_with(const json& workload) {
  json d = json::parse(R"({
    "name": "t",
    "variants": [{"name": "a"}, {"name": "b"}],
    "guest": {"cmdline": "isolcpus=2-3 nohz_full=2-3", "vcpus": 4}
  })");
  d["workloads"] = json::array({workload});
  return d;
}

json oslat(const json& fields = json::object()) {
  json w = {{"name", "noise"}, {"tool", "oslat"}};
  w.update(fields);
  return w;
}

// "<pointer>: <message>" of the refusal, or "(no error)".
std::string refusal(const json& workload) {
  try {
    parse_spec(spec_with(workload), ISOLAB_SOURCE_DIR);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SpecOslat, Defaults) {
  const Spec s = parse_spec(spec_with(oslat()), ISOLAB_SOURCE_DIR);
  const WorkloadSpec& w = s.workloads.at(0);
  EXPECT_EQ(w.cpus, "isolated");
  EXPECT_EQ(w.duration_s, 10);
  EXPECT_EQ(w.priority, 0);  // oslat's SCHED_OTHER: no --rtprio
  EXPECT_EQ(w.histogram_us, 1000);
  EXPECT_EQ(w.oslat_workload, "no");
}

TEST(SpecOslat, GivenFields) {
  const Spec s = parse_spec(spec_with(oslat({{"priority", 1},
                                             {"duration_s", 60},
                                             {"histogram_us", 32},
                                             {"oslat_workload", "memmove"},
                                             {"cpus", "3"},
                                             {"extra_args", {"-T", "500", "--bias", "-zs"}}})),
                            ISOLAB_SOURCE_DIR);
  const WorkloadSpec& w = s.workloads.at(0);
  EXPECT_EQ(w.priority, 1);
  EXPECT_EQ(w.duration_s, 60);
  EXPECT_EQ(w.histogram_us, 32);
  EXPECT_EQ(w.oslat_workload, "memmove");
  EXPECT_EQ(w.cpus, "3");
}

TEST(SpecOslat, BadFieldsNameTheirPointer) {
  EXPECT_THAT(refusal(oslat({{"oslat_workload", "memcpy"}})),
              HasSubstr("/workloads/0/oslat_workload: expected no or memmove, got 'memcpy'"));
  EXPECT_THAT(refusal(oslat({{"histogram_us", 2000}})),
              HasSubstr("/workloads/0/histogram_us: oslat takes 5 to 1024 buckets"));
  EXPECT_THAT(refusal(oslat({{"histogram_us", 4}})), HasSubstr("/workloads/0/histogram_us"));
  EXPECT_THAT(refusal(oslat({{"duration_s", 0}})),
              HasSubstr("/workloads/0/duration_s: value 0 out of range [1, 86400]"));
  EXPECT_THAT(refusal(oslat({{"priority", 100}})), HasSubstr("/workloads/0/priority"));
  EXPECT_THAT(refusal(oslat({{"mode", "syscall"}})), HasSubstr("/workloads/0/mode: unknown field"));
  EXPECT_THAT(
      refusal(oslat({{"latency_tracer", "wakeup_rt"}})),
      HasSubstr("/workloads/0/latency_tracer: only a cyclictest workload takes this field"));
  EXPECT_THAT(refusal({{"name", "lat"}, {"tool", "cyclictest"}, {"oslat_workload", "memmove"}}),
              HasSubstr("/workloads/0/oslat_workload: only a oslat workload takes this field"));
}

// Options that choose what "cpus" and "duration_s" choose (getopt_long takes abbreviations and
// clusters of short options) are refused, naming the argument.
TEST(SpecOslat, ExtraArgsThatChooseCpusDurationOrJsonAreRefused) {
  for (const char* arg : {"--cpu-list", "--cpu-list=3", "--cpu-l", "--cpu-main-thread", "--cpu-m=0",
                          "-c", "-c3", "-C", "-zc3", "-Bc", "-D", "-D5", "--duration", "--du=5",
                          "--json", "--json=x.json", "--js"}) {
    EXPECT_THAT(refusal(oslat({{"extra_args", {"-z", arg}}})),
                HasSubstr("/workloads/0/extra_args/1: '" + std::string(arg) +
                          "' would choose oslat's CPUs"))
        << arg;
  }
  for (const char* arg : {"-T", "-z", "-B", "--bias", "-s", "--single-preheat", "-m", "16K",
                          "--workload-mem=4K", "-q"})
    EXPECT_EQ(refusal(oslat({{"extra_args", {arg}}})), "(no error)") << arg;
}

}  // namespace
}  // namespace isolab
