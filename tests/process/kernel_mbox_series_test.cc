// process tier: mailed series read with git (kernel/mbox_series.h): a lore-style thread
// (tests/data/mbox/vmstat-nohz-v2-thread.mbox: an older v1 patch, the v2 cover letter, the v2
// patches out of order, a reply with a quoted diff and a ">From " line), and the directory
// series patches/vmstat-nohz concatenated as `git format-patch --stdout` writes it, which must
// give the same patch hashes and so the same kernel build key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "kernel/build_argv.h"
#include "kernel/mbox_series.h"
#include "sys/process.h"

namespace fs = std::filesystem;

namespace isolab {
namespace {

const fs::path kThread = fs::path(ISOLAB_TEST_DATA_DIR) / "mbox" / "vmstat-nohz-v2-thread.mbox";
const fs::path kSeriesDir = fs::path(ISOLAB_SOURCE_DIR) / "patches" / "vmstat-nohz";

class MboxSeries : public ::testing::Test {
 protected:
  MboxSeries()
      : runner_(make_real_runner()),
        dir_(fs::temp_directory_path() / ("isolab-mbox-" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~MboxSeries() override { fs::remove_all(dir_); }

  // The directory's patches in the order of its series file.
  static std::vector<fs::path> series_files() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(kSeriesDir))
      if (e.path().extension() == ".patch") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }

  std::unique_ptr<ProcessRunner> runner_;
  fs::path dir_;
};

TEST_F(MboxSeries, LoreThreadGivesTheNewestVersionInOrder) {
  const auto messages = read_mbox(kThread, *runner_, dir_ / "work");
  ASSERT_EQ(messages.size(), 6u);
  EXPECT_EQ(messages[1].subject, "[PATCH v2 0/3] mm/vmstat: keep vmstat_update off nohz_full CPUs");
  EXPECT_FALSE(messages[1].has_diff);  // the cover letter
  EXPECT_FALSE(messages[4].has_diff);  // the reply quotes the diff
  EXPECT_NE(messages[4].text.find("\nFrom the trace"), std::string::npos);  // mboxrd unescaped
  EXPECT_FALSE(fs::exists(dir_ / "work"));

  const MailedSeries series = expand_mbox_series(kThread, dir_ / "series", *runner_);
  ASSERT_EQ(series.patches.size(), 3u);
  std::vector<fs::path> files;
  for (const auto& p : series.patches) files.push_back(p.path);
  const auto dir_patches = series_files();
  ASSERT_EQ(dir_patches.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(files[i].filename(), "000" + std::to_string(i + 1) + ".patch");
    const std::string want = read_file(dir_patches[i]);
    const std::string diff = want.substr(want.find("\ndiff --git"));
    EXPECT_NE(read_file(files[i]).find(diff), std::string::npos) << files[i];
    EXPECT_EQ(mail_subject(files[i], *runner_).substr(0, 14),
              "[PATCH v2 " + std::to_string(i + 1) + "/3]");
  }
}

TEST_F(MboxSeries, FormatPatchStdoutBuildsToTheDirectorysKey) {
  std::string mbox;
  BuildKeyInputs from_dir;
  from_dir.source_tree_id = "t";
  from_dir.final_config = "c";
  for (const auto& f : series_files()) {
    mbox += read_file(f);
    from_dir.patch_sha256.push_back(sha256_file(f));
  }
  ASSERT_TRUE(is_mbox_series(mbox));
  write_file_atomic(dir_ / "series.mbox", mbox);
  BuildKeyInputs from_mbox = from_dir;
  from_mbox.patch_sha256.clear();
  for (const auto& p : expand_mbox_series(dir_ / "series.mbox", dir_ / "series", *runner_).patches)
    from_mbox.patch_sha256.push_back(sha256_file(p.path));
  EXPECT_EQ(from_mbox.patch_sha256, from_dir.patch_sha256);
  EXPECT_EQ(compute_build_key(from_mbox), compute_build_key(from_dir));
}

TEST_F(MboxSeries, IncompleteThreadIsRefusedNamingThePatch) {
  // The thread without its v2 2/3 (the last message).
  std::string text = read_file(kThread);
  text.erase(text.rfind("From mboxrd@z"));
  write_file_atomic(dir_ / "gap.mbox", text);
  try {
    expand_mbox_series(dir_ / "gap.mbox", dir_ / "series", *runner_);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), (dir_ / "gap.mbox").string() +
                                         ": patch 2/3 of v2 is missing (the mbox has 1/3, 3/3)");
  }
}

TEST_F(MboxSeries, SubjectOfADirectoryPatchAndOfABareDiff) {
  EXPECT_EQ(mail_subject(series_files()[0], *runner_),
            "[PATCH 1/3] mm/vmstat: do not requeue vmstat_update while it is still busy");
  write_file_atomic(dir_ / "bare.diff", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n");
  EXPECT_EQ(mail_subject(dir_ / "bare.diff", *runner_), "");
}

}  // namespace
}  // namespace isolab
