// The kernel cache as a whole (layout: kernel/kernel.h): what it holds, how big, when each part
// was last used, and bounded pruning that is safe against concurrent isolab runs and builds.
//
// Entries and the lock that guards each one (the same flock(2) files ensure_kernel takes):
//   kernel  kernels/<key>/                                   locks/<key>.lock
//           (runs hold it shared while they boot the entry; a build holds it exclusive)
//   slot    worktrees/<slot>/, worktrees/<slot>.ready, build/<slot>/   locks/slot-<slot>.lock
//   source  src/<id>/, src/<id>.json                         locks/src-<id>.lock
// A slot's worktree is a git worktree of one source (its .git file names src/<id>/.git/...);
// a source stays while a kept slot uses it. Prune removes an entry only while holding its lock
// exclusively without waiting; a busy entry is skipped and reported, never waited for.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/file_lock.h"

namespace isolab {

struct CacheEntry {
  std::string kind;  // "kernel" | "slot" | "source"
  std::string id;    // build key (64 hex), slot (16 hex) or source id (16 hex)
  std::vector<std::filesystem::path> paths;  // what removing the entry deletes
  std::filesystem::path lock;                // its lock file
  std::uint64_t bytes = 0;                   // apparent size of every regular file under paths
  std::int64_t last_use = 0;                 // Unix seconds (see mark_cache_use)
  std::string source_id;                     // slot: the source its worktree belongs to, or ""
  std::string detail;                        // kernel: "<release> (<variant>)"; slot/source: ""
};

// Records a use of a cache directory: sets the mtime of dir/.isolab-last-use to now (creating
// it). Never throws (a read-only cache only loses the date).
void mark_cache_use(const std::filesystem::path& dir);

// Every entry under cache (missing directories: none), newest use first. last_use is the
// mtime of .isolab-last-use when present, else of kernels/<key>/meta.json, build/<slot>/.config
// or src/<id>.json, else of the directory. A source's last use is at least its slots' last use.
// Throws isolab::Error naming the path when a directory cannot be read.
std::vector<CacheEntry> scan_cache(const std::filesystem::path& cache);

// Parses a size: a non-negative decimal number with an optional binary suffix K, M, G, T
// (optionally followed by "iB" or "B"; case-insensitive), e.g. "20G", "1.5T", "500MiB",
// "1048576". Throws isolab::Error quoting the text when it is not one.
std::uint64_t parse_size(std::string_view text);
// "3.2 GiB", "512.0 MiB", "17 B": one decimal, binary units.
std::string format_size(std::uint64_t bytes);

struct PrunePolicy {
  std::optional<int> keep_last;            // keep the N most recently used kernels, slots, sources
  std::optional<std::uint64_t> max_bytes;  // then drop the least recently used until <= this
};

// Which entries to remove (pure), in removal order. Entries named "<kind>/<id>" in pinned are
// kept (they are busy). keep_last applies per kind; a source used by a kept slot is always kept;
// max_bytes then removes the least recently used remaining entries until the kept total is at
// most max_bytes (or nothing removable is left). Throws isolab::Error when the policy has
// neither limit or keep_last < 0.
std::vector<CacheEntry> select_prunable(const std::vector<CacheEntry>& entries,
                                        const PrunePolicy& policy,
                                        const std::set<std::string>& pinned = {});

struct PruneReport {
  std::vector<CacheEntry> removed;
  std::vector<CacheEntry> busy;  // selected, but their lock was held by another process
  std::uint64_t bytes_before = 0, bytes_after = 0;
};

// Scans, selects and removes under each entry's lock taken with LOCK_NB (busy entries are
// pinned and the selection is redone, so --max-size takes the next-oldest instead). A kernel
// entry is first renamed out of kernels/ (readers see a whole entry or none); index files that
// point to a removed kernel are deleted; a removed slot's worktree is dropped from its source
// with `git worktree prune` semantics (the next build recreates it). Throws isolab::Error for an
// invalid policy or a removal that fails (naming the path).
PruneReport prune_cache(const std::filesystem::path& cache, const PrunePolicy& policy);

// The entries as a table (kind, id, size, last use UTC, detail) and the total; for `isolab
// cache list`.
std::string cache_list_text(const std::vector<CacheEntry>& entries);

// Holds kernels/<key> in use for the caller's lifetime: a shared lock on locks/<key>.lock
// (blocking while a prune or a build holds it exclusively). prune_cache never removes a held
// entry. Throws isolab::Error when the lock file cannot be opened.
std::unique_ptr<FileLock> hold_kernel_entry(const std::filesystem::path& cache,
                                            const std::string& build_key);

}  // namespace isolab
