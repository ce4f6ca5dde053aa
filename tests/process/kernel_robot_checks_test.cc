// robot_checks() against a real git repository: a source without all of the kernel's scripts
// is an error that leaves no work directory behind (the scripts it did find were copied there
// first), and with both of its checks switched off it runs
// nothing.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "base/files.h"
#include "kernel/robot_checks.h"
#include "sys/process.h"

namespace isolab {
namespace {

namespace fs = std::filesystem;

struct Repo {
  fs::path root;
  std::string commit;
};

// A one-commit git repository with checkpatch.pl and its data files, but no checkincludes.pl.
Repo repo_without_scripts(const fs::path& root, ProcessRunner& runner) {
  fs::remove_all(root);
  fs::create_directories(root / "scripts");
  write_file_atomic(root / "README", "not a kernel\n");
  for (const char* f : {"checkpatch.pl", "spelling.txt", "const_structs.checkpatch"})
    write_file_atomic(root / "scripts" / f, "# stand-in\n");
  auto git = [&](std::vector<std::string> args) {
    ProcessSpec ps;
    ps.argv = {"git", "-C", root.string(), "-c", "user.name=t", "-c", "user.email=t@localhost"};
    ps.argv.insert(ps.argv.end(), args.begin(), args.end());
    ProcessResult r = runner.run(ps);
    EXPECT_TRUE(r.ok()) << r.err;
    return r.out;
  };
  git({"init", "-q"});
  git({"add", "README", "scripts"});
  git({"commit", "-q", "-m", "base"});
  std::string head = git({"rev-parse", "HEAD"});
  head.pop_back();
  return {root, head};
}

TEST(RobotChecksRun, MissingScriptsThrowAndLeaveNoWorkDirectory) {
  auto runner = make_real_runner();
  const fs::path tmp = fs::temp_directory_path() / ("isolab-robot-" + std::to_string(::getpid()));
  const Repo repo = repo_without_scripts(tmp / "repo", *runner);
  const fs::path work = tmp / "work";
  try {
    robot_checks(repo.root, repo.commit, {}, *runner, work);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the kernel source has no scripts/checkincludes.pl"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(work));
  fs::remove_all(tmp);
}

TEST(RobotChecksRun, BothChecksOffRunNothing) {
  auto runner = make_real_runner();
  const fs::path tmp =
      fs::temp_directory_path() / ("isolab-robot-off-" + std::to_string(::getpid()));
  const Repo repo = repo_without_scripts(tmp / "repo", *runner);
  RobotChecks off;
  off.checkpatch = off.includecheck = false;
  EXPECT_TRUE(robot_checks(repo.root, repo.commit, {}, *runner, tmp / "work", off).empty());
  EXPECT_FALSE(fs::exists(tmp / "work"));
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace isolab
