// compare and report of a run that did not finish (result.json "status" "interrupted", as
// `isolab run` writes it on SIGINT): both say so on stderr and name --resume; the comparison
// rests on the cells recorded and its exit status is unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

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
  EXPECT_THAT(cut.err, HasSubstr("`isolab run SPEC --resume " + dir.string() + "` finishes it"));
  const ProcessResult page =
      run_isolab_command({"report", dir.string(), "-o", (dir / "report.html").string()});
  EXPECT_EQ(page.exit_code, 0) << page.err;
  EXPECT_THAT(page.err, HasSubstr("isolab report: note: run " + dir.string() + " did not finish"));
}

}  // namespace
}  // namespace isolab
