// The subject prefixes of kernel/patch_subject.h, on subjects as the lists and tools write them
// (the subjects of the mbox files in tests/data/mbox and of their sources).
#include <gtest/gtest.h>

#include "kernel/patch_subject.h"

namespace isolab {
namespace {

TEST(PatchSubject, PrefixTags) {
  auto p = parse_patch_subject("[RFC PATCH v4 02/10] mm: x");
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->reply);
  EXPECT_EQ(p->version, 4);
  EXPECT_EQ(p->index, 2);
  EXPECT_EQ(p->total, 10);
  EXPECT_TRUE(p->numbered);
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
  EXPECT_FALSE(p->numbered);
  p = parse_patch_subject("[PATCH 6.1.y] backport");  // a stable tag is not a version
  ASSERT_TRUE(p);
  EXPECT_EQ(p->version, 1);
  EXPECT_FALSE(parse_patch_subject("[syzbot] WARNING in vmstat_update"));
  EXPECT_FALSE(parse_patch_subject("mm/vmstat: no prefix"));
  EXPECT_TRUE(parse_patch_subject("Fwd: RE: [PATCH 1/2] x")->reply);
  // git's t5100 sample: the version after the position.
  p = parse_patch_subject("[PATCH 3/3 v2] Xyzzy");
  ASSERT_TRUE(p);
  EXPECT_EQ(position_text(*p), "v2 3/3");
  // A list tag before the prefix (git's t5100 sample.mbox).
  EXPECT_TRUE(parse_patch_subject("[Navy-patches] [PATCH] x"));
}

TEST(PatchSubject, PointRerollIsAVersionWithARevision) {
  // linux-xfs, 2021-01-26: a reroll of patch 1 of a 3-patch series.
  auto p = parse_patch_subject("[PATCH v2.1 1/3] xfs: increase the default parallelism levels");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->version, 2);
  EXPECT_EQ(p->revision, 1);
  EXPECT_EQ(p->index, 1);
  EXPECT_EQ(p->total, 3);
  EXPECT_EQ(position_text(*p), "v2.1 1/3");
  p = parse_patch_subject("[patch V2.1 07/20] x86/copy_mc: Use EX_TYPE_DEFAULT_MCE_SAFE");
  ASSERT_TRUE(p);
  EXPECT_EQ(version_text(*p), "v2.1");
  p = parse_patch_subject("[PATCH v10.1 3/6] x");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->version, 10);
  EXPECT_EQ(p->revision, 1);
  EXPECT_FALSE(parse_patch_subject("[PATCH v10.x 3/6] x")->revision);
}

TEST(PatchSubject, PatchworkCommaPrefixes) {
  // patchwork's tests/data/series/base-no-references.mbox
  auto p = parse_patch_subject("[net,v2,1/2] net: ieee802154: remove explicit set skb->sk");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->version, 2);
  EXPECT_EQ(p->index, 1);
  EXPECT_EQ(p->total, 2);
  p = parse_patch_subject("[v3,02/11] ext4: rename and extend ext4_block_truncate_page()");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->version, 3);
  EXPECT_EQ(p->index, 2);
  // A comma after PATCH, and patchwork's "[Patch 2/2]:" (base-no-references-no-cover.mbox).
  EXPECT_EQ(parse_patch_subject("[PATCH,v2,2/2] x")->index, 2);
  EXPECT_EQ(parse_patch_subject("[Patch 2/2]: powerpc/hotplug/mm: Fix")->index, 2);
}

TEST(PatchSubject, MercurialMOfN) {
  // patchwork's tests/data/series/mercurial-cover-letter.mbox (hg email, patchbomb)
  auto cover = parse_patch_subject("[PATCH 0 of 2] Sample Mercurial patches");
  ASSERT_TRUE(cover);
  EXPECT_EQ(cover->index, 0);
  EXPECT_EQ(cover->total, 2);
  EXPECT_TRUE(cover->of_form);
  EXPECT_EQ(position_text(*cover), "v1 0 of 2");
  auto p = parse_patch_subject("[PATCH 2 of 2] tests: work around FreeBSD's unzip");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->index, 2);
  EXPECT_EQ(p->total, 2);
  // "of" alone, or "m of" without n, is no position.
  EXPECT_FALSE(parse_patch_subject("[PATCH 1 of] x")->numbered);
}

TEST(PatchSubject, ExtraPatchKeepsItsNumbers) {
  // patchwork's base-extra-patches.mbox: a patch sent after a 2-patch series.
  auto p = parse_patch_subject("[PATCH 3/2] test: Remove Markdown formatting");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->index, 3);
  EXPECT_EQ(p->total, 2);
  EXPECT_TRUE(p->extra());
  EXPECT_EQ(position_text(*p), "v1 3/2");
}

}  // namespace
}  // namespace isolab
