// Kernel source trees in the cache: a tarball unpacked once into a git repository with a
// reproducible pristine commit, or a mirror of a git source; per-slot worktrees switched
// between variant commits (one commit per patch set).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/progress.h"
#include "spec/kernel_source.h"
#include "sys/process.h"

namespace isolab {

// Fixed identity and dates for every commit isolab makes, so that commit ids (not only tree
// ids) are reproducible across machines.
extern const std::vector<std::pair<std::string, std::string>> kIsolabGitEnv;

struct SourceTree {
  std::filesystem::path repo;  // usable as `git -C <repo>` (work tree or bare mirror)
  std::string base_commit;     // 40 hex
  std::string tree_id;         // git tree id of base_commit: the "source tree id"
  std::string description;     // "linux-source-6.1.tar.xz (sha256 3b1f...)", "<url>@<ref>"
};

struct SourceContext {
  std::filesystem::path cache_dir;
  ProcessRunner& runner;
  std::function<void(const std::string&)> progress;  // may be empty
  // Progress of the long commands (may be null): tasks "unpack <variant>" (MiB of the
  // uncompressed archive tar has read, /proc/<pid>/io rchar, against `xz --robot --list`'s
  // uncompressed size or a plain tar's size), "commit <variant>" (loose objects git add and
  // commit wrote, against files + directories of the tree) and "checkout <variant>" (MiB git
  // wrote, wchar of git and its children, against the tree's bytes).
  Progress* meter = nullptr;
  std::string variant = {};  // names the tasks
};

// Tarball: sha256 (remembered in <cache>/src/tarball-hashes.json by path, size and mtime),
// then unpacked once into <cache>/src/<sha[0:16]>/ with tar -xf --strip-components=1,
// git init, git add -A -f, one commit with kIsolabGitEnv; published by rename.
// Git: mirror clone into <cache>/git/<sha(url)[0:16]>.git, fetched when the ref is not a full
// commit id already present. Throws isolab::Error naming the tarball/url and the failed step.
SourceTree prepare_source(const KernelSourceSpec& spec, const SourceContext& ctx);

// SHA-256 of a file, remembered in <index_json> by (absolute path, size, mtime ns).
std::string cached_file_sha256(const std::filesystem::path& file,
                               const std::filesystem::path& index_json);

// True for a patch in mbox / `git format-patch` form (first non-empty line "From <sha> ..."
// or a "From:"/"Subject:" header before the first "diff"/"---" line).
bool is_mbox_patch(std::string_view text);

// Makes `worktree` (created with `git worktree add --detach` if missing) check out the
// commit for `patches` applied in order on base_commit. The commit is remembered as
// refs/isolab/variants/<variant_id>; when it exists, only `git checkout` runs, which rewrites
// just the files that differ (so make rebuilds only those). Returns the variant commit.
// A patch that does not apply throws isolab::Error
// "<patch as given>: hunk #2 of mm/vmstat.c does not apply (at line 1234)".
std::string checkout_variant(const SourceTree& src, const std::filesystem::path& worktree,
                             const std::vector<std::filesystem::path>& patches,
                             const std::vector<std::string>& patch_sha256,
                             const SourceContext& ctx);

// Switches `worktree` (one checkout_variant made) to `commit` with `git checkout -f --detach`:
// only the files that differ are rewritten. Throws isolab::Error with git's message.
void switch_worktree(const std::filesystem::path& worktree, const std::string& commit,
                     const SourceContext& ctx);

}  // namespace isolab
