#include "kernel/source.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "base/text.h"
#include "kernel/build_log.h"
#include "kernel/file_lock.h"
#include "sys/proc_io.h"

namespace fs = std::filesystem;

namespace isolab {

const std::vector<std::pair<std::string, std::string>> kIsolabGitEnv = {
    {"GIT_AUTHOR_NAME", "isolab"},
    {"GIT_AUTHOR_EMAIL", "isolab@localhost"},
    {"GIT_AUTHOR_DATE", "2000-01-01T00:00:00+0000"},
    {"GIT_COMMITTER_NAME", "isolab"},
    {"GIT_COMMITTER_EMAIL", "isolab@localhost"},
    {"GIT_COMMITTER_DATE", "2000-01-01T00:00:00+0000"},
    // No system/global config: hooks, signing, autocrlf or templates must not change the trees.
    {"GIT_CONFIG_NOSYSTEM", "1"},
    {"GIT_CONFIG_GLOBAL", "/dev/null"},
    {"GIT_TERMINAL_PROMPT", "0"},
    // No automatic gc: it would repack the 75k loose objects of a fresh kernel tree in the
    // background of the first build, competing with make for the CPUs.
    {"GIT_CONFIG_COUNT", "1"},
    {"GIT_CONFIG_KEY_0", "gc.auto"},
    {"GIT_CONFIG_VALUE_0", "0"},
};

namespace {

void say(const SourceContext& ctx, const std::string& msg) {
  if (ctx.progress) ctx.progress(msg);
}

// Forward declaration: git() reports through run_metered().
struct StageMeter;
ProcessResult run_metered(const SourceContext& ctx, const ProcessSpec& spec, const StageMeter* m);

ProcessResult git(const SourceContext& ctx, const fs::path& dir, std::vector<std::string> args,
                  bool must_succeed = true, const StageMeter* meter = nullptr) {
  ProcessSpec spec;
  spec.argv = {"git"};
  if (!dir.empty()) {
    spec.argv.emplace_back("-C");
    spec.argv.push_back(dir.string());
  }
  for (auto& a : args) spec.argv.push_back(std::move(a));
  spec.env = kIsolabGitEnv;
  ProcessResult r = run_metered(ctx, spec, meter);
  if (must_succeed && !r.ok())
    throw Error(argv_to_display(spec.argv) + ": " + r.describe() + ": " +
                sanitize_excerpt(r.err.empty() ? r.out : r.err, 600));
  return r;
}

// ---- Progress of the long commands of a cold source (see SourceContext::meter).

constexpr double kMiB = 1024.0 * 1024.0;

// What a command has done so far, measured from outside while it runs.
struct StageMeter {
  std::string task;  // "unpack vanilla"
  std::string unit;  // "MiB", "objects"
  std::optional<double> total;
  std::function<double(int pid)> done;
};

// Runs spec; with ctx.meter and m, polls m every second and shows it (Progress throttles), and
// shows the stage at 100% when the command succeeded: without that line the throttle could
// leave the stage's last seconds and the next stage's start with no line for over 10 s.
ProcessResult run_metered(const SourceContext& ctx, const ProcessSpec& spec, const StageMeter* m) {
  if (!ctx.meter || !m) return ctx.runner.run(spec);
  auto child = ctx.runner.start(spec);
  for (;;) {
    if (auto r = child->wait_for(std::chrono::seconds(1))) {
      if (r->ok() && m->total) ctx.meter->update(m->task, *m->total, m->total, m->unit, true);
      return *r;
    }
    ctx.meter->update(m->task, m->done(child->pid()), m->total, m->unit);
  }
}

// Files, directories and bytes of a tree (without .git), for the totals of the meters.
struct TreeSize {
  double files = 0, dirs = 0, bytes = 0;
};

TreeSize tree_size(const fs::path& root) {
  TreeSize t;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink(ec) || it->is_regular_file(ec)) {
      t.files += 1;
      if (!it->is_symlink(ec)) t.bytes += static_cast<double>(it->file_size(ec));
    } else if (it->is_directory(ec)) {
      t.dirs += 1;
    }
  }
  return t;
}

// Loose objects under repo/.git/objects (what git add and commit write).
double loose_objects(const fs::path& repo) {
  double n = 0;
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(repo / ".git" / "objects", ec)) {
    if (d.path().filename().string().size() != 2) continue;
    for (auto it = fs::directory_iterator(d.path(), ec); !ec && it != fs::directory_iterator();
         it.increment(ec))
      n += 1;
  }
  return n;
}

// MiB tar will read from the archive: the uncompressed size of a .xz (`xz --robot --list`,
// "totals" line, field 5), a plain tar's size; nullopt for other compressions.
std::optional<double> archive_mib(const SourceContext& ctx, const fs::path& tarball) {
  std::error_code ec;
  const std::string name = tarball.filename().string();
  if (name.ends_with(".tar")) return static_cast<double>(fs::file_size(tarball, ec)) / kMiB;
  if (!name.ends_with(".xz") && !name.ends_with(".txz")) return std::nullopt;
  ProcessSpec xz;
  xz.argv = {"xz", "--robot", "--list", tarball.string()};
  ProcessResult r = ctx.runner.run(xz);
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const std::string_view l = line;
    if (!l.starts_with("totals\t")) continue;
    std::vector<std::string> f;
    std::size_t at = 0;
    for (std::size_t tab; (tab = l.find('\t', at)) != std::string_view::npos; at = tab + 1)
      f.emplace_back(l.substr(at, tab - at));
    f.emplace_back(l.substr(at));
    if (f.size() > 4) return std::strtod(f[4].c_str(), nullptr) / kMiB;
  }
  return std::nullopt;
}

std::string rev_parse(const SourceContext& ctx, const fs::path& repo, const std::string& rev) {
  std::string out = first_line(git(ctx, repo, {"rev-parse", "--verify", "--quiet", rev}).out);
  if (out.size() != 40)
    throw Error("git rev-parse " + rev + " in " + repo.string() + ": unexpected output '" +
                sanitize_excerpt(out, 100) + "'");
  return out;
}

bool is_full_sha(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

void remove_quietly(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
}

SourceTree prepare_tarball(const KernelSourceSpec& spec, const SourceContext& ctx) {
  const fs::path tarball = fs::absolute(spec.tarball);
  std::error_code ec;
  if (!fs::is_regular_file(tarball, ec))
    throw Error("kernel source tarball " + tarball.string() + " does not exist");
  const fs::path src_root = ctx.cache_dir / "src";
  say(ctx, "source: hashing " + tarball.string());
  const std::string sha = cached_file_sha256(tarball, src_root / "tarball-hashes.json");
  const std::string id = sha.substr(0, 16);
  const fs::path dir = src_root / id;
  const fs::path meta = src_root / (id + ".json");
  auto load = [&]() -> std::optional<SourceTree> {
    if (!fs::exists(meta) || !fs::exists(dir / ".git")) return std::nullopt;
    auto j = nlohmann::json::parse(read_file(meta), nullptr, false);
    if (j.is_discarded() || !j.contains("tree_id") || !j.contains("base_commit"))
      return std::nullopt;
    return SourceTree{dir, j["base_commit"].get<std::string>(), j["tree_id"].get<std::string>(),
                      tarball.filename().string() + " (sha256 " + sha + ")"};
  };
  if (auto t = load()) return *t;
  FileLock lock(ctx.cache_dir / "locks" / ("src-" + id + ".lock"), ctx.progress);
  if (auto t = load()) return *t;

  const fs::path tmp = src_root / (".tmp-" + id + "-" + std::to_string(::getpid()));
  remove_quietly(tmp);
  remove_quietly(dir);  // an unpublished leftover (no meta json): start over
  fs::create_directories(tmp);
  say(ctx, "source: unpacking " + tarball.string() + " into " + dir.string());
  ProcessSpec tar;
  tar.argv = {"tar", "-xf", tarball.string(), "-C", tmp.string(), "--strip-components=1"};
  const StageMeter unpack{
      "unpack " + ctx.variant, "MiB", ctx.meter ? archive_mib(ctx, tarball) : std::nullopt,
      [](int pid) { return static_cast<double>(process_io(pid).rchar) / kMiB; }};
  ProcessResult r = run_metered(ctx, tar, &unpack);
  if (ctx.meter) ctx.meter->finish(unpack.task);
  if (!r.ok()) {
    remove_quietly(tmp);
    throw Error("unpacking " + tarball.string() + ": tar " + r.describe() + ": " +
                sanitize_excerpt(r.err, 600));
  }
  if (!fs::exists(tmp / "Makefile") || !fs::exists(tmp / "scripts/kconfig/merge_config.sh")) {
    remove_quietly(tmp);
    throw Error(tarball.string() +
                " is not a kernel source tarball with one top-level directory (no Makefile or "
                "scripts/kconfig/merge_config.sh after tar --strip-components=1)");
  }
  TreeSize size;
  try {
    say(ctx, "source: git init + commit of the pristine tree");
    size = ctx.meter ? tree_size(tmp) : TreeSize{};
    const StageMeter commit{"commit " + ctx.variant, "objects", size.files + size.dirs,
                            [&](int) { return loose_objects(tmp); }};
    git(ctx, tmp, {"init", "-q"});
    // -f: the tree must be exactly the tarball, including files the kernel's .gitignore lists.
    git(ctx, tmp, {"add", "-A", "-f"}, true, &commit);
    git(ctx, tmp,
        {"commit", "-q", "--no-verify", "-m",
         "isolab: pristine " + tarball.filename().string() + "\n\nsha256 " + sha},
        true, &commit);
    if (ctx.meter) ctx.meter->finish(commit.task);
    git(ctx, tmp, {"update-ref", "refs/isolab/base", "HEAD"});
  } catch (...) {
    remove_quietly(tmp);
    throw;
  }
  fs::rename(tmp, dir);
  SourceTree t{dir, rev_parse(ctx, dir, "HEAD"), rev_parse(ctx, dir, "HEAD^{tree}"),
               tarball.filename().string() + " (sha256 " + sha + ")"};
  nlohmann::json j{{"tarball", tarball.string()},
                   {"tarball_sha256", sha},
                   {"base_commit", t.base_commit},
                   {"tree_id", t.tree_id}};
  write_file_atomic(meta, json_text(j, 2) + "\n");
  return t;
}

SourceTree prepare_git(const KernelSourceSpec& spec, const SourceContext& ctx) {
  if (spec.git.empty()) throw Error("git kernel source: empty url");
  std::string url = spec.git;
  std::error_code ec;
  if (fs::exists(url, ec)) url = fs::absolute(url).string();
  const std::string id = sha256_hex(url).substr(0, 16);
  const fs::path repo = ctx.cache_dir / "git" / (id + ".git");
  const std::string ref = spec.ref.empty() ? "HEAD" : spec.ref;
  FileLock lock(ctx.cache_dir / "locks" / ("git-" + id + ".lock"), ctx.progress);
  bool fresh = false;
  if (!fs::exists(repo / "HEAD")) {
    const fs::path tmp = repo.parent_path() / (".tmp-" + id + "-" + std::to_string(::getpid()));
    remove_quietly(tmp);
    remove_quietly(repo);
    fs::create_directories(repo.parent_path());
    say(ctx, "source: cloning " + url);
    try {
      git(ctx, "", {"clone", "-q", "--mirror", url, tmp.string()});
    } catch (const Error& e) {
      remove_quietly(tmp);
      throw Error(std::string("cloning kernel source ") + url + ": " + e.what());
    }
    fs::rename(tmp, repo);
    fresh = true;
  }
  std::string commit;
  auto resolve = [&]() -> bool {
    auto r = git(ctx, repo, {"rev-parse", "--verify", "--quiet", ref + "^{commit}"}, false);
    commit = first_line(r.out);
    return r.ok() && commit.size() == 40;
  };
  // A full commit id already here needs no fetch; a branch or tag may have moved.
  if (!(is_full_sha(ref) && resolve())) {
    if (!fresh) {
      say(ctx, "source: fetching " + url);
      git(ctx, repo, {"fetch", "-q", "--prune", "origin"});
    }
    if (!resolve())
      throw Error("git kernel source " + url + ": ref '" + ref + "' does not name a commit");
  }
  return SourceTree{repo, commit, rev_parse(ctx, repo, commit + "^{tree}"), url + "@" + ref};
}

// Returns the failure as "<patch>: <where>" using git apply's and GNU patch's own reports.
std::string diagnose_patch(const SourceContext& ctx, const fs::path& worktree,
                           const fs::path& patch_abs, const fs::path& patch_shown,
                           const std::string& apply_output) {
  auto g = git(ctx, worktree, {"apply", "--check", "-v", patch_abs.string()}, false);
  auto from_git = parse_git_apply_check(g.err + g.out);
  ProcessSpec p;
  // --fuzz=0 matches git's exact-context rule; --forward reports an applied patch instead
  // of assuming -R.
  p.argv = {"patch",   "-p1",      "--dry-run", "--forward",
            "--batch", "--fuzz=0", "-i",        patch_abs.string()};
  p.cwd = worktree;
  auto pr = ctx.runner.run(p);
  auto from_patch = parse_patch_dry_run(pr.out + pr.err);
  PatchFailure f;
  if (from_patch) {
    f = *from_patch;
    if (f.file.empty() && from_git) f.file = from_git->file;
    // git names the hunk's line in the original file; patch's "FAILED at" line includes the
    // offset of earlier hunks, so prefer git's when both name the same file.
    if (from_git && from_git->line > 0 && from_git->file == f.file) f.line = from_git->line;
  } else if (from_git) {
    f = *from_git;
    if (f.line > 0) f.hunk = hunk_number_at(read_file(patch_abs), f.file, f.line);
  } else {
    return patch_shown.string() + ": does not apply: " +
           sanitize_excerpt(apply_output.empty() ? g.err : apply_output, 600);
  }
  return patch_shown.string() + ": " + f.describe();
}

}  // namespace

std::string cached_file_sha256(const fs::path& file, const fs::path& index_json) {
  const fs::path abs = fs::absolute(file);
  struct stat st {};
  if (::stat(abs.c_str(), &st) != 0) throw Error("cannot stat " + abs.string());
  const long long mtime_ns =
      static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  nlohmann::json index = nlohmann::json::object();
  std::error_code ec;
  if (fs::exists(index_json, ec)) {
    index = nlohmann::json::parse(read_file(index_json), nullptr, false);
    if (!index.is_object()) index = nlohmann::json::object();
  }
  auto it = index.find(abs.string());
  if (it != index.end() && it->is_object() && it->value("size", -1LL) == st.st_size &&
      it->value("mtime_ns", -1LL) == mtime_ns && it->contains("sha256"))
    return (*it)["sha256"].get<std::string>();
  std::string sha = sha256_file(abs);
  index[abs.string()] = {
      {"size", static_cast<long long>(st.st_size)}, {"mtime_ns", mtime_ns}, {"sha256", sha}};
  write_file_atomic(index_json, json_text(index, 2) + "\n");
  return sha;
}

bool is_mbox_patch(std::string_view text) {
  std::size_t pos = 0;
  bool first = true;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (l.empty() && first) continue;
    if (first && l.substr(0, 5) == "From ") return true;
    first = false;
    if (l.substr(0, 5) == "From:" || l.substr(0, 8) == "Subject:") return true;
    if (l.substr(0, 5) == "diff " || l.substr(0, 4) == "--- ") return false;
  }
  return false;
}

SourceTree prepare_source(const KernelSourceSpec& spec, const SourceContext& ctx) {
  switch (spec.kind) {
    case KernelSourceSpec::Kind::tarball:
      return prepare_tarball(spec, ctx);
    case KernelSourceSpec::Kind::git:
      return prepare_git(spec, ctx);
    case KernelSourceSpec::Kind::prebuilt:
      break;
  }
  throw Error("prepare_source: a prebuilt kernel has no source tree");
}

std::string checkout_variant(const SourceTree& src, const fs::path& worktree,
                             const std::vector<fs::path>& patches,
                             const std::vector<std::string>& patch_sha256,
                             const SourceContext& ctx) {
  const fs::path ready = fs::path(worktree.string() + ".ready");
  std::error_code ec;
  if (!fs::exists(ready, ec) || !fs::exists(worktree / ".git", ec)) {
    remove_quietly(worktree);
    fs::remove(ready, ec);
    git(ctx, src.repo, {"worktree", "prune"});
    fs::create_directories(worktree.parent_path());
    say(ctx, "source: creating worktree " + worktree.string());
    const StageMeter checkout{
        "checkout " + ctx.variant, "MiB", ctx.meter ? tree_size(src.repo).bytes / kMiB : 0.0,
        [](int pid) { return static_cast<double>(process_tree_io(pid).wchar) / kMiB; }};
    git(ctx, src.repo, {"worktree", "add", "-f", "--detach", worktree.string(), src.base_commit},
        true, &checkout);
    if (ctx.meter) ctx.meter->finish(checkout.task);
    write_file_atomic(ready, src.base_commit + "\n");
  }
  if (patches.empty()) {
    git(ctx, worktree, {"checkout", "-q", "-f", "--detach", src.base_commit});
    return src.base_commit;
  }
  std::string variant_input = src.base_commit;
  for (const auto& s : patch_sha256) variant_input += " " + s;
  const std::string ref = "refs/isolab/variants/" + sha256_hex(variant_input).substr(0, 24);
  auto existing =
      git(ctx, src.repo, {"rev-parse", "--verify", "--quiet", ref + "^{commit}"}, false);
  if (existing.ok() && first_line(existing.out).size() == 40) {
    std::string commit = first_line(existing.out);
    git(ctx, worktree, {"checkout", "-q", "-f", "--detach", commit});
    return commit;
  }
  git(ctx, worktree, {"checkout", "-q", "-f", "--detach", src.base_commit});
  git(ctx, worktree, {"clean", "-q", "-f", "-d"});
  for (const auto& patch : patches) {
    const fs::path abs = fs::absolute(patch);
    if (!fs::is_regular_file(abs, ec)) throw Error(patch.string() + ": patch file not found");
    const std::string text = read_file(abs);
    say(ctx, "patch: applying " + patch.string());
    if (is_mbox_patch(text)) {
      auto r = git(ctx, worktree, {"am", "-q", "--no-3way", abs.string()}, false);
      if (!r.ok()) {
        git(ctx, worktree, {"am", "--abort"}, false);
        throw Error(diagnose_patch(ctx, worktree, abs, patch, r.err + r.out));
      }
    } else {
      auto r = git(ctx, worktree, {"apply", "--index", abs.string()}, false);
      if (!r.ok()) {
        git(ctx, worktree, {"reset", "-q", "--hard"}, false);
        throw Error(diagnose_patch(ctx, worktree, abs, patch, r.err + r.out));
      }
      git(ctx, worktree,
          {"commit", "-q", "--no-verify", "-m", "isolab: apply " + patch.filename().string()});
    }
  }
  std::string commit = rev_parse(ctx, worktree, "HEAD");
  git(ctx, src.repo, {"update-ref", ref, commit});
  return commit;
}

void switch_worktree(const fs::path& worktree, const std::string& commit,
                     const SourceContext& ctx) {
  git(ctx, worktree, {"checkout", "-q", "-f", "--detach", commit});
}

}  // namespace isolab
