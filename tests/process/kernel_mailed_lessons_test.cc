// process tier: real mails (tests/data/mbox, sources and right answers in its README.md) read
// as a patch entry is read: git splits them, the thread's rules choose the series and b4 am
// (installed by scripts/setup.sh) folds the replies' trailers in. One test per kind of thread
// the series choice used to read wrong: each of these files was refused or read wrong before.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "kernel/lookup.h"
#include "kernel/mbox_series.h"
#include "sys/process.h"

namespace fs = std::filesystem;

namespace isolab {
namespace {

const fs::path kMbox = fs::path(ISOLAB_TEST_DATA_DIR) / "mbox";

class MailedLessons : public ::testing::Test {
 protected:
  MailedLessons()
      : runner_(make_real_runner()),
        dir_(fs::temp_directory_path() / ("isolab-lessons-" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~MailedLessons() override { fs::remove_all(dir_); }

  MailedSeries read(const std::string& name) {
    return expand_mbox_series(kMbox / name, dir_ / "series", *runner_);
  }

  static std::vector<std::string> places(const MailedSeries& s) {
    std::vector<std::string> out;
    for (const auto& p : s.patches) out.push_back(p.place + " " + p.subject);
    return out;
  }

  static void expect_b4() {
    ASSERT_TRUE(program_in_path("b4")) << "b4 is not installed (scripts/setup.sh installs it)";
  }

  std::unique_ptr<ProcessRunner> runner_;
  fs::path dir_;
};

TEST_F(MailedLessons, PointRerollReplacesItsPatch) {
  // linux-xfs: [PATCH 1/3..3/3], then [PATCH v2.1 1/3] in reply to 1/3, then a review of it.
  const MailedSeries s = read("m4-lore-xfs-v2.1-reroll.mbox");
  EXPECT_EQ(places(s),
            (std::vector<std::string>{
                "v2.1 1/3 [PATCH v2.1 1/3] xfs: increase the default parallelism levels of pwork "
                "clients",
                "v1 2/3 [PATCH 2/3] xfs: use unbounded workqueues for parallel work",
                "v1 3/3 [PATCH 3/3] xfs: set WQ_SYSFS on all workqueues"}));
  EXPECT_EQ(s.patches[0].message_id, "<20210126050452.GS7698@magnolia>");
  ASSERT_EQ(s.left_out.size(), 2u);
  EXPECT_EQ(s.left_out[0].message,
            "message 1 <161142798840.2173328.10025204233532508235.stgit@magnolia> '[PATCH 1/3] "
            "xfs: increase the default parallelism levels of pwork clients'");
  EXPECT_EQ(s.left_out[0].why.substr(0, 31), "v1 1/3: replaced by v2.1 1/3 (m");
  EXPECT_EQ(s.left_out[1].why, "a reply");
  // b4 0.12 cannot read a folded Subject header: its answer is said, git's reading stands.
  EXPECT_EQ(s.patches[0].text_from, "git mailsplit");
  EXPECT_EQ(s.patches[0].trailers,
            (std::vector<std::string>{"Signed-off-by: Darrick J. Wong <djwong@kernel.org>"}));
}

TEST_F(MailedLessons, InBodySubjectOfAMailWithoutOne) {
  // git's list: the mail's Subject is empty, the patch's is in the body after an in-body From.
  const MailedSeries s = read("m4-lore-git-inbody-subject.mbox");
  ASSERT_EQ(s.patches.size(), 1u);
  EXPECT_EQ(s.patches[0].place, "v2");
  EXPECT_EQ(s.patches[0].note, "its place is read from its in-body Subject");
  EXPECT_EQ(s.patches[0].message_id, "<20231203165539.341-1-shreyanshpaliwalcmsmn@gmail.com>");
  ASSERT_EQ(s.left_out.size(), 1u);
  EXPECT_EQ(s.left_out[0].why, "a reply");
}

TEST_F(MailedLessons, B4AmOutputWithAPatchPastItsTotal) {
  // b4 am's own .mbx of patchwork's base-extra-patches thread: 1/2, 2/2 and 3/2.
  const MailedSeries s = read("m3-b4am-output-extra-patch.mbx");
  ASSERT_EQ(s.patches.size(), 3u);
  EXPECT_EQ(s.patches[2].place, "v1 3/2");
  EXPECT_EQ(s.patches[2].note,
            "numbered 3/2, past the series' 2: applied after it, as b4 am and patchwork count it "
            "in the series");
  EXPECT_TRUE(s.left_out.empty());
}

TEST_F(MailedLessons, GitAmFileIsAppliedWhole) {
  // git format-patch of a 3-patch topic of git.git, then one unrelated commit's [PATCH].
  const MailedSeries s = read("gitam-series-plus-unrelated.mbox");
  EXPECT_TRUE(s.whole_file);
  EXPECT_EQ(places(s), (std::vector<std::string>{
                           "v1 1/3 [PATCH 1/3] commit-reach: reject cycles in contains walk",
                           "v1 2/3 [PATCH 2/3] ref-filter: memoize --contains with generations",
                           "v1 3/3 [PATCH 3/3] commit-reach: die on contains walk errors",
                           "v1 [PATCH] The 7th batch"}));
  // The mails' own bytes, as format-patch wrote them: the same files, the same build key.
  const std::string file = read_file(kMbox / "gitam-series-plus-unrelated.mbox");
  for (const auto& p : s.patches) EXPECT_NE(file.find(read_file(p.path)), std::string::npos);
  // b4 finds no series in mails without Message-IDs; said, and git's reading stands.
  expect_b4();
  EXPECT_NE(s.b4.find("wrote no patch"), std::string::npos) << s.b4;
}

TEST_F(MailedLessons, PatchworkCommaPrefixes) {
  const MailedSeries s = read("m2-pw-base-no-references.mbox");
  EXPECT_EQ(
      places(s),
      (std::vector<std::string>{
          "v2 1/2 [net,v2,1/2] net: ieee802154: remove explicit set skb->sk",
          "v2 2/2 [net,v2,2/2] net: ieee802154: fix net_device reference release too early"}));
}

TEST_F(MailedLessons, PartialRerollIsReconstitutedAsB4Does) {
  const MailedSeries s = read("m1-b4-trailers-followup-partial-reroll.mbox");
  EXPECT_EQ(places(s), (std::vector<std::string>{"v2 1/2 [PATCH v2 1/2] Simple test 1",
                                                 "v3 2/2 [PATCH v3 2/2] Simple test 2"}));
  EXPECT_EQ(s.patches[0].note, "taken from v2: v3 re-sent only 2/2 (a partial reroll)");
  expect_b4();
  EXPECT_EQ(s.patches[0].b4, "took it");
  EXPECT_EQ(s.patches[1].b4, "took it");
  // patchwork's bugs-mixed-versions: [PATCH 1/2], then [PATCH v2 2/2] in reply to it.
  const MailedSeries p = read("m2-pw-bugs-mixed-versions.mbox");
  EXPECT_EQ(places(p),
            (std::vector<std::string>{"v1 1/2 [PATCH 1/2] test: Add some lorem ipsum",
                                      "v2 2/2 [PATCH v2 2/2] test: Convert to Markdown"}));
}

TEST_F(MailedLessons, FollowUpWithoutReCarriesItsTrailersIn) {
  expect_b4();
  const MailedSeries s = read("m1-b4-trailers-followup-nore.mbox");
  ASSERT_EQ(s.patches.size(), 1u);
  EXPECT_EQ(s.patches[0].text_from, "b4 am");
  EXPECT_EQ(s.patches[0].trailers_from_replies,
            (std::vector<std::string>{
                "Reviewed-by: Followup Reviewer1 <followup-reviewer1@example.com>"}));
  ASSERT_EQ(s.left_out.size(), 1u);
  EXPECT_EQ(s.left_out[0].why,
            "a follow-up without Re: answering <orig-message@example.com> (no diff)");
  // The file git am applies carries the folded trailer.
  EXPECT_NE(read_file(s.patches[0].path)
                .find("Reviewed-by: Followup Reviewer1 <followup-reviewer1@example.com>"),
            std::string::npos);
}

TEST_F(MailedLessons, MercurialCoverLetterIsSaidToBeOne) {
  const MailedSeries s = read("m2-pw-mercurial-cover-letter.mbox");
  ASSERT_EQ(s.patches.size(), 2u);
  EXPECT_EQ(s.patches[1].place, "v1 2 of 2");
  ASSERT_EQ(s.left_out.size(), 1u);
  EXPECT_EQ(s.left_out[0].why, "the cover letter (v1 0 of 2)");
}

TEST_F(MailedLessons, ExtraPatchIsNamedByItsOwnNumbers) {
  const MailedSeries s = read("m2-pw-base-extra-patches.mbox");
  ASSERT_EQ(s.patches.size(), 3u);
  EXPECT_EQ(s.patches[2].place, "v1 3/2");
  EXPECT_EQ(s.patches[2].subject, "[PATCH 3/2] test: Remove Markdown formatting");
}

TEST_F(MailedLessons, OlderVersionsAreListed) {
  // patchwork's revision-threaded-to-patch: v1 0/2..2/2, v2 0/2..2/2 in reply to v1's 2/2.
  const MailedSeries s = read("m2-pw-revision-threaded-to-patch.mbox");
  EXPECT_EQ(s.version, "v2");
  ASSERT_EQ(s.left_out.size(), 4u);
  EXPECT_EQ(s.left_out[0].why, "the cover letter (v1 0/2)");
  EXPECT_EQ(s.left_out[1].why.substr(0, 28), "v1 1/2: replaced by v2 1/2 (");
  EXPECT_EQ(s.left_out[3].why, "the cover letter (v2 0/2)");
}

TEST_F(MailedLessons, IncompleteThreadIsRefusedThoughB4TakesIt) {
  // b4 am exits 0 with one patch ("Thread incomplete!"); the series has two.
  try {
    read("m2-pw-base-incomplete.mbox");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), (kMbox / "m2-pw-base-incomplete.mbox").string() +
                                         ": patch 2/2 of v1 is missing (the mbox has 1/2)");
  }
}

TEST_F(MailedLessons, RepliesTrailersFoldedWhereB4TookThePatch) {
  expect_b4();
  // b4's trailers-followup-with-cover: a review of 2/2 and one of the cover letter.
  const MailedSeries s = read("m1-b4-trailers-followup-with-cover.mbox");
  ASSERT_EQ(s.patches.size(), 2u);
  EXPECT_TRUE(s.patches[0].trailers_from_replies.empty());
  EXPECT_EQ(s.patches[0].text_from, "git mailsplit");
  EXPECT_EQ(s.patches[1].trailers_from_replies,
            (std::vector<std::string>{
                "Reviewed-by: Followup Reviewer1 <followup-reviewer1@example.com>"}));
  EXPECT_EQ(s.patches[1].text_from, "b4 am");
}

}  // namespace
}  // namespace isolab
