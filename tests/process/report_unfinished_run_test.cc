// compare and report of runs whose record is not whole. A run that did not finish (result.json
// "status" "interrupted", as `isolab run` writes it on SIGINT): both say so on stderr and in the
// answer (text, JSON and the page) and name --resume; the comparison rests on the cells
// recorded and its exit status is unchanged; one that recorded no cell is refused (exit 2),
// since nothing was measured. Cells of a variant the run does not declare: said, left out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/files.h"
#include "vm/isolab_run.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using vmtest::run_isolab_command;

const fs::path kRun = fs::path(ISOLAB_TEST_DATA_DIR) / "runs" / "planted-regression-kqin12";

TEST(UnfinishedRun, CompareAndReportSayItAndNameResume) {
  const fs::path dir = vmtest::temp_dir("unfinished") / "run";
  fs::copy(kRun, dir, fs::copy_options::recursive);
  nlohmann::json run = nlohmann::json::parse(read_file(dir / "result.json"));
  run["status"] = "interrupted";
  write_file_atomic(dir / "result.json", run.dump());

  const ProcessResult whole = run_isolab_command({"compare", kRun.string()});
  EXPECT_THAT(whole.err, Not(HasSubstr("did not finish")));
  const ProcessResult cut = run_isolab_command({"compare", dir.string()});
  EXPECT_EQ(cut.exit_code, whole.exit_code) << cut.err;
  EXPECT_THAT(cut.err, HasSubstr("isolab compare: note: run " + dir.string() +
                                 " did not finish (status \"interrupted\", 10 cells recorded)"));
  const std::string spec = run.value("spec_path", std::string("SPEC"));
  EXPECT_THAT(cut.err, HasSubstr("`isolab run " + (spec.empty() ? "SPEC" : spec) + " --resume " +
                                 dir.string() + "` finishes it"));
  // The captured run's spec has changed since it ran (the example was edited): the hint says
  // that `run --resume` would refuse that file.
  EXPECT_THAT(cut.err, HasSubstr("` finishes it with the spec the run began with (" + spec +
                                 " has changed since, or cannot be read"));
  EXPECT_THAT(cut.out, HasSubstr("UNFINISHED: run "));
  EXPECT_THAT(whole.out, Not(HasSubstr("UNFINISHED")));
  const ProcessResult json = run_isolab_command({"compare", dir.string(), "--format", "json"});
  const auto doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc.at("run_notes").size(), 1u) << json.out.substr(0, 400);
  EXPECT_EQ(doc["run_notes"][0]["kind"], "unfinished");
  EXPECT_THAT(doc["run_notes"][0]["text"].get<std::string>(),
              HasSubstr(dir.string() + " did not finish (status \"interrupted\""));
  const ProcessResult page =
      run_isolab_command({"report", dir.string(), "-o", (dir / "report.html").string()});
  EXPECT_EQ(page.exit_code, 0) << page.err;
  EXPECT_THAT(page.err, HasSubstr("isolab report: note: run " + dir.string() + " did not finish"));
  EXPECT_THAT(read_file(dir / "report.html"),
              HasSubstr("data-answer=\"unfinished\"><b>UNFINISHED</b>: run "));
}

TEST(UnfinishedRun, NoCellRecordedIsRefusedNamingResume) {
  const fs::path dir = vmtest::temp_dir("unfinished-empty") / "run";
  fs::copy(kRun, dir, fs::copy_options::recursive);
  nlohmann::json run = nlohmann::json::parse(read_file(dir / "result.json"));
  run["status"] = "interrupted";
  run["cells"] = nlohmann::json::array();
  write_file_atomic(dir / "result.json", run.dump());
  const std::vector<std::vector<std::string>> commands = {
      {"compare", dir.string()}, {"report", dir.string(), "-o", (dir / "report.html").string()}};
  for (const auto& command : commands) {
    const std::string& cmd = command[0];
    const ProcessResult r = run_isolab_command(command);
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("run " + dir.string() +
                                 " did not finish (status \"interrupted\") and recorded no cell: "
                                 "nothing to compare"))
        << cmd;
    EXPECT_THAT(r.err, HasSubstr("--resume " + dir.string())) << cmd;
  }
}

// Cells of a variant the run does not declare (a hand-edited or merged result.json) are left out
// of the comparison, and the answer says so instead of dropping them unseen.
TEST(UndeclaredVariant, CellsLeftOutAreSaidInTheAnswer) {
  const fs::path dir = vmtest::temp_dir("undeclared") / "run";
  fs::copy(kRun, dir, fs::copy_options::recursive);
  nlohmann::json run = nlohmann::json::parse(read_file(dir / "result.json"));
  run["cells"][0]["variant"] = "ghost";
  run["cells"][1]["variant"] = "ghost";
  write_file_atomic(dir / "result.json", run.dump());
  const ProcessResult text = run_isolab_command({"compare", dir.string()});
  const std::string said = "run " + dir.string() +
                           " has cells of variants it does not declare (variant_order, variants): "
                           "2 of variant 'ghost'; they are left out of the comparison";
  EXPECT_THAT(text.err, HasSubstr("isolab compare: note: " + said));
  EXPECT_THAT(text.out, HasSubstr("LEFT OUT: run "));
  const ProcessResult json = run_isolab_command({"compare", dir.string(), "--format", "json"});
  const auto doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc.at("run_notes").size(), 1u);
  EXPECT_EQ(doc["run_notes"][0]["kind"], "undeclared-variant");
  EXPECT_EQ(doc["run_notes"][0]["text"], said);
  // The untouched run has no note.
  const ProcessResult whole = run_isolab_command({"compare", kRun.string(), "--format", "json"});
  EXPECT_TRUE(nlohmann::json::parse(whole.out).at("run_notes").empty());
}

// A side with no cell that counts (here every B cell taken out of a finished run) is refused:
// "no regression" over no boot of B would pass for an answer. A B whose boots all failed in a
// way that counts against it keeps exit 1 (compare's own tests).
TEST(NoCellOfASide, IsRefusedInsteadOfNoRegression) {
  const fs::path dir = vmtest::temp_dir("no-b-cell") / "run";
  fs::copy(kRun, dir, fs::copy_options::recursive);
  nlohmann::json run = nlohmann::json::parse(read_file(dir / "result.json"));
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& c : run["cells"])
    if (c.value("variant", "") != "planted") kept.push_back(c);
  run["cells"] = kept;
  write_file_atomic(dir / "result.json", run.dump());
  for (const auto& format : {"text", "json"}) {
    const ProcessResult r = run_isolab_command({"compare", dir.string(), "--format", format});
    EXPECT_EQ(r.exit_code, 2) << format << ": " << r.out.substr(0, 300);
    EXPECT_THAT(r.err, HasSubstr("B (planted) has no cell that counts (0 recorded cells invalid "
                                 "or failed, none ok): nothing was measured on that side"));
  }
  const ProcessResult page =
      run_isolab_command({"report", dir.string(), "-o", (dir / "report.html").string()});
  EXPECT_EQ(page.exit_code, 2) << page.err;
}

// An error inside a result.json (a JSON pointer) names the file too: of two runs, the wrong one.
TEST(BadRecord, AnErrorInsideResultJsonNamesItsFile) {
  const fs::path dir = vmtest::temp_dir("bad-record") / "run";
  fs::copy(kRun, dir, fs::copy_options::recursive);
  nlohmann::json run = nlohmann::json::parse(read_file(dir / "result.json"));
  run["cells"][3]["variant"] = 7;
  write_file_atomic(dir / "result.json", run.dump());
  const ProcessResult r = run_isolab_command({"compare", kRun.string(), dir.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr((dir / "result.json").string() + ": /cells/3/variant: "));
}

}  // namespace
}  // namespace isolab
