// Real git and GNU patch against a small repository: patch application per variant, and the
// error for a patch that does not apply names the patch file, the hunk and the line.
#include <gtest/gtest.h>

#include <fstream>

#include "base/error.h"
#include "base/files.h"
#include "kernel/kernel.h"
#include "kernel/source.h"
#include "sys/process.h"

namespace fs = std::filesystem;
using namespace isolab;

namespace {

class KernelPatch : public ::testing::Test {
 protected:
  void SetUp() override {
    runner_ = make_real_runner();
    dir_ = fs::temp_directory_path() / ("isolab-kernel-patch-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "repo/mm");
    repo_ = dir_ / "repo";
    write_lines(repo_ / "mm/vmstat.c", {});
    git({"init", "-q"});
    git({"add", "-A"});
    git({"commit", "-q", "-m", "base"});
    // Patch 1 changes lines 100 and 2000 (two hunks); patch 2 a plain diff on line 500.
    write_lines(repo_ / "mm/vmstat.c", {{100, "changed 100"}, {2000, "changed 2000"}});
    git({"commit", "-q", "-a", "-m", "mm/vmstat: two hunks"});
    git({"format-patch", "-q", "-1", "-o", (dir_ / "patches").string()});
    patch1_ = dir_ / "patches/0001-mm-vmstat-two-hunks.patch";
    write_lines(repo_ / "mm/vmstat.c", {{100, "changed 100"}, {2000, "changed 2000"}, {500, "p2"}});
    plain_ = dir_ / "patches/0002-plain.diff";
    write_file_atomic(plain_, git({"diff"}).out);
    git({"checkout", "-q", "-f", "HEAD~1"});
    git({"branch", "-q", "-f", "main"});
    git({"checkout", "-q", "main"});
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Lines "line N" for N in 1..3000, with the given replacements.
  void write_lines(const fs::path& p, const std::map<int, std::string>& repl) {
    std::string s;
    for (int i = 1; i <= 3000; ++i) {
      auto it = repl.find(i);
      s += (it == repl.end() ? "line " + std::to_string(i) : it->second) + "\n";
    }
    write_file_atomic(p, s);
  }
  ProcessResult git(std::vector<std::string> args) {
    ProcessSpec spec;
    spec.argv = {"git", "-C", repo_.string()};
    for (auto& a : args) spec.argv.push_back(a);
    spec.env = kIsolabGitEnv;
    auto r = runner_->run(spec);
    EXPECT_TRUE(r.ok()) << argv_to_display(spec.argv) << ": " << r.err;
    return r;
  }
  SourceContext ctx() { return SourceContext{dir_ / "cache", *runner_, {}}; }
  SourceTree source() {
    KernelSourceSpec s;
    s.kind = KernelSourceSpec::Kind::git;
    s.git = repo_.string();
    s.ref = "main";
    return prepare_source(s, ctx());
  }

  std::unique_ptr<ProcessRunner> runner_;
  fs::path dir_, repo_, patch1_, plain_;
};

TEST_F(KernelPatch, AppliesMboxAndPlainDiffAndRemembersTheVariant) {
  SourceTree src = source();
  EXPECT_EQ(src.tree_id.size(), 40u);
  const fs::path wt = dir_ / "cache/worktrees/slot";
  std::string c1 = checkout_variant(src, wt, {patch1_, plain_},
                                    {sha256_file(patch1_), sha256_file(plain_)}, ctx());
  EXPECT_NE(c1, src.base_commit);
  std::string text = read_file(wt / "mm/vmstat.c");
  EXPECT_NE(text.find("\nchanged 2000\n"), std::string::npos);
  EXPECT_NE(text.find("\np2\n"), std::string::npos);
  // Back to vanilla, then the same patch set again: the remembered commit, same id.
  EXPECT_EQ(checkout_variant(src, wt, {}, {}, ctx()), src.base_commit);
  EXPECT_EQ(read_file(wt / "mm/vmstat.c").find("changed"), std::string::npos);
  EXPECT_EQ(checkout_variant(src, wt, {patch1_, plain_},
                             {sha256_file(patch1_), sha256_file(plain_)}, ctx()),
            c1);
}

TEST_F(KernelPatch, UnchangedFilesKeepTheirMtimeAcrossVariants) {
  write_file_atomic(repo_ / "mm/other.c", "int x;\n");
  git({"add", "-A"});
  git({"commit", "-q", "-m", "other"});
  SourceTree src = source();
  const fs::path wt = dir_ / "cache/worktrees/slot";
  checkout_variant(src, wt, {}, {}, ctx());
  auto other_before = fs::last_write_time(wt / "mm/other.c");
  auto vmstat_before = fs::last_write_time(wt / "mm/vmstat.c");
  ::usleep(20000);
  checkout_variant(src, wt, {patch1_}, {sha256_file(patch1_)}, ctx());
  EXPECT_EQ(fs::last_write_time(wt / "mm/other.c"), other_before);  // make will not rebuild it
  EXPECT_GT(fs::last_write_time(wt / "mm/vmstat.c"), vmstat_before);
}

TEST_F(KernelPatch, PatchThatDoesNotApplyNamesFileHunkAndLine) {
  // Upstream drift inside hunk #2's context (hunk 2 covers lines 1997..2003).
  write_lines(repo_ / "mm/vmstat.c", {{2001, "upstream moved on"}});
  git({"commit", "-q", "-a", "-m", "drift"});
  SourceTree src = source();
  const fs::path wt = dir_ / "cache/worktrees/slot";
  try {
    checkout_variant(src, wt, {patch1_}, {sha256_file(patch1_)}, ctx());
    FAIL() << "patch applied";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              patch1_.string() + ": hunk #2 of mm/vmstat.c does not apply (at line 1997)");
  }
  // git am was aborted: the worktree is clean and usable for the next variant.
  EXPECT_EQ(checkout_variant(src, wt, {}, {}, ctx()), src.base_commit);
}

TEST_F(KernelPatch, EnsureKernelPrefixesVariantAndStep) {
  write_lines(repo_ / "mm/vmstat.c", {{2001, "upstream moved on"}});
  git({"commit", "-q", "-a", "-m", "drift"});
  KernelRequest req;
  req.source.kind = KernelSourceSpec::Kind::git;
  req.source.git = repo_.string();
  req.source.ref = "main";
  req.patches = {plain_, patch1_};
  req.variant_name = "patched";
  KernelEnv env{dir_ / "cache", *runner_};
  env.log_dir = dir_ / "logs";
  try {
    ensure_kernel(req, env);
    FAIL() << "no error";
  } catch (const Error& e) {
    // The plain diff (line 500) applies; the mbox patch after it fails at its hunk #2.
    EXPECT_EQ(std::string(e.what()), "variant patched: patch: " + patch1_.string() +
                                         ": hunk #2 of mm/vmstat.c does not apply (at line 1997)");
  }
}

TEST_F(KernelPatch, MissingPatchFile) {
  KernelRequest req;
  req.source.kind = KernelSourceSpec::Kind::git;
  req.source.git = repo_.string();
  req.patches = {dir_ / "patches/nope.patch"};
  req.variant_name = "b";
  KernelEnv env{dir_ / "cache", *runner_};
  try {
    ensure_kernel(req, env);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "variant b: patch: " + (dir_ / "patches/nope.patch").string() +
                                         ": patch file not found");
  }
}

TEST(KernelMbox, Detection) {
  EXPECT_TRUE(is_mbox_patch("From 1234 Mon Sep 17 00:00:00 2001\nFrom: a\n"));
  EXPECT_TRUE(is_mbox_patch("\nFrom: a <a@b>\nSubject: x\n\ndiff --git a/x b/x\n"));
  EXPECT_FALSE(is_mbox_patch("diff --git a/x b/x\n--- a/x\n+++ b/x\n"));
  EXPECT_FALSE(is_mbox_patch("--- a/x\n+++ b/x\n@@ -1 +1 @@\n"));
}

}  // namespace
