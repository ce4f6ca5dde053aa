#include "kernel/series_check.h"

#include "base/error.h"
#include "base/files.h"
#include "kernel/build_log.h"
#include "kernel/mail_thread.h"

namespace fs = std::filesystem;

namespace isolab {

namespace {

ProcessResult git(ProcessRunner& runner, const SourceTree& src, const fs::path& index,
                  std::vector<std::string> args) {
  ProcessSpec s;
  s.argv = {"git", "-C", src.repo.string()};
  for (auto& a : args) s.argv.push_back(std::move(a));
  s.env = kIsolabGitEnv;
  s.env.emplace_back("GIT_INDEX_FILE", index.string());
  s.timeout = std::chrono::seconds(120);
  return runner.run(s);
}

// The diff git am would apply: what `git mailinfo` separates from a mail, or the file itself.
fs::path diff_of(const fs::path& patch, std::size_t n, ProcessRunner& runner,
                 const fs::path& work) {
  if (!is_mbox_patch(read_file(patch))) return fs::absolute(patch);
  const fs::path msg = work / ("msg-" + std::to_string(n));
  fs::path diff = work / ("diff-" + std::to_string(n));
  ProcessSpec s;
  s.argv = {"sh",
            "-c",
            "exec git mailinfo \"$1\" \"$2\" < \"$3\"",
            "sh",
            msg.string(),
            diff.string(),
            fs::absolute(patch).string()};
  s.env = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_CONFIG_GLOBAL", "/dev/null"}};
  ProcessResult r = runner.run(s);
  if (!r.ok())
    throw Error(patch.string() + ": git mailinfo " + r.describe() + ": " +
                sanitize_excerpt(r.err, 200));
  return diff;
}

// "hunk #2 of mm/vmstat.c does not apply (at line 1234)" from git apply's report.
std::string first_failing_hunk(const std::string& report, const fs::path& diff) {
  auto f = parse_git_apply_check(report);
  if (!f) return "does not apply: " + sanitize_excerpt(report, 400);
  if (f->hunk == 0 && f->line > 0) f->hunk = hunk_number_at(read_file(diff), f->file, f->line);
  return f->describe();
}

void check_in(const SourceTree& src, const std::vector<fs::path>& patches, ProcessRunner& runner,
              const fs::path& work) {
  const fs::path index = work / "index";
  ProcessResult r = git(runner, src, index, {"read-tree", src.base_commit});
  if (!r.ok())
    throw Error("git read-tree " + src.base_commit + " in " + src.repo.string() + ": " +
                r.describe() + ": " + sanitize_excerpt(r.err, 300));
  for (std::size_t i = 0; i < patches.size(); ++i) {
    const fs::path diff = diff_of(patches[i], i + 1, runner, work);
    r = git(runner, src, index, {"apply", "--cached", diff.string()});
    if (r.ok()) continue;
    ProcessResult v =
        git(runner, src, index, {"apply", "--cached", "--check", "-v", diff.string()});
    const std::string subject = mail_subject(patches[i], runner);
    throw Error("patch " + std::to_string(i + 1) + " of " + std::to_string(patches.size()) + " (" +
                patches[i].string() +
                (subject.empty() ? "" : ", '" + sanitize_excerpt(subject, 100) + "'") +
                "): " + first_failing_hunk(v.err + v.out, diff));
  }
}

}  // namespace

void check_series_applies(const SourceTree& src, const std::vector<fs::path>& patches,
                          ProcessRunner& runner, const fs::path& work_dir) {
  std::error_code ec;
  fs::remove_all(work_dir, ec);
  fs::create_directories(work_dir);
  try {
    check_in(src, patches, runner, work_dir);
  } catch (...) {
    fs::remove_all(work_dir, ec);
    throw;
  }
  fs::remove_all(work_dir, ec);
}

}  // namespace isolab
