#include <gtest/gtest.h>

#include "base/error.h"
#include "base/files.h"
#include "kernel/build_log.h"

using namespace isolab;

namespace {

const std::string kData = std::string(ISOLAB_TEST_DATA_DIR) + "/kernel/";

// Captured with tests/data/kernel/patch-fail/0001-mm-vmstat-two-hunks.patch against a
// linux-source-6.1 mm/vmstat.c whose quiet_vmstat() context had drifted (hunk #2).
TEST(KernelPatchFailure, GnuPatchDryRunNamesHunk) {
  auto f = parse_patch_dry_run(read_file(kData + "patch-fail/patch-dry-run-hunk2.txt"));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->file, "mm/vmstat.c");
  EXPECT_EQ(f->hunk, 2);
  EXPECT_EQ(f->line, 1985);
  EXPECT_EQ(f->describe(), "hunk #2 of mm/vmstat.c does not apply (at line 1985)");
}

TEST(KernelPatchFailure, GitApplyCheckNamesFileAndLine) {
  auto f = parse_git_apply_check(read_file(kData + "patch-fail/git-apply-check-hunk2.txt"));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->file, "mm/vmstat.c");
  EXPECT_EQ(f->line, 1984);
  EXPECT_EQ(f->hunk, 0);
  // git am prints the same "patch failed" line.
  auto am = parse_git_apply_check(read_file(kData + "patch-fail/git-am-hunk2.txt"));
  ASSERT_TRUE(am.has_value());
  EXPECT_EQ(am->line, 1984);
}

TEST(KernelPatchFailure, HunkNumberFromGitLine) {
  std::string patch = read_file(kData + "patch-fail/0001-mm-vmstat-two-hunks.patch");
  EXPECT_EQ(hunk_number_at(patch, "mm/vmstat.c", 1984), 2);
  EXPECT_EQ(hunk_number_at(patch, "mm/vmstat.c", 1861), 1);
  EXPECT_EQ(hunk_number_at(patch, "mm/vmstat.c", 1000), 0);
  EXPECT_EQ(hunk_number_at(patch, "mm/other.c", 1984), 0);
  std::string plain = read_file(kData + "patch-fail/plain-two-hunks.diff");
  EXPECT_EQ(hunk_number_at(plain, "mm/vmstat.c", 1984), 2);
}

TEST(KernelPatchFailure, MissingFile) {
  auto p = parse_patch_dry_run(read_file(kData + "patch-fail/patch-dry-run-missing-file.txt"));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->reason, "file to patch not found (patch input line 14)");
  auto g = parse_git_apply_check(read_file(kData + "patch-fail/git-apply-check-missing-file.txt"));
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->describe(), "mm/vmstat.c: file not found");
}

TEST(KernelPatchFailure, AlreadyApplied) {
  auto p = parse_patch_dry_run(read_file(kData + "patch-fail/patch-dry-run-already-applied.txt"));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->describe(), "mm/vmstat.c: is already applied (reversed or previously applied)");
}

TEST(KernelPatchFailure, CleanOutputIsNoFailure) {
  EXPECT_FALSE(parse_patch_dry_run("checking file mm/vmstat.c\n").has_value());
  EXPECT_FALSE(
      parse_git_apply_check("Checking patch mm/vmstat.c...\nApplied patch mm/vmstat.c cleanly.\n")
          .has_value());
  EXPECT_FALSE(parse_patch_dry_run(std::string(100000, '\xff')).has_value());
}

TEST(KernelBuildError, CompilerErrorBeforeMakeLines) {
  std::string log =
      "  CC      mm/vmstat.o\n"
      "mm/vmstat.c: In function 'quiet_vmstat':\n"
      "mm/vmstat.c:1990:9: warning: unused variable 'x' [-Wunused-variable]\n"
      "make[3]: *** [scripts/Makefile.build:250: mm/vmstat.o] Error 1\n"
      "mm/vmstat.c:1993:17: error: 'foo' undeclared (first use in this function)\n";
  EXPECT_EQ(first_build_error(log),
            "mm/vmstat.c:1993:17: error: 'foo' undeclared (first use in this function)");
}

TEST(KernelBuildError, LinkerAndMakeFallbacks) {
  EXPECT_EQ(first_build_error("  LD      vmlinux.o\nld: mm/vmstat.o: in function `x':\n"
                              "vmstat.c:(.text+0x1): undefined reference to `bar'\n"),
            "vmstat.c:(.text+0x1): undefined reference to `bar'");
  EXPECT_EQ(first_build_error("make[1]: *** No rule to make target 'bzImagex'.  Stop.\n"),
            "make[1]: *** No rule to make target 'bzImagex'.  Stop.");
  EXPECT_EQ(first_build_error("  CC      init/main.o\n  LD      vmlinux\n"), "");
}

}  // namespace

namespace {

// A real failing kernel build: linux-source-6.1, tinyconfig + kernel-configs/base.config +
// isolation.config, with a patch adding an undeclared identifier to vmstat_update() (the log
// from "make ... bzImage" on, gcc's UTF-8 quotes as printed without LC_ALL=C).
TEST(KernelBuildError, RealKernelBuildLog) {
  std::string log = read_file(kData + "build-fail/vmstat-undeclared.log");
  EXPECT_EQ(first_build_error(log, "/root/.cache/isolab/worktrees/0f01b12c4eee3384"),
            "mm/vmstat.c:1932:9: error: 'isolab_undeclared_counter' undeclared (first use in "
            "this function)");
  EXPECT_EQ(first_build_error(log),
            "/root/.cache/isolab/worktrees/0f01b12c4eee3384/mm/vmstat.c:1932:9: error: "
            "'isolab_undeclared_counter' undeclared (first use in this function)");
}

}  // namespace

namespace {

// The real log of building tests/data/kernel/planted-warning on the cached default
// vanilla build (only mm/vmstat.c recompiled; gcc 12 prints UTF-8 quotes even in the C locale).
TEST(KernelBuildWarnings, PlantedUnusedVariableFromTheRealLog) {
  const std::string log = read_file(kData + "build-warning/planted-6.1.log");
  const std::string src = build_log_source_dir(log);
  EXPECT_EQ(src, "/root/.cache/isolab/worktrees/0f01b12c4eee3384");
  auto ws = parse_build_warnings(log, src);
  std::vector<BuildWarning> compiler;
  for (const auto& w : ws)
    if (w.klass != "kconfig") compiler.push_back(w);
  ASSERT_EQ(compiler.size(), 1u);
  const BuildWarning& w = compiler[0];
  EXPECT_EQ(w.file, "mm/vmstat.c");
  EXPECT_EQ(w.line, 2011);
  EXPECT_EQ(w.column, 13);
  EXPECT_EQ(w.klass, "-Wunused-variable");
  EXPECT_EQ(w.message, "unused variable 'planted_unused'");
  EXPECT_EQ(w.describe(),
            "mm/vmstat.c:2011:13: warning: unused variable 'planted_unused' [-Wunused-variable]");
  // Kconfig's own warnings of the same log (".config:1330:warning: override: ...").
  std::size_t kconfig = 0;
  for (const auto& k : ws)
    if (k.klass == "kconfig") {
      ++kconfig;
      EXPECT_EQ(k.file, ".config");
      EXPECT_GT(k.line, 0);
      EXPECT_EQ(k.message.rfind("override: ", 0), 0u) << k.message;
    }
  EXPECT_GE(kconfig, 3u);
  // Without the source dir the absolute path stays (nothing is guessed).
  EXPECT_EQ(parse_build_warnings(log).back().file.rfind("/root/.cache/isolab/worktrees/", 0), 0u);
}

TEST(KernelBuildWarnings, VanillaLogHasNoCompilerWarning) {
  const std::string log = read_file(kData + "build-warning/vanilla-6.1.log");
  for (const auto& w : parse_build_warnings(log, build_log_source_dir(log)))
    EXPECT_EQ(w.klass, "kconfig") << w.describe();
}

TEST(KernelBuildWarnings, JsonRoundTripAndErrors) {
  BuildWarning w{"mm/vmstat.c", 2011, 13, "-Wunused-variable", "unused variable 'x'"};
  EXPECT_EQ(build_warning_from_json(build_warning_to_json(w)), w);
  EXPECT_THROW(build_warning_from_json({{"file", "a.c"}}), Error);
}

TEST(KernelBuildWarnings, TouchedFilesOfRealPatches) {
  const std::string planted = read_file(
      kData + "planted-warning/0001-mm-vmstat-PLANTED-WARNING-an-unused-variable-in-vmst.patch");
  EXPECT_EQ(patch_touched_files(planted), (std::vector<std::string>{"mm/vmstat.c"}));
  const std::string two = read_file(kData + "patch-fail/plain-two-hunks.diff");
  EXPECT_EQ(patch_touched_files(two), (std::vector<std::string>{"mm/vmstat.c"}));
  EXPECT_EQ(patch_touched_files("--- a/old.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"),
            (std::vector<std::string>{"old.c"}));
}

}  // namespace
// Kbuild steps, the unit of kernel build progress: a real rebuild of 6.1 after a one-line
// change to mm/vmstat.c (51 steps: CC, AR, LD, GEN, UPD, ...), and the failing build's log,
// whose gcc diagnostics and make lines are not steps.
TEST(KernelBuildSteps, CountsKbuildActionLines) {
  EXPECT_EQ(count_build_steps(read_file(kData + "build-ok/rebuild-vmstat-6.1.log")), 51u);
  EXPECT_EQ(count_build_steps(read_file(kData + "build-fail/vmstat-undeclared.log")), 16u);
  EXPECT_EQ(count_build_steps("  CC      mm/vmstat.o\n  CC [M]  x.o\n  Warning: x\n   CC x\n"), 2u);
}
