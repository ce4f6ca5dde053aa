// Kernel area entry point: from a kernel source + patch list + config fragments to a cached
// bzImage whose release string carries the build key.
//
// Cache layout under KernelEnv::cache_dir (every published entry appears by rename(2) of a
// temporary directory, so readers see a whole entry or none):
//   src/<sha256(tarball)[0:16]>/       tarball unpacked once, git repo, pristine base commit
//   src/<...>.json                     {tarball_sha256, base_commit, tree_id}
//   src/tarball-hashes.json            sha256 of tarballs remembered by (path, size, mtime)
//   git/<sha256(url)[0:16]>.git        mirror clone of a git source
//   worktrees/<slot>/                  one checkout per build slot, switched between variants
//   build/<slot>/                      O= build dir, reused across patch sets (incremental)
//   kernels/<key>/{bzImage, config, kernel_release, meta.json, build.log}
//   index/<input-key>                  inputs (before config) -> build key, for fast cache hits
//   locks/<key>.lock, locks/slot-<slot>.lock, locks/src-<id>.lock   flock(2) files
//   (<key>.lock: exclusive while building the entry, shared while a run boots it)
//   kernels/<key>/.isolab-last-use, build/<slot>/.isolab-last-use   mtime = last use
// `isolab cache list|prune` (kernel/cache.h) reads and bounds all of this.
// A build slot is sha256(source tree id, base target, fragment contents)[0:16] (without the
// generated NR_CPUS fragment, KernelRequest::nr_cpus): every variant
// of one source with one config recipe shares the worktree and build dir, so a patch set makes
// make rebuild only the files it touches (git checkout rewrites only changed files).
#pragma once

#include <filesystem>

#include "kernel/kernel_types.h"

namespace isolab {

// Returns a bzImage for the request, building it only when the cache has no entry for its
// build key. Safe to call from several processes at once on one cache_dir (flock).
// Steps: source (unpack tarball once / mirror git) -> patches (one commit per patch set) ->
// config (base_target, merge_config.sh -m, olddefconfig, survival check) -> key -> build ->
// publish. Throws isolab::Error whose message starts with "variant <name>: <step>: " and
// names the failing input, e.g.
//   "variant patched: build: make exited 2; first error: mm/vmstat.c:123:5: error: ...; log: <p>"
//   "variant patched: patch: patches/x/0002-foo.patch: hunk #2 of mm/vmstat.c does not apply
//    (at line 1234)"
//   "variant iso: config: kernel-configs/isolation.config: CONFIG_NO_HZ_FULL=y was dropped by
//    olddefconfig (final: is not set); check its dependencies"
KernelArtifact ensure_kernel(const KernelRequest& request, const KernelEnv& env);

// $ISOLAB_CACHE_DIR, else $HOME/.cache/isolab, else /var/tmp/isolab-cache.
std::filesystem::path default_cache_dir();

}  // namespace isolab
