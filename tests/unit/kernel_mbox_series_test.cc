// The subject prefixes and the series choice of kernel/mbox_series.h, on subjects as mailing
// lists carry them. Reading real mbox files with git is process.MboxSeries.*.
#include <gtest/gtest.h>

#include "base/error.h"
#include "kernel/mbox_series.h"

namespace isolab {
namespace {

MailMessage mail(const std::string& subject, bool diff = true) {
  return {subject, diff, "text of " + subject};
}

std::string error_of(const std::vector<MailMessage>& m) {
  try {
    select_series(m, "s.mbox");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(PatchSubject, PrefixTags) {
  auto p = parse_patch_subject("[RFC PATCH v4 02/10] mm: x");
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->reply);
  EXPECT_EQ(p->version, 4);
  EXPECT_EQ(p->index, 2);
  EXPECT_EQ(p->total, 10);
  p = parse_patch_subject("Re: [PATCH net-next v3 0/5] cover");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->reply);
  EXPECT_EQ(p->index, 0);
  p = parse_patch_subject("[PATCHv2 1/3] old style");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->version, 2);
  EXPECT_EQ(p->index, 1);
  p = parse_patch_subject("[PATCH] tick/sched: one patch");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->version, 1);
  EXPECT_EQ(p->index, 1);
  EXPECT_EQ(p->total, 1);
  p = parse_patch_subject("[PATCH 6.1.y] backport");  // a stable tag is not a version
  ASSERT_TRUE(p);
  EXPECT_EQ(p->version, 1);
  EXPECT_FALSE(parse_patch_subject("[syzbot] WARNING in vmstat_update"));
  EXPECT_FALSE(parse_patch_subject("mm/vmstat: no prefix"));
  EXPECT_TRUE(parse_patch_subject("Fwd: RE: [PATCH 1/2] x")->reply);
}

TEST(PatchSubject, BadNumbersAreNotAPosition) {
  auto p = parse_patch_subject("[PATCH 4/3] x");  // m > n
  ASSERT_TRUE(p);
  EXPECT_EQ(p->index, 1);
  EXPECT_EQ(p->total, 1);
}

TEST(SeriesChoice, NewestVersionInOrderWithoutCoverAndReplies) {
  auto s = select_series(
      {mail("[PATCH 1/2] a v1"), mail("[PATCH v2 0/3] cover", false), mail("[PATCH v2 3/3] c"),
       mail("[PATCH v2 1/3] a"), mail("Re: [PATCH v2 1/3] a"), mail("[PATCH v2 2/3] b")},
      "s.mbox");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].subject, "[PATCH v2 1/3] a");
  EXPECT_EQ(s[1].subject, "[PATCH v2 2/3] b");
  EXPECT_EQ(s[2].subject, "[PATCH v2 3/3] c");
  EXPECT_EQ(s[2].text, "text of [PATCH v2 3/3] c");
  EXPECT_EQ(s[0].at.version, 2);
}

TEST(SeriesChoice, MalformedSeriesIsRefusedNamingThePatch) {
  EXPECT_EQ(error_of({mail("[PATCH v2 1/3] a"), mail("[PATCH v2 3/3] c")}),
            "s.mbox: patch 2/3 of v2 is missing (the mbox has 1/3, 3/3)");
  EXPECT_EQ(error_of({mail("[PATCH 1/2] a"), mail("[PATCH 1/2] a again"), mail("[PATCH 2/2] b")}),
            "s.mbox: patch 1/2 of v1 appears twice: '[PATCH 1/2] a' and '[PATCH 1/2] a again'");
  EXPECT_EQ(error_of({mail("[PATCH 1/2] a"), mail("[PATCH 2/3] b")}),
            "s.mbox: '[PATCH 2/3] b' is numbered out of 3, the series' first patch out of 2");
  EXPECT_EQ(error_of({mail("[PATCH 1/1] a", false)}), "s.mbox: '[PATCH 1/1] a' carries no diff");
  EXPECT_EQ(error_of({mail("Re: [PATCH 1/1] a"), mail("hello")}),
            "s.mbox: no patch among its 2 messages (a patch's subject starts [PATCH m/n])");
}

TEST(SeriesChoice, OnlyTheChosenVersionMustBeWhole) {
  // v1 lacks 2/3, v2 is whole: v2 is taken and v1's gap is not an error.
  auto s = select_series(
      {mail("[PATCH 1/3] a"), mail("[PATCH v2 1/2] a"), mail("[PATCH v2 2/2] b")}, "s.mbox");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].subject, "[PATCH v2 2/2] b");
}

TEST(MboxSeparators, TwoMessagesMakeASeries) {
  EXPECT_FALSE(
      is_mbox_series("From 5d7f1e95 Mon Sep 17 00:00:00 2001\nFrom: a\n\nFrom the "
                     "body, a paragraph\n"));
  EXPECT_FALSE(is_mbox_series("diff --git a/x b/x\n"));
  EXPECT_TRUE(
      is_mbox_series("From 5d7f Mon Sep 17 00:00:00 2001\nSubject: a\n\nbody\n\n"
                     "From 6e8a Mon Sep 17 00:00:00 2001\nSubject: b\n"));
  // format-patch files concatenated without a blank line between them.
  EXPECT_TRUE(
      is_mbox_series("From 5d7f Mon Sep 17 00:00:00 2001\nSubject: a\n\n+x\n"
                     "From 6e8a Mon Sep 17 00:00:00 2001\n"));
  // Body lines that start with "From " but carry no date.
  EXPECT_FALSE(is_mbox_series("From 5d7f Mon Sep 17 00:00:00 2001\n\nFrom 10 runs on 2 CPUs\n"));
}

}  // namespace
}  // namespace isolab
