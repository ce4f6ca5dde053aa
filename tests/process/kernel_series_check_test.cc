// process tier: a series checked against its base before any build (kernel/series_check.h,
// pipeline/apply_check.h), with real git on a small git tree: three commits made with git and
// written by `git format-patch`, whose second patch's context holds a line the base does not
// have. The check names patch 2 and its first failing hunk, for the mails, for the same series
// as bare diffs, and through `isolab run`, which refuses it before any kernel build.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "kernel/series_check.h"
#include "kernel/source.h"
#include "sys/process.h"

namespace fs = std::filesystem;

namespace isolab {
namespace {

// 40 numbered lines of a C-like file, line k reading "int v<k> = <k>;".
std::string numbered_lines(int n) {
  std::string s;
  for (int k = 1; k <= n; ++k) s += "int v" + std::to_string(k) + " = " + std::to_string(k) + ";\n";
  return s;
}

std::string replaced_line(std::string text, int k, const std::string& with) {
  const std::string old = "int v" + std::to_string(k) + " = " + std::to_string(k) + ";\n";
  const std::size_t at = text.find(old);
  return text.replace(at, old.size(), with + "\n");
}

class SeriesCheck : public ::testing::Test {
 protected:
  SeriesCheck()
      : runner_(make_real_runner()),
        dir_(fs::temp_directory_path() / ("isolab-series-check-" + std::to_string(::getpid()))),
        repo_(dir_ / "repo") {
    fs::remove_all(dir_);
    fs::create_directories(repo_ / "mm");
    git({"init", "-q"});
    write_file_atomic(repo_ / "mm" / "vmstat.c", numbered_lines(40));
    write_file_atomic(repo_ / "kernel" / "tick.c", numbered_lines(20));
    commit("base");
    base_ = head();
    // A change the base does not have, under the series (a rebase the mails did not follow).
    edit("mm/vmstat.c", 20, "int v20 = 2000; /* upstream */");
    commit("upstream: v20");
    upstream_ = head();
    edit("kernel/tick.c", 5, "int v5 = 50;");
    commit("tick: v5");
    edit("mm/vmstat.c", 21, "int v21 = 210;");  // its context holds the upstream line 20
    commit("vmstat: v21");
    edit("mm/vmstat.c", 35, "int v35 = 350;");
    commit("vmstat: v35");
    git({"format-patch", "-q", "-3", "-o", (dir_ / "mails").string()});
    for (const auto& e : fs::directory_iterator(dir_ / "mails")) mails_.push_back(e.path());
    std::sort(mails_.begin(), mails_.end());
    fs::create_directories(dir_ / "diffs");
    for (int i = 1; i <= 3; ++i) {
      const fs::path d = dir_ / "diffs" / (std::to_string(i) + ".diff");
      const std::string rev = "HEAD~" + std::to_string(3 - i);
      write_file_atomic(d, git({"diff", rev + "~1", rev}).out);
      diffs_.push_back(d);
    }
    git({"checkout", "-q", base_});
  }
  ~SeriesCheck() override { fs::remove_all(dir_); }

  ProcessResult git(std::vector<std::string> args) {
    ProcessSpec s;
    s.argv = {"git", "-C", repo_.string()};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.env = kIsolabGitEnv;
    ProcessResult r = runner_->run(s);
    EXPECT_TRUE(r.ok()) << argv_to_display(s.argv) << ": " << r.err;
    return r;
  }
  void edit(const std::string& file, int line, const std::string& with) {
    write_file_atomic(repo_ / file, replaced_line(read_file(repo_ / file), line, with));
  }
  void commit(const std::string& msg) {
    git({"add", "-A"});
    git({"commit", "-q", "-m", msg});
  }
  std::string head() {
    std::string h = git({"rev-parse", "HEAD"}).out;
    return h.substr(0, 40);
  }
  SourceTree tree() { return SourceTree{repo_, base_, "", "small tree"}; }

  std::string error_of(const std::vector<fs::path>& patches) {
    try {
      check_series_applies(tree(), patches, *runner_, dir_ / "work");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  std::unique_ptr<ProcessRunner> runner_;
  fs::path dir_, repo_;
  std::string base_, upstream_;
  std::vector<fs::path> mails_, diffs_;
};

TEST_F(SeriesCheck, MailsNamePatchTwoAndItsHunk) {
  ASSERT_EQ(mails_.size(), 3u);
  EXPECT_EQ(error_of(mails_),
            "patch 2 of 3 (" + mails_[1].string() +
                ", '[PATCH 2/3] vmstat: v21'): hunk #1 of mm/vmstat.c does not apply (at line 18)");
  EXPECT_FALSE(fs::exists(dir_ / "work"));
  // Nothing of the repository changed: no work tree file, no index entry.
  EXPECT_EQ(git({"status", "--porcelain"}).out, "");
  EXPECT_EQ(head(), base_);
}

TEST_F(SeriesCheck, BareDiffsNamePatchTwoAndItsHunk) {
  EXPECT_EQ(error_of(diffs_), "patch 2 of 3 (" + diffs_[1].string() +
                                  "): hunk #1 of mm/vmstat.c does not apply (at line 18)");
}

TEST_F(SeriesCheck, ASeriesThatAppliesPasses) {
  // Against the commit the mails were made on, all three apply, each on the one before.
  SourceTree t = tree();
  t.base_commit = upstream_;
  EXPECT_NO_THROW(check_series_applies(t, mails_, *runner_, dir_ / "work"));
  EXPECT_NO_THROW(check_series_applies(t, diffs_, *runner_, dir_ / "work"));
  EXPECT_EQ(git({"status", "--porcelain"}).out, "");
}

TEST_F(SeriesCheck, IsolabRunRefusesBeforeAnyBuild) {
  const fs::path spec = dir_ / "spec.json";
  std::string patches;
  for (const auto& m : mails_)
    patches += std::string(patches.empty() ? "" : ", ") + "\"" + m.string() + "\"";
  write_file_atomic(spec, R"({"name": "apply-check", "kernel": {"source": {"git": ")" +
                              repo_.string() + R"(", "ref": ")" + base_ +
                              R"("}, "base_config": "tinyconfig"},
  "variants": [{"name": "vanilla", "patches": []}, {"name": "patched", "patches": [)" +
                              patches +
                              R"(]}],
  "guest": {"cmdline": "nohz_full=1 rcu_nocbs=1", "vcpus": 2, "memory_mib": 256},
  "workloads": [{"name": "latency", "tool": "cyclictest", "cpus": "isolated", "duration_s": 1}],
  "repetitions": 1, "warmup_repetitions": 0})");
  ProcessSpec s;
  s.argv = {ISOLAB_BINARY,
            "run",
            spec.string(),
            "--cache-dir",
            (dir_ / "cache").string(),
            "--results-dir",
            (dir_ / "results").string(),
            "--progress",
            "text"};
  const auto t0 = std::chrono::steady_clock::now();
  ProcessResult r = runner_->run(s);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.err.find("variant patched: patch 2 of 3 (" + mails_[1].string() +
                       ", '[PATCH 2/3] vmstat: v21'): hunk #1 of mm/vmstat.c does not apply (at "
                       "line 18); nothing was built"),
            std::string::npos)
      << r.err;
  // No kernel was configured or built, and no run directory was made.
  EXPECT_FALSE(fs::exists(dir_ / "cache" / "build"));
  EXPECT_FALSE(fs::exists(dir_ / "cache" / "kernels"));
  EXPECT_FALSE(fs::exists(dir_ / "results"));
  std::cout << "isolab run refused the series in " << seconds << " s\n";
}

}  // namespace
}  // namespace isolab
