// The robot checks' output parsers (kernel/robot_checks.h) on real output: checkpatch.pl of
// linux-source-6.1 on patches of this repository, checkincludes.pl on a file that includes a
// header twice. robot_checks itself runs in vm.KernelBuildWarning.* on a real source tree.
#include <gtest/gtest.h>

#include "kernel/robot_checks.h"

namespace isolab {
namespace {

TEST(RobotChecks, CheckpatchTerseShowfileLines) {
  // `checkpatch.pl --no-tree --terse --showfile --show-types --no-summary` on
  // patches/madvise-revert-cond-resched and tests/data/kernel/planted-warning.
  const auto w = parse_checkpatch(
      ":445: WARNING:COMMIT_LOG_LONG_LINE: Possible unwrapped commit description (prefer a "
      "maximum 75 chars per line)\n"
      "mm/vmstat.c:2015: ERROR:MISSING_SIGN_OFF: Missing Signed-off-by: line(s)\n"
      "total: 1 errors, 0 warnings, 9 lines checked\n",
      "0001-x.patch");
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].file, "(commit message)");
  EXPECT_EQ(w[0].line, 445);
  EXPECT_EQ(w[0].klass, "checkpatch:COMMIT_LOG_LONG_LINE");
  EXPECT_EQ(w[0].message,
            "0001-x.patch: WARNING: Possible unwrapped commit description (prefer a maximum 75 "
            "chars per line)");
  EXPECT_EQ(w[1].file, "mm/vmstat.c");
  EXPECT_EQ(w[1].line, 2015);
  EXPECT_EQ(w[1].klass, "checkpatch:MISSING_SIGN_OFF");
  EXPECT_EQ(w[1].message, "0001-x.patch: ERROR: Missing Signed-off-by: line(s)");
  EXPECT_TRUE(parse_checkpatch("", "p").empty());
}

TEST(RobotChecks, CheckincludesLines) {
  // As the kernel test robot quoted it for mm/madvise.c, and the script's all-clear line.
  const auto w = parse_checkincludes(
      "mm/madvise.c: linux/swap.h is included more than once.\nNo duplicate includes found.\n");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].file, "mm/madvise.c");
  EXPECT_EQ(w[0].line, 0);
  EXPECT_EQ(w[0].klass, "includecheck");
  EXPECT_EQ(w[0].message, "linux/swap.h is included more than once");
  // Guest-independent but still untrusted text: control bytes do not survive.
  const auto odd = parse_checkincludes("a.c: x\x1b[2J.h is included more than once.\n");
  ASSERT_EQ(odd.size(), 1u);
  EXPECT_EQ(odd[0].message.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace isolab
