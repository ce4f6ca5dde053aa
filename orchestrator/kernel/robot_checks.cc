#include "kernel/robot_checks.h"

#include <algorithm>
#include <regex>
#include <set>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"

namespace fs = std::filesystem;

namespace isolab {

std::vector<BuildWarning> parse_checkpatch(std::string_view output, const std::string& patch) {
  static const std::regex re(R"(([^:]*):([0-9]+): (ERROR|WARNING|CHECK):([A-Z0-9_]+): (.*))");
  std::vector<BuildWarning> out;
  for (std::string_view l : text_lines(output)) {
    const std::string line = sanitize_excerpt(l, 400);
    std::smatch m;
    if (!std::regex_match(line, m, re)) continue;
    BuildWarning w;
    w.file = m[1].str().empty() ? "(commit message)" : m[1].str();
    w.line = std::stoi(m[2].str().substr(0, 9));
    w.klass = "checkpatch:" + m[4].str();
    w.message = patch + ": " + m[3].str() + ": " + m[5].str();
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<BuildWarning> parse_checkincludes(std::string_view output) {
  static constexpr std::string_view kTail = " is included more than once.";
  std::vector<BuildWarning> out;
  for (std::string_view l : text_lines(output)) {
    const std::string line = sanitize_excerpt(l, 400);
    const std::size_t colon = line.find(": ");
    if (colon == std::string::npos || line.size() <= kTail.size() ||
        line.compare(line.size() - kTail.size(), kTail.size(), kTail) != 0)
      continue;
    BuildWarning w;
    w.file = line.substr(0, colon);
    w.klass = "includecheck";
    w.message = line.substr(colon + 2, line.size() - 1 - colon - 2);  // without the final '.'
    out.push_back(std::move(w));
  }
  return out;
}

namespace {

// Runs argv in cwd; git finds no repository above cwd's parent (git apply then patches the
// plain files in cwd even when the work directory lies inside a checkout).
ProcessResult run_in(ProcessRunner& runner, std::vector<std::string> argv, const fs::path& cwd) {
  ProcessSpec s;
  s.argv = std::move(argv);
  s.cwd = cwd;
  s.env = {{"GIT_CEILING_DIRECTORIES", fs::absolute(cwd).parent_path().string()}};
  s.timeout = std::chrono::minutes(2);
  return runner.run(s);
}

// base_commit:path of the repository written to dest; false when the base has no such file.
bool git_show_to(ProcessRunner& runner, const fs::path& repo, const std::string& commit,
                 const std::string& path, const fs::path& dest) {
  ProcessResult r = run_in(runner, {"git", "-C", repo.string(), "show", commit + ":" + path}, repo);
  if (!r.ok()) return false;
  fs::create_directories(dest.parent_path());
  write_file_atomic(dest, r.out);
  return true;
}

// The includecheck findings of files (relative paths) in dir.
std::vector<BuildWarning> includecheck(ProcessRunner& runner, const fs::path& script,
                                       const std::vector<std::string>& files, const fs::path& dir) {
  std::vector<std::string> argv = {"perl", script.string()};
  for (const auto& f : files)
    if (fs::exists(dir / f)) argv.push_back(f);
  if (argv.size() == 2) return {};
  return parse_checkincludes(run_in(runner, argv, dir).out);
}

// The series' touched files: written at base_commit under base/ and patched/, the series
// applied in patched/ with git apply (outside any repository it patches plain files).
std::vector<std::string> series_trees(ProcessRunner& runner, const fs::path& repo,
                                      const std::string& commit,
                                      const std::vector<fs::path>& patches, const fs::path& work) {
  std::set<std::string> touched;
  for (const auto& p : patches)
    for (auto& f : patch_touched_files(read_file(p, 64u << 20))) touched.insert(f);
  fs::create_directories(work / "patched");
  for (const auto& f : touched)
    if (git_show_to(runner, repo, commit, f, work / "base" / f)) {
      fs::create_directories((work / "patched" / f).parent_path());
      fs::copy_file(work / "base" / f, work / "patched" / f, fs::copy_options::overwrite_existing);
    }
  for (const auto& p : patches) {
    ProcessResult r = run_in(runner, {"git", "apply", fs::absolute(p).string()}, work / "patched");
    if (!r.ok())
      throw Error(p.filename().string() + ": git apply on the touched files " + r.describe() +
                  ": " + sanitize_excerpt(r.err, 200));
  }
  std::vector<std::string> sources;
  for (const auto& f : touched)
    if (f.ends_with(".c") || f.ends_with(".h")) sources.push_back(f);
  return sources;
}

}  // namespace

std::vector<BuildWarning> robot_checks(const fs::path& source_repo, const std::string& base_commit,
                                       const std::vector<fs::path>& patches, ProcessRunner& runner,
                                       const fs::path& work_dir, const RobotChecks& checks) {
  if (!checks.checkpatch && !checks.includecheck) return {};
  // The work directory goes when the checks end, thrown out of or not.
  struct Scratch {
    fs::path dir;
    ~Scratch() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } scratch{work_dir};
  std::error_code ec;
  fs::remove_all(work_dir, ec);
  const fs::path scripts = work_dir / "scripts";
  for (const char* f :
       {"checkpatch.pl", "spelling.txt", "const_structs.checkpatch", "checkincludes.pl"})
    if (!git_show_to(runner, source_repo, base_commit, std::string("scripts/") + f, scripts / f))
      throw Error("the kernel source has no scripts/" + std::string(f) + " at " +
                  base_commit.substr(0, 12));
  std::vector<BuildWarning> out;
  for (const auto& p : checks.checkpatch ? patches : std::vector<fs::path>{}) {
    ProcessResult r =
        run_in(runner,
               {"perl", (scripts / "checkpatch.pl").string(), "--no-tree", "--terse", "--showfile",
                "--show-types", "--no-summary", "--color=never", fs::absolute(p).string()},
               work_dir);
    for (auto& w : parse_checkpatch(r.out, p.filename().string())) out.push_back(std::move(w));
  }
  if (!checks.includecheck) return out;
  const auto sources = series_trees(runner, source_repo, base_commit, patches, work_dir);
  const fs::path script = scripts / "checkincludes.pl";
  const auto before = includecheck(runner, script, sources, work_dir / "base");
  for (auto& w : includecheck(runner, script, sources, work_dir / "patched"))
    if (std::find(before.begin(), before.end(), w) == before.end()) out.push_back(std::move(w));
  return out;
}

}  // namespace isolab
