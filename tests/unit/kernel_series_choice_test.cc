// The series choice of kernel/series_choice.h on messages as lists carry them: subjects and
// threading as in the mbox files of tests/data/mbox (read from the files with git in
// process.MboxSeries.*).
#include <gtest/gtest.h>

#include "base/error.h"
#include "kernel/series_choice.h"

namespace isolab {
namespace {

MailMessage mail(const std::string& subject, bool diff = true, std::string id = "",
                 std::string reply_to = "") {
  MailMessage m;
  m.subject = subject;
  m.has_diff = diff;
  m.message_id = std::move(id);
  m.in_reply_to = std::move(reply_to);
  m.text = "text of " + subject;
  return m;
}

// Positions set as read_mbox sets them.
std::vector<MailMessage> numbered(std::vector<MailMessage> v) {
  for (std::size_t i = 0; i < v.size(); ++i) v[i].position = static_cast<int>(i) + 1;
  return v;
}

std::vector<std::string> subjects(const SeriesChoice& s) {
  std::vector<std::string> out;
  for (const auto& p : s.patches) out.push_back(p.mail->subject);
  return out;
}

std::string error_of(const std::vector<MailMessage>& m) {
  try {
    choose_series(m, "s.mbox");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SeriesChoice, NewestVersionInOrderWithoutCoverAndReplies) {
  const auto m = numbered({mail("[PATCH 1/2] a v1"), mail("[PATCH v2 0/3] cover", false),
                           mail("[PATCH v2 3/3] c"), mail("[PATCH v2 1/3] a"),
                           mail("Re: [PATCH v2 1/3] a", false), mail("[PATCH v2 2/3] b")});
  const SeriesChoice s = choose_series(m, "s.mbox");
  EXPECT_EQ(subjects(s),
            (std::vector<std::string>{"[PATCH v2 1/3] a", "[PATCH v2 2/3] b", "[PATCH v2 3/3] c"}));
  EXPECT_EQ(s.version, "v2");
  // Every other message is listed, in file order, with what it is.
  ASSERT_EQ(s.left_out.size(), 3u);
  EXPECT_EQ(s.left_out[0].why, "v1 1/2: an older version (the series is v2)");
  EXPECT_EQ(s.left_out[1].why, "the cover letter (v2 0/3)");
  EXPECT_EQ(s.left_out[2].why, "a reply");
}

TEST(SeriesChoice, PointRerollReplacesItsPatch) {
  // The shape of a thread with v10 1/6..6/6 and a maintainer-requested v10.1 3/6.
  std::vector<MailMessage> v;
  for (int i = 1; i <= 6; ++i) v.push_back(mail("[PATCH v10 " + std::to_string(i) + "/6] p"));
  v.push_back(mail("[PATCH v10.1 3/6] p rebased", true, "<r@x>"));
  v = numbered(v);
  const SeriesChoice s = choose_series(v, "s.mbox");
  ASSERT_EQ(s.patches.size(), 6u);
  EXPECT_EQ(s.patches[2].mail->subject, "[PATCH v10.1 3/6] p rebased");
  EXPECT_EQ(s.patches[2].note, "a point reroll (v10.1) of patch 3");
  ASSERT_EQ(s.left_out.size(), 1u);
  EXPECT_EQ(s.left_out[0].why,
            "v10 3/6: replaced by v10.1 3/6 (message 7 <r@x> '[PATCH v10.1 "
            "3/6] p rebased')");
}

TEST(SeriesChoice, PartialRerollIsReconstituted) {
  // b4's trailers-followup-partial-reroll.mbox: v2 1/2, 2/2, then v3 2/2 only.
  const auto m = numbered({mail("[PATCH v2 0/2] cover", false, "<c>"), mail("[PATCH v2 1/2] a"),
                           mail("[PATCH v2 2/2] b"), mail("[PATCH v3 2/2] b again")});
  const SeriesChoice s = choose_series(m, "s.mbox");
  EXPECT_EQ(subjects(s), (std::vector<std::string>{"[PATCH v2 1/2] a", "[PATCH v3 2/2] b again"}));
  EXPECT_EQ(s.patches[0].note, "taken from v2: v3 re-sent only 2/2 (a partial reroll)");
  EXPECT_EQ(s.version, "v3");
}

TEST(SeriesChoice, PatchesNumberedPastTheSeriesFollowIt) {
  // patchwork's base-extra-patches.mbox; b4 am and patchwork take all three.
  const auto m = numbered({mail("[PATCH 0/2] cover", false), mail("[PATCH 1/2] a"),
                           mail("[PATCH 2/2] b"), mail("[PATCH 3/2] c")});
  const SeriesChoice s = choose_series(m, "s.mbox");
  EXPECT_EQ(subjects(s),
            (std::vector<std::string>{"[PATCH 1/2] a", "[PATCH 2/2] b", "[PATCH 3/2] c"}));
  EXPECT_EQ(s.patches[2].note,
            "numbered 3/2, past the series' 2: applied after it, as b4 am and patchwork count it "
            "in the series");
}

TEST(SeriesChoice, APatchAddedToATotalExtendsTheSeries) {
  // b4 am's output of 1/3..3/3 with a [PATCH v4 4/4] added after it.
  const auto m = numbered({mail("[PATCH v4 1/3] a"), mail("[PATCH v4 2/3] b"),
                           mail("[PATCH v4 3/3] c"), mail("[PATCH v4 4/4] d")});
  const SeriesChoice s = choose_series(m, "s.mbox");
  ASSERT_EQ(s.patches.size(), 4u);
  EXPECT_EQ(s.patches[3].mail->subject, "[PATCH v4 4/4] d");
  EXPECT_EQ(s.patches[0].note, "numbered out of 3, the series has 4");
}

TEST(SeriesChoice, AGitAmFileIsTakenInFileOrder) {
  // A format-patch series followed by one unrelated [PATCH]: git am applies all four.
  const auto m = numbered({mail("[PATCH 1/3] a"), mail("[PATCH 2/3] b"), mail("[PATCH 3/3] c"),
                           mail("[PATCH] unrelated")});
  const SeriesChoice s = choose_series(m, "s.mbox");
  EXPECT_TRUE(s.whole_file);
  EXPECT_EQ(subjects(s), (std::vector<std::string>{"[PATCH 1/3] a", "[PATCH 2/3] b",
                                                   "[PATCH 3/3] c", "[PATCH] unrelated"}));
}

TEST(SeriesChoice, FollowUpWithoutReIsAReply) {
  // b4's trailers-followup-nore.mbox: the follow-up keeps the patch's subject, without Re:.
  const auto m = numbered({mail("[PATCH] Simple test", true, "<orig>"),
                           mail("[PATCH] Simple test", false, "<fw>", "<orig>")});
  const SeriesChoice s = choose_series(m, "s.mbox");
  ASSERT_EQ(s.patches.size(), 1u);
  ASSERT_EQ(s.left_out.size(), 1u);
  EXPECT_EQ(s.left_out[0].why, "a follow-up without Re: answering <orig> (no diff)");
}

TEST(SeriesChoice, InBodySubjectOnlyWhereTheMailsOwnIsNoPatch) {
  // git's list, 2023-12-03: an empty Subject, the patch's in the body after an in-body From.
  auto v = numbered({mail(""), mail("Re: [PATCH v2] t", false, "<r>", "<x>")});
  v[0].body_subject = "[PATCH v2] test-lib-functions.sh: fix test_grep fail message wording";
  SeriesChoice s = choose_series(v, "s.mbox");
  ASSERT_EQ(s.patches.size(), 1u);
  EXPECT_EQ(s.patches[0].note, "its place is read from its in-body Subject");
  // A numbered patch keeps its own place whatever its in-body Subject says.
  v = numbered({mail("[PATCH v2 1/2] a"), mail("[PATCH v2 2/2] b")});
  v[1].body_subject = "[PATCH] b, as first sent";
  s = choose_series(v, "s.mbox");
  EXPECT_EQ(subjects(s), (std::vector<std::string>{"[PATCH v2 1/2] a", "[PATCH v2 2/2] b"}));
}

TEST(SeriesChoice, MercurialCoverLetterIsNoPatch) {
  const auto m = numbered({mail("[PATCH 0 of 2] Sample Mercurial patches", false, "<c>"),
                           mail("[PATCH 1 of 2] a", true, "<1>", "<c>"),
                           mail("[PATCH 2 of 2] b", true, "<2>", "<c>")});
  const SeriesChoice s = choose_series(m, "s.mbox");
  ASSERT_EQ(s.patches.size(), 2u);
  EXPECT_EQ(s.left_out[0].why, "the cover letter (v1 0 of 2)");
}

TEST(SeriesChoice, OlderMultiPatchVersionIsListedNotDropped) {
  // A 9-patch v2 and a lone [PATCH v4]: the v4 is the series, each v2 patch is listed.
  std::vector<MailMessage> v;
  for (int i = 1; i <= 9; ++i) v.push_back(mail("[PATCH v2 " + std::to_string(i) + "/9] p"));
  v.push_back(mail("[PATCH v4] squashed"));
  v = numbered(v);
  const SeriesChoice s = choose_series(v, "s.mbox");
  EXPECT_EQ(subjects(s), (std::vector<std::string>{"[PATCH v4] squashed"}));
  ASSERT_EQ(s.left_out.size(), 9u);
  EXPECT_EQ(s.left_out[8].why, "v2 9/9: an older version (the series is v4)");
}

TEST(SeriesChoice, MalformedSeriesIsRefusedNamingTheMessage) {
  EXPECT_EQ(error_of(numbered({mail("[PATCH v2 0/3] c", false), mail("[PATCH v2 1/3] a"),
                               mail("[PATCH v2 3/3] c")})),
            "s.mbox: patch 2/3 of v2 is missing (the mbox has 1/3, 3/3)");
  EXPECT_EQ(error_of(numbered({mail("[PATCH 1/2] a", true, "<a1>"),
                               mail("[PATCH 1/2] a again", true, "<a2>"), mail("[PATCH 2/2] b")})),
            "s.mbox: patch 1/2 of v1 appears twice: message 1 <a1> '[PATCH 1/2] a' and message 2 "
            "<a2> '[PATCH 1/2] a again'");
  // A total that disagrees leaves the series a patch short.
  EXPECT_EQ(error_of(numbered(
                {mail("Re: [PATCH 1/2] a", false), mail("[PATCH 1/2] a"), mail("[PATCH 2/3] b")})),
            "s.mbox: patch 3/3 of v1 is missing (the mbox has 1/2, 2/3)");
  EXPECT_EQ(error_of(numbered({mail("[PATCH 1/1] a", false), mail("[PATCH 1/1] b")})),
            "s.mbox: message 1 '[PATCH 1/1] a' carries no diff and answers no message of the file");
  EXPECT_EQ(error_of(numbered({mail("Re: [PATCH 1/1] a"), mail("hello")})),
            "s.mbox: no patch among its 2 messages (a patch's subject starts [PATCH], [PATCH m/n] "
            "or [PATCH m of n])");
}

TEST(SeriesChoice, ASecondCopyOfOneMessageIsNoConflict) {
  // The same message twice (cross-posted to two lists, both in the download).
  const auto m = numbered({mail("[PATCH 1/2] a", true, "<a>"), mail("[PATCH 1/2] a", true, "<a>"),
                           mail("[PATCH 2/2] b", true, "<b>")});
  const SeriesChoice s = choose_series(m, "s.mbox");
  ASSERT_EQ(s.patches.size(), 2u);
  EXPECT_EQ(s.left_out[0].why, "a second copy of message 1 <a> '[PATCH 1/2] a'");
}

}  // namespace
}  // namespace isolab
