// process tier: the built `isolab import` on the real captured outputs in tests/data, then
// `isolab compare` (refused without --force, accepted with it, differences readable) and
// `isolab history` on the imported runs; bad input exits 2 naming the file and line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "cli_scratch.h"
#include "sys/process.h"

using namespace isolab;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& rel) { return (fs::path(ISOLAB_TEST_DATA_DIR) / rel).string(); }

class ImportCli : public CliScratchTest {
 protected:
  ImportCli() : CliScratchTest("import") {}

  // isolab import ... -o dir_/<label>; asserts success and returns the run directory.
  fs::path import(const std::string& tool, const std::string& label, std::vector<std::string> files,
                  std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "import", "--tool", tool, "--label", label, "-o", (dir_ / label).string()};
    args.insert(args.end(), files.begin(), files.end());
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult r = isolab(args);
    EXPECT_TRUE(r.ok()) << r.describe() << ": " << r.err;
    EXPECT_EQ(r.out, (dir_ / label).string() + "\n");
    return dir_ / label;
  }
};

}  // namespace

TEST_F(ImportCli, CyclictestCapturesCompareWithForce) {
  // Real rt-tests 2.4 captures: --json with -h, -q text, the 6.1 guest's JSON and -q text.
  fs::path a = import("cyclictest", "host",
                      {data("cyclictest/host-2t-hist.json"), data("cyclictest/host-2t-nohist.json"),
                       data("cyclictest/host-2t-q.txt")});
  fs::path b =
      import("cyclictest", "guest",
             {data("cyclictest/guest-6.1-tcg.json"), data("cyclictest/guest-6.1-tcg.q.txt")},
             {"--host", "cpu_model=QEMU TCG guest", "--kernel-release", "6.1.0"});
  auto result = nlohmann::json::parse(read_file(b / "result.json"));
  EXPECT_EQ(result["cells"].size(), 2u);
  EXPECT_EQ(result["variants"]["guest"]["kernel_release"], "6.1.0");
  EXPECT_TRUE(fs::exists(b / "cells/guest-r0/guest-6.1-tcg.json"));  // raw output kept

  ProcessResult refused = isolab({"compare", a.string(), b.string()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("--force"));
  EXPECT_THAT(refused.err, HasSubstr("host: cpu_model A=unknown, B=QEMU TCG guest"));

  ProcessResult forced = isolab({"compare", a.string(), b.string(), "--force", "--all"});
  // No primary metric is declared and no boot failed: the differences alone give exit 0.
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_THAT(forced.out, HasSubstr("FORCED"));
  EXPECT_THAT(forced.out, HasSubstr("cyclictest.latency_max_us"));
  ProcessResult js = isolab({"compare", a.string(), b.string(), "--force", "--format", "json"});
  auto j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j["forced"], true);

  // The HTML report of the same comparison.
  ProcessResult rep =
      isolab({"report", a.string(), b.string(), "--force", "-o", (dir_ / "report.html").string()});
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
  const std::string html = read_file(dir_ / "report.html");
  EXPECT_THAT(html, HasSubstr("cyclictest.latency_max_us"));
  EXPECT_THAT(html, HasSubstr("bare-metal"));
}

TEST_F(ImportCli, StressngTraceInterruptsCaptures) {
  fs::path s =
      import("stress-ng", "sng",
             {data("stress-ng/host-cpu2.yaml"), data("stress-ng/host-cpu2-brief-times.txt"),
              data("stress-ng/guest-6.1-tcg.yaml")});
  auto sr = nlohmann::json::parse(read_file(s / "result.json"));
  EXPECT_EQ(sr["cells"][1]["metrics"]["stress-ng.cpu.bogo_ops"]["values"][0], 6856);

  fs::path t = import("trace", "tr", {data("trace/guest-6.1-tcg-cpus5-7.txt")},
                      {"--window-s", "4", "--workload", "latency"});
  auto tr = nlohmann::json::parse(read_file(t / "result.json"));
  EXPECT_EQ(tr["cells"][0]["metrics"]["latency.noise.local_timer_per_s"]["counts"],
            nlohmann::json::array({97, 39, 34}));

  // Real guest /proc/interrupts around a 3 s busy window, as one file of two snapshots.
  write_file_atomic(dir_ / "pair.txt",
                    read_file(data("guest/interrupts-isolation-6.1-before.txt")) +
                        read_file(data("guest/interrupts-isolation-6.1-after.txt")));
  fs::path i = import("interrupts", "irqs", {(dir_ / "pair.txt").string()},
                      {"--window-s", "3", "--cpus", "5-7", "--workload", "latency"});
  // Both describe CPUs 5-7 under the same metric names: compare takes them with --force.
  ProcessResult c = isolab({"compare", t.string(), i.string(), "--force", "--all"});
  EXPECT_EQ(c.exit_code, 0) << c.err;  // no primary metric, no failure
  EXPECT_THAT(c.out, HasSubstr("latency.noise.local_timer_per_s"));

  // history reads the index import wrote beside the run directories.
  ProcessResult h =
      isolab({"history", "latency.noise.local_timer_per_s", "--results-dir", dir_.string()});
  EXPECT_TRUE(h.ok()) << h.err;
  EXPECT_THAT(h.out, HasSubstr("tr"));
}

TEST_F(ImportCli, BadInputNamesFileAndLine) {
  ProcessResult r = isolab({"import", "--tool", "cyclictest", "--label", "x", "-o",
                            (dir_ / "x").string(), data("import/bad-garbage-line.txt")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("bad-garbage-line.txt: line 2: not cyclictest output"));
  EXPECT_FALSE(fs::exists(dir_ / "x" / "result.json"));

  ProcessResult m = isolab({"import", "--tool", "stress-ng", "--label", "x", "-o",
                            (dir_ / "x").string(), (dir_ / "missing.yaml").string()});
  EXPECT_EQ(m.exit_code, 2);
  EXPECT_THAT(m.err, HasSubstr("missing.yaml: no such file"));

  ProcessResult t =
      isolab({"import", "--tool", "nope", "--label", "x", data("import/t1-quiet.txt")});
  EXPECT_EQ(t.exit_code, 2);

  // A bad --cpus is refused for a tool that only records it, as for trace and interrupts.
  ProcessResult c = isolab({"import", "--tool", "cyclictest", "--label", "x", "--cpus", "5-3", "-o",
                            (dir_ / "c").string(), data("import/t1-quiet.txt")});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_THAT(c.err, HasSubstr("--cpus: cpulist '5-3'"));
  EXPECT_FALSE(fs::exists(dir_ / "c" / "result.json"));
}
