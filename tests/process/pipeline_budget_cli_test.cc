// process tier: the built `isolab import --tool oslat` of real captures (tests/data/oslat), then
// `isolab budget` judging them: a generous budget passes (exit 0), a tight one is over naming the
// CPU (exit 4), a timing budget on a capture made in a TCG guest is reported, not enforced
// (exit 3), and a bad budget is refused naming the file and the JSON pointer (exit 2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "cli_scratch.h"
#include "sys/process.h"

using namespace isolab;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& name) {
  return (fs::path(ISOLAB_TEST_DATA_DIR) / "oslat" / name).string();
}

class BudgetCli : public CliScratchTest {
 protected:
  BudgetCli() : CliScratchTest("budget-cli") {}

  // The run directory of `isolab import --tool oslat FILE` with the extra arguments.
  std::string import(const std::string& label, const std::string& file,
                     std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "import", "--tool", "oslat", "--label", label, "-o", (dir_ / label).string(), data(file)};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult r = isolab(args);
    EXPECT_TRUE(r.ok()) << r.err;
    return (dir_ / label).string();
  }

  // A file {"budgets": [...]} holding `budgets`.
  std::string budgets(const std::string& name, const std::string& budgets) {
    const fs::path f = dir_ / name;
    std::ofstream(f) << "{\"budgets\": " << budgets << "}\n";
    return f.string();
  }
};

}  // namespace

TEST_F(BudgetCli, RealMachineOslatPassesAGenerousBudgetAndFailsATightOneNamingTheCpu) {
  const std::string run = import("host", "host-2.40-cpus0-1-zero-omit.json");
  ProcessResult pass =
      isolab({"budget", run, "--spec",
              budgets("generous.json", R"([{"metric": "oslat_max_us", "below": 60000}])")});
  EXPECT_EQ(pass.exit_code, 0) << pass.err;
  EXPECT_THAT(pass.out, HasSubstr("budgets: within budget"));

  ProcessResult over = isolab(
      {"budget", run, "--spec",
       budgets("tight.json", R"([{"metric": "oslat_max_us", "below": 20000, "cpus": "1"}])")});
  EXPECT_EQ(over.exit_code, 4) << over.err;
  // oslat's longest gap on CPU 1 of that machine: 28154 us.
  EXPECT_THAT(over.out,
              HasSubstr("budgets: over budget on CPU 1 by 8154 us (oslat_max_us 28154 us"));

  ProcessResult j =
      isolab({"budget", run, "--format", "json", "--spec", (dir_ / "tight.json").string()});
  EXPECT_EQ(j.exit_code, 4) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["checks"][0]["cpu"], 1);
  EXPECT_EQ(doc["checks"][0]["outcome"], "over");
}

TEST_F(BudgetCli, TcgGuestTimingIsReportedNotEnforced) {
  const std::string run =
      import("guest", "guest-6.1-tcg-cpus2-3.json", {"--host", "accelerator=tcg"});
  ProcessResult r = isolab({"budget", run, "--spec",
                            budgets("tcg.json", R"([{"metric": "oslat_max_us", "below": 20}])")});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.out, HasSubstr("timing budgets reported, not enforced: cells guest-r0 ran under "
                               "TCG"));
  EXPECT_THAT(r.out, HasSubstr("2 over"));
  EXPECT_THAT(r.out, HasSubstr("budgets: no enforced budget was judged"));
}

TEST_F(BudgetCli, BadInputNamesWhereItIsWrong) {
  const std::string run = import("host", "host-2.40-cpus0-1-zero-omit.json");
  const std::string bad = budgets("bad.json", R"([{"metric": "oslat_max_us", "below": 5},
                                                  {"metric": "oslat_tail", "below": 5}])");
  ProcessResult r = isolab({"budget", run, "--spec", bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("/budgets/1/metric: unknown metric \"oslat_tail\""));
  EXPECT_THAT(r.err, HasSubstr("bad.json"));

  ProcessResult none = isolab({"budget", run});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("/spec/budgets: the run's spec has no budgets"));

  ProcessResult accel =
      isolab({"import", "--tool", "oslat", "--label", "x", "-o", (dir_ / "x").string(), "--host",
              "accelerator=warp", data("host-2.40-cpus0-1-zero-omit.json")});
  EXPECT_EQ(accel.exit_code, 2);
  EXPECT_THAT(accel.err, HasSubstr("--host accelerator=warp: expected kvm, tcg or bare-metal"));
}
