// The guest a spec derives (issues 12 and 13): its vCPU count, the NR_CPUS its kernel is built
// with, the checks made before any build, and the command line length limit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "cmdline/analysis_output.h"
#include "guest/init_script.h"
#include "pipeline/host_cpu_plan.h"
#include "pipeline/run_plan.h"
#include "spec/spec.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {
namespace {

const fs::path kSpecs = fs::path(ISOLAB_TEST_DATA_DIR) / "specs";
const fs::path kConfigs = fs::path(ISOLAB_SOURCE_DIR) / "kernel-configs";

json spec_with_customer_line(const std::string& line) {
  json j = json::parse(read_file(kSpecs / "customer-k5.json"));
  j["guest"] = {{"customer_cmdline", line}};
  return j;
}

std::string spec_error_pointer(const json& doc, std::string* message = nullptr) {
  try {
    derive_guest(parse_spec(doc, kSpecs));
  } catch (const SpecError& e) {
    if (message) *message = e.what();
    return e.pointer();
  }
  return "(no error)";
}

// /guest/customer_kernel_version: a customer's line written for 5.4, whose isolcpus= flags that
// kernel rejected (4.15-5.5 know nohz and domain only): the guest boots without isolcpus=, the
// analysis names where the version came from; a version for a hand-written line, or one that is
// no release, is refused at the field.
TEST(PipelineGuest, CustomerKernelVersionDecidesTheReproduction) {
  json d = spec_with_customer_line("isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3");
  d["guest"]["customer_kernel_version"] = "5.4.0-150-generic";
  const GuestDerivation g = derive_guest(parse_spec(d, kSpecs));
  EXPECT_EQ(g.cmdline.find("isolcpus"), std::string::npos) << g.cmdline;
  EXPECT_NE(g.cmdline.find("nohz_full=2-3"), std::string::npos) << g.cmdline;
  EXPECT_EQ(g.analysis["customer_kernel"], "5.4.0-150-generic (/guest/customer_kernel_version)");
  d["guest"]["customer_kernel_version"] = "five";
  EXPECT_EQ(spec_error_pointer(d), "/guest/customer_kernel_version");
  d["guest"] = {{"cmdline", "nohz_full=1"}, {"customer_kernel_version", "5.4"}};
  EXPECT_EQ(spec_error_pointer(d), "/guest/customer_kernel_version");
}

// docs/sources.md [k7]: 40 vCPUs, a kernel with NR_CPUS >= 40, and the customer's isolation.
TEST(PipelineGuest, K7SpecDerives40CpusAndA40CpuKernel) {
  Spec s = parse_spec(
      spec_with_customer_line("isolcpus=managed_irq,domain,4-19,24-39 nohz_full=4-19,24-39 "
                              "rcu_nocbs=4-19,24-39 irqaffinity=0-3,20-23"),
      kSpecs);
  GuestDerivation g = derive_guest(s);
  EXPECT_EQ(g.vcpus, 40);
  EXPECT_EQ(g.nr_cpus_required, 40u);
  EXPECT_EQ(g.expect_isolated, "4-19,24-39");
  EXPECT_EQ(g.expect_nohz_full, "4-19,24-39");
  EXPECT_EQ(g.expected.rcu_offload->to_list(), "4-19,24-39");
  EXPECT_EQ(g.partition.housekeeping.to_list(), "0-3,20-23");
  EXPECT_EQ(g.analysis["nr_cpus_config"], 40);
  // base.config sets NR_CPUS=16: the kernel gets a generated NR_CPUS=40 fragment.
  EXPECT_EQ(guest_kernel_nr_cpus(s.config_fragments, g.nr_cpus_required), 40u);
  // Booted on a 16-CPU kernel the same line would mean something else.
  GuestDerivation on16 = derive_guest(s, 16);
  EXPECT_EQ(on16.expected.isolated.to_list(), "");
  EXPECT_NE(to_json(on16.expected), to_json(g.expected));
  EXPECT_EQ(to_json(derive_guest(s, 64).expected), to_json(g.expected));
}

// The vm tier's large guest (tests/data/specs/customer-20cpus.json).
TEST(PipelineGuest, TwentyCpuSpecGetsA20CpuKernel) {
  Spec s = load_spec_file(kSpecs / "customer-20cpus.json");
  GuestDerivation g = derive_guest(s);
  EXPECT_EQ(g.vcpus, 20);
  EXPECT_EQ(g.expect_isolated, "4-9,14-19");
  EXPECT_EQ(g.expect_nohz_full, "4-9,14-19");
  EXPECT_EQ(g.partition.housekeeping.to_list(), "0-3,10-13");
  EXPECT_EQ(guest_kernel_nr_cpus(s.config_fragments, g.nr_cpus_required), 20u);
}

// A line whose CPU lists end beyond their last member: a range end (15) beyond the last member (14)
// decides the count; 16 vCPUs keep base.config's NR_CPUS=16 kernel as it is (no new build key).
TEST(PipelineGuest, Groups16KeepsBaseConfigKernel) {
  Spec s = load_spec_file(kSpecs / "customer-groups16.json");
  GuestDerivation g = derive_guest(s);
  EXPECT_EQ(g.vcpus, 16);
  EXPECT_EQ(g.cmdline, "isolcpus=1-15:2/4 nohz_full=1-15:2/4 rcu_nocbs=1-15:2/4");
  EXPECT_EQ(g.expect_isolated, "1-2,5-6,9-10,13-14");
  EXPECT_EQ(g.expect_nohz_full, "1-2,5-6,9-10,13-14");
  EXPECT_EQ(g.partition.housekeeping.to_list(), "0,3-4,7-8,11-12,15");
  EXPECT_EQ(guest_kernel_nr_cpus(s.config_fragments, g.nr_cpus_required), std::nullopt);
}

// The default spec keeps its kernels: 8 vCPUs on base.config's 16.
TEST(PipelineGuest, DefaultSpecNeedsNoNrCpusFragment) {
  Spec s = load_spec_file(fs::path(ISOLAB_SOURCE_DIR) / "examples" / "vmstat-nohz.json");
  GuestDerivation g = derive_guest(s);
  EXPECT_EQ(g.vcpus, 8);
  for (const auto& v : s.variants) {
    std::vector<fs::path> f = s.config_fragments;
    f.insert(f.end(), v.config_fragments.begin(), v.config_fragments.end());
    EXPECT_EQ(guest_kernel_nr_cpus(f, g.nr_cpus_required), std::nullopt) << v.name;
  }
  EXPECT_EQ(fragments_nr_cpus({kConfigs / "base.config", kConfigs / "isolation.config"}), 16u);
}

TEST(PipelineGuest, FragmentsNrCpusLastWinsAndBadValuesAreNamed) {
  const fs::path d = fs::temp_directory_path() / ("isolab-nrcpus-" + std::to_string(::getpid()));
  fs::create_directories(d);
  write_file_atomic(d / "a.config", "CONFIG_NR_CPUS=64\n");
  write_file_atomic(d / "b.config", "CONFIG_SMP=y\n");
  write_file_atomic(d / "bad.config", "CONFIG_NR_CPUS=lots\n");
  EXPECT_EQ(fragments_nr_cpus({kConfigs / "base.config", d / "a.config", d / "b.config"}), 64u);
  EXPECT_EQ(fragments_nr_cpus({d / "b.config"}), std::nullopt);
  EXPECT_EQ(guest_kernel_nr_cpus({d / "b.config"}, 4), 4u);  // unknown: set it
  EXPECT_EQ(guest_kernel_nr_cpus({d / "a.config"}, 40), std::nullopt);
  try {
    fragments_nr_cpus({d / "bad.config"});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.config:1: CONFIG_NR_CPUS=lots"), std::string::npos)
        << e.what();
  }
  fs::remove_all(d);
}

TEST(PipelineGuest, KernelConfigNrCpus) {
  EXPECT_EQ(kernel_config_nr_cpus("CONFIG_SMP=y\nCONFIG_NR_CPUS=40\n", "k"), 40u);
  EXPECT_EQ(kernel_config_nr_cpus("# CONFIG_SMP is not set\n", "k"), 1u);
  EXPECT_THROW(kernel_config_nr_cpus("CONFIG_SMP=y\n", "k"), Error);
  EXPECT_THROW(kernel_config_nr_cpus("CONFIG_SMP=y\nCONFIG_NR_CPUS=0\n", "k"), Error);
}

// Checks before any build: a line no QEMU guest can reproduce, a line without a CPU count, a
// vCPU count QEMU does not boot.
TEST(PipelineGuest, VcpusNoMachineBootsAreRefusedBeforeTheBuild) {
  std::string msg;
  EXPECT_EQ(spec_error_pointer(spec_with_customer_line("isolcpus=100-2000:2/25"), &msg),
            "/guest/customer_cmdline");
  EXPECT_NE(msg.find("no QEMU guest can have 2001 CPUs"), std::string::npos) << msg;
  json given = spec_with_customer_line("isolcpus=100-2000:2/25");
  given["guest"]["vcpus"] = 255;
  EXPECT_EQ(spec_error_pointer(given), "(no error)");  // the user chose the smaller guest
  EXPECT_EQ(spec_error_pointer(spec_with_customer_line("nohz_full=2-N,N"), &msg), "(no error)");
  EXPECT_EQ(spec_error_pointer(spec_with_customer_line("nohz_full=all:1/2"), &msg),
            "/guest/customer_cmdline");
  EXPECT_NE(msg.find("set guest.vcpus"), std::string::npos) << msg;
  json big = spec_with_customer_line("nohz_full=2-3");
  big["guest"]["vcpus"] = 256;
  try {
    parse_spec(big, kSpecs);
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.pointer(), "/guest/vcpus");
    EXPECT_NE(std::string(e.what()).find("QEMU 7.2 boots at most 255"), std::string::npos);
  }
}

// docs/sources.md [k6] for our own guests: a final line the kernel would cut is refused,
// naming its length.
TEST(PipelineGuest, FinalGuestLineOverTheLimitIsRefused) {
  std::string line = "isolcpus=2-3 nohz_full=2-3";
  while (line.size() < 1900) line += " skew_tick=1";
  Spec s = parse_spec(spec_with_customer_line(line), kSpecs);
  GuestDerivation g = derive_guest(s);
  const std::string without_trace = variant_guest_cmdline(g, s.variants[0], false);
  EXPECT_EQ(without_trace, g.cmdline);
  EXPECT_NO_THROW(check_guest_cmdline_length(s, g, false));
  const size_t final_len =
      variant_guest_cmdline(g, s.variants[0], true).size() +
      std::string(" console=ttyS0 panic=-1 no_timer_check nokaslr clocksource=tsc tsc=reliable")
          .size();
  ASSERT_GT(final_len, 2047u);
  try {
    check_guest_cmdline_length(s, g, true);
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.pointer(), "/guest/customer_cmdline");
    const std::string m = e.what();
    EXPECT_NE(m.find("variant vanilla"), std::string::npos) << m;
    EXPECT_NE(m.find("is " + std::to_string(final_len) + " bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("'trace_event="), std::string::npos) << m;
  }
}

// docs/sources.md [q1]: the guest topology is fully specified (default 1 socket of N cores, 1
// thread) and a topology whose product is not the vCPU count is a spec error before boot, in QEMU's
// words.
TEST(PipelineGuest, TopologyDefaultsAndQ1Errors) {
  json j = json::parse(read_file(kSpecs / "e2e-short.json"));
  GuestDerivation g = derive_guest(parse_spec(j, kSpecs));
  EXPECT_EQ(to_json(g.topology).dump(), R"({"cores":4,"sockets":1,"threads":1})");
  j["guest"]["topology"] = {{"sockets", 2}, {"cores", 2}};
  g = derive_guest(parse_spec(j, kSpecs));
  EXPECT_EQ(to_json(g.topology).dump(), R"({"cores":2,"sockets":2,"threads":1})");
  j["guest"]["topology"] = {{"sockets", 2}, {"cores", 4}, {"threads", 2}};
  std::string msg;
  EXPECT_EQ(spec_error_pointer(j, &msg), "/guest/topology");
  EXPECT_NE(msg.find("product of the hierarchy must match maxcpus: sockets (2) * cores (4) * "
                     "threads (2) != maxcpus (4)"),
            std::string::npos)
      << msg;
  j["guest"]["topology"] = {{"sockets", 0}};
  EXPECT_EQ(spec_error_pointer(j, &msg), "/guest/topology/sockets");
  EXPECT_NE(msg.find("CPU topology parameters must be greater than zero"), std::string::npos);
}

TEST(PipelineGuest, OvercommitAndParallelFields) {
  json j = json::parse(read_file(kSpecs / "e2e-short.json"));
  Spec s = parse_spec(j, kSpecs);
  EXPECT_TRUE(s.overcommit);
  EXPECT_EQ(s.parallel, 1);
  j["parallel"] = "auto";
  j.erase("overcommit");
  s = parse_spec(j, kSpecs);
  EXPECT_FALSE(s.overcommit);
  EXPECT_EQ(s.parallel, 0);
  GuestCpuNeeds n = guest_cpu_needs(s, derive_guest(s), -1);
  EXPECT_EQ(n.vcpus, 4);
  EXPECT_EQ(n.isolated_vcpus.to_list(), "2-3");
  EXPECT_EQ(n.parallel, 0);
  EXPECT_EQ(guest_cpu_needs(s, derive_guest(s), 2).parallel, 2);
  j["parallel"] = 0;
  EXPECT_EQ(spec_error_pointer(j), "/parallel");
  j["parallel"] = "two";
  EXPECT_EQ(spec_error_pointer(j), "/parallel");
}

}  // namespace
}  // namespace isolab

namespace isolab {
namespace {

// A workload's CPU list is checked against the guest before any build, and the error names the
// workload by its place in the spec (its index; a load under it as .../load/cpus).
TEST(PipelineGuest, WorkloadCpusAreCheckedBeforeTheBuildByTheirPointer) {
  const json base =
      json::parse(read_file(fs::path(ISOLAB_SOURCE_DIR) / "examples/vmstat-nohz.json"));
  auto error_of = [&](const json& doc) -> std::string {
    try {
      const Spec s = parse_spec(doc, fs::path(ISOLAB_SOURCE_DIR) / "examples");
      check_guest_steps(s, derive_guest(s));
    } catch (const SpecError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(error_of(base), "(no error)");
  json doc = base;
  doc["workloads"][1]["cpus"] = "5-3";
  EXPECT_THAT(error_of(doc), ::testing::StartsWith("/workloads/1/cpus: cpulist '5-3': EINVAL"));
  doc = base;
  doc["workloads"][0]["cpus"] = "99";
  EXPECT_THAT(error_of(doc), ::testing::StartsWith("/workloads/0/cpus: cpulist '99': ERANGE"));
  doc = base;
  doc["workloads"][3]["load"]["cpus"] = "9";
  EXPECT_THAT(error_of(doc), ::testing::StartsWith("/workloads/3/load/cpus: cpulist '9'"));
}

}  // namespace
}  // namespace isolab
