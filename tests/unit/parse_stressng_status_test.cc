// stress-ng's exit status and log (docs/sources.md [s3]) against real runs
// of stress-ng 0.15.06 on the build host (tests/data/stress-ng/s3-*: the name ends in the exit
// status it gave). s3-case-summary-skipped16.log is the one fixture not captured here: 0.15.06
// prints no "passed:"/"skipped:" summary, so it holds the summary lines quoted in that section's
// sources, in the format of stress-ng.c stress_exit_status_type().
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "base/files.h"
#include "parse/stressng.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;
using Outcome = StressngRunCheck::Outcome;

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/stress-ng/" + name);
}

// The log s3-<name>.log and, when it exists, the YAML s3-<name>.yaml, judged with `rc`.
StressngRunCheck check(const std::string& name, std::optional<int> rc,
                       std::vector<std::string> requested) {
  const std::string yaml = std::string(ISOLAB_TEST_DATA_DIR) + "/stress-ng/s3-" + name + ".yaml";
  StressngResult r =
      std::filesystem::exists(yaml) ? parse_stressng_yaml(read_file(yaml)) : StressngResult{};
  return check_stressng_run(parse_stressng_log(data("s3-" + name + ".log")), rc,
                            std::move(requested), r);
}

TEST(StressngLog, RealLinesAreRead) {
  StressngLog l = parse_stressng_log(data("s3-cpu-sctp-rc0.log"));
  EXPECT_EQ(l.dispatched, (std::vector<std::string>{"cpu", "sctp"}));
  ASSERT_EQ(l.skipped.count("sctp"), 1u);
  EXPECT_EQ(l.skipped.at("sctp").line, 3u);
  EXPECT_EQ(l.skipped.at("sctp").text, "sctp: SCTP protocol not supported, skipping stressor");
  EXPECT_EQ(l.successful, true);
  EXPECT_EQ(l.passed_summary.line, 0u);  // 0.15.06 prints no summary

  StressngLog u = parse_stressng_log(data("s3-uprobe-rc3.log"));
  ASSERT_EQ(u.no_resources.count("uprobe"), 1u);
  EXPECT_EQ(u.no_resources.at("uprobe").line, 4u);

  StressngLog p = parse_stressng_log(data("s3-physpage-rc2.log"));
  ASSERT_EQ(p.failed.count("physpage"), 1u);
  EXPECT_THAT(p.failed.at("physpage").text, HasSubstr("exit status=2 (stressor failed)"));
  EXPECT_EQ(p.successful, false);

  StressngLog k = parse_stressng_log(data("s3-kill9-rc2.log"));
  ASSERT_EQ(k.untrustworthy.count("cpu"), 1u);
  EXPECT_THAT(k.untrustworthy.at("cpu").text, HasSubstr("corrupted bogo-ops counter"));

  StressngLog a = parse_stressng_log(data("s3-none-apparmor-rc0.log"));
  EXPECT_TRUE(a.dispatched.empty());
  EXPECT_EQ(a.skipped.count("apparmor"), 1u);
  EXPECT_EQ(a.no_workers.line, 3u);
}

TEST(StressngLog, CaseS3Summary) {
  StressngLog l = parse_stressng_log(data("s3-case-summary-skipped16.log"));
  EXPECT_EQ(l.passed_summary.line, 5u);
  EXPECT_TRUE(l.passed.empty());
  ASSERT_EQ(l.skipped.count("apparmor"), 1u);
  EXPECT_EQ(l.skipped.at("apparmor").line, 3u);  // the first line saying so
  EXPECT_TRUE(l.failed.empty());
  EXPECT_TRUE(l.untrustworthy.empty());
  EXPECT_EQ(l.successful, true);
}

// One run judged by check_stressng_run() (see check()): the log s3-<log>.log, the exit status rc,
// the requested stressors (separated by spaces), and what the check must say. Expectations left
// unset (nullopt, "") are not checked.
struct RunCase {
  const char* what;
  const char* log;
  std::optional<int> rc;
  const char* requested;
  std::optional<Outcome> outcome;
  std::optional<std::size_t> line = std::nullopt;
  const char* reason_is = "";   // the whole reason
  const char* reason_has = "";  // a part of the reason
};

// gtest names a failing case by this.
void PrintTo(const RunCase& k, std::ostream* os) { *os << k.what; }

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

class StressngRunStatus : public ::testing::TestWithParam<RunCase> {};

TEST_P(StressngRunStatus, Judged) {
  const RunCase& k = GetParam();
  StressngRunCheck c = check(k.log, k.rc, words(k.requested));
  if (k.outcome) {
    EXPECT_EQ(c.outcome, *k.outcome) << k.what << ": " << c.reason;
  }
  if (k.line) {
    EXPECT_EQ(c.line, *k.line) << k.what;
  }
  if (*k.reason_is) {
    EXPECT_EQ(c.reason, k.reason_is) << k.what;
  }
  if (*k.reason_has) {
    EXPECT_THAT(c.reason, HasSubstr(k.reason_has)) << k.what;
  }
}

const auto kNone = std::nullopt;

INSTANTIATE_TEST_SUITE_P(
    CaseS3, StressngRunStatus,
    ::testing::Values(
        RunCase{"real success", "cpu-rc0", 0, "cpu", Outcome::ok},
        // Exit status 0 although a requested stressor never ran: not a success.
        RunCase{"status 0, sctp skipped", "cpu-sctp-rc0", 0, "cpu sctp", Outcome::invalid, 3,
                "stressor sctp did not run: sctp: SCTP protocol not supported, skipping stressor"},
        // --vm 1 --vm-bytes 100T: stress-ng ran the stressor its 2 s and calls it a success
        // with 0 bogo ops; that is stress-ng's verdict, kept (the 0 is a measured value).
        RunCase{"0 bogo ops over the whole run", "vm-100T-rc0", 0, "vm", Outcome::ok},
        // The same request in a real 6.1 guest (tinyconfig-based, no SCTP): a "fail:" line,
        // then "successful run completed" and exit status 0 (records of WorkloadStressngStatus).
        RunCase{"6.1 guest without SCTP", "guest-6.1-cpu-sctp-rc0", 0, "cpu sctp", Outcome::invalid,
                3,
                "stressor sctp did not run: sctp: socket failed, errno=38 (Function not "
                "implemented)"},
        RunCase{"nothing ran, status 0", "none-apparmor-rc0", 0, "apparmor", Outcome::invalid,
                kNone, "",
                "stressor apparmor did not run: apparmor stressor will be skipped, AppArmor is "
                "not enabled"},
        // A run that skipped everything: "skipped: 16", "passed: 0", "successful run completed".
        RunCase{"all skipped", "case-summary-skipped16", 0, "", Outcome::invalid, kNone, "",
                "stressor apparmor did not run"},
        RunCase{"status 2", "physpage-rc2", 2, "physpage", Outcome::failed, kNone, "",
                "stress-ng exited 2 (a stressor failed (or an unexpected signal)): stressor "
                "physpage failed: process ["},
        RunCase{"status 3", "uprobe-rc3", 3, "uprobe", Outcome::failed, 4, "",
                "stress-ng exited 3 (not enough resources): stressor uprobe had not enough "
                "resources"},
        RunCase{"status 2 after SIGKILL", "kill9-rc2", 2, "cpu", Outcome::failed, kNone, "",
                "stressor cpu: cpu instance 0 corrupted bogo-ops counter"},
        // Status known only from the log (an import): the same verdicts.
        RunCase{"status 2 from the log", "physpage-rc2", kNone, "", Outcome::failed},
        RunCase{"status 3 from the log", "uprobe-rc3", kNone, "", Outcome::failed},
        RunCase{"SIGKILL from the log", "kill9-rc2", kNone, "", Outcome::failed},
        // A status the log does not explain still fails, with its meaning.
        RunCase{"status 1", "cpu-rc0", 1, "cpu", Outcome::failed, kNone,
                "stress-ng exited 1 (harness or usage error)"},
        RunCase{"status 42", "cpu-rc0", 42, "cpu", kNone, kNone,
                "stress-ng exited 42 (not a stress-ng exit status)"},
        // Status 7 could not be produced here (it needs a stressor that returns with its
        // counter not ready); the real log of a good run is judged as if stress-ng had exited 7.
        RunCase{"status 7", "cpu-rc0", 7, "cpu", Outcome::ok}));

TEST(StressngRun, RealSuccessHasNoUntrustworthyStressor) {
  EXPECT_TRUE(check("cpu-rc0", 0, {"cpu"}).untrustworthy.empty());
}

// Without its log line the 0-ops-in-0-s row still gives a skipped stressor away.
TEST(StressngRun, SkippedStressorShowsInTheYamlAlone) {
  StressngResult r = parse_stressng_yaml(data("s3-skipped-sctp-rc0.yaml"));
  StressngRunCheck y = check_stressng_run(StressngLog{}, 0, {"sctp"}, r);
  EXPECT_EQ(y.outcome, Outcome::invalid);
  EXPECT_THAT(y.reason,
              HasSubstr("stressor sctp did not run: its metrics row has 0 bogo ops in 0.0224 s"));
}

// The --vm-bytes 100T run of the table ran its whole 2 s.
TEST(StressngLog, RunSecondsOfTheZeroOpsRun) {
  StressngLog l = parse_stressng_log(data("s3-vm-100T-rc0.log"));
  EXPECT_EQ(l.run_seconds, 2.0);
}

TEST(StressngRun, PassedSummaryWithoutTheStressorIsInvalid) {
  StressngLog l = parse_stressng_log(
      "stress-ng: info:  [1] dispatching hogs: 2 cpu, 1 vm\n"
      "stress-ng: info:  [1] skipped: 0\n"
      "stress-ng: info:  [1] passed: 2: cpu (2)\n"
      "stress-ng: info:  [1] failed: 0\n");
  StressngRunCheck c = check_stressng_run(l, 0, {"cpu", "vm"}, StressngResult{});
  EXPECT_EQ(c.outcome, Outcome::invalid);
  EXPECT_EQ(c.line, 3u);
  EXPECT_EQ(c.reason, "stressor vm did not run: passed: 2: cpu (2)");
}

// Status 7 (see the table): every reported stressor is untrustworthy, with the warning
// stress-ng prints for it as the reason where there is one.
TEST(StressngRun, Status7MarksEveryReportedStressorUntrustworthy) {
  StressngRunCheck c = check("cpu-rc0", 7, {"cpu"});
  ASSERT_EQ(c.untrustworthy.count("cpu"), 1u);
  EXPECT_EQ(c.untrustworthy.at("cpu"), "stress-ng exited 7 (metrics untrustworthy)");
  StressngLog l = parse_stressng_log(
      "stress-ng: warn:  [9] cpu: WARNING: bogo-ops counter in non-ready state, metrics are "
      "untrustworthy (process may have been terminated prematurely)\n");
  StressngRunCheck w =
      check_stressng_run(l, 7, {"cpu"}, parse_stressng_yaml(data("s3-cpu-rc0.yaml")));
  EXPECT_THAT(w.untrustworthy.at("cpu"), HasSubstr("bogo-ops counter in non-ready state"));
}

TEST(StressngRun, ExitMeaningTable) {
  const std::vector<std::pair<int, std::string>> meanings = {{0, "success"},
                                                             {3, "not enough resources"},
                                                             {7, "metrics untrustworthy"},
                                                             {-1, "not a stress-ng exit status"}};
  for (const auto& [status, meaning] : meanings)
    EXPECT_EQ(stressng_exit_meaning(status), meaning) << status;
}

TEST(StressngLog, JunkDoesNotThrow) {
  std::string junk(5000, '\x01');
  junk += "\nprocess [ (\nskipped: x\npassed: 9999999999999999999: a (1)\n\xff\xfe";
  StressngLog l = parse_stressng_log(junk);
  EXPECT_TRUE(l.passed.count("a"));
}

}  // namespace
}  // namespace isolab
