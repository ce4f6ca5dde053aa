// The mbox separator test of kernel/mbox_series.h. The subject prefixes are
// kernel_patch_subject_test.cc, the series choice kernel_series_choice_test.cc, real mbox files
// read with git and b4 process.MboxSeries.*.
#include <gtest/gtest.h>

#include "kernel/mbox_series.h"

namespace isolab {
namespace {

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
