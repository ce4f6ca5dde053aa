// The kernel area's request, environment and result: what ensure_kernel (kernel/kernel.h) is
// asked to build and with what, and the kernel it gives back; also what lookup_kernel
// (kernel/lookup.h) finds without building. Header-only (plain structs).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/progress.h"
#include "kernel/build_log.h"
#include "spec/kernel_source.h"
#include "sys/process.h"

namespace isolab {

struct KernelRequest {
  KernelSourceSpec source;
  std::vector<std::filesystem::path> patches;    // applied in order (mbox: git am; diff: git apply)
  std::string base_target = "tinyconfig";        // a kconfig target: tinyconfig, defconfig, ...
  std::vector<std::filesystem::path> fragments;  // merged in order after base_target
  std::string variant_name;                      // for logs and messages ("vanilla", "patched")
  // When set, a generated fragment "CONFIG_NR_CPUS=<nr_cpus>" is merged after `fragments` (the
  // guest's CPU count, see pipeline/run_plan.h guest_kernel_nr_cpus()); it must survive
  // olddefconfig like any fragment (x86-64 accepts 2..512 without CPUMASK_OFFSTACK). It is part of
  // the index inputs and of the final .config, hence of the build key, but not of the build slot:
  // guests of every size share one worktree and build dir.
  std::optional<unsigned> nr_cpus;
  // Which robot checks run on the patches (spec/kernel_source.h); not part of any key.
  RobotChecks robot_checks;
};

struct KernelEnv {
  std::filesystem::path cache_dir;      // see default_cache_dir() (kernel/kernel.h)
  ProcessRunner& runner;                // every git/tar/make/gcc/patch goes through it
  std::filesystem::path log_dir = {};   // build-<variant>.log goes here; empty: <cache>/logs
  int jobs = 0;                         // make -j; <= 0: host CPUs
  std::optional<bool> use_ccache = {};  // nullopt: use ccache when it is in PATH
  std::function<void(const std::string&)> progress = {};  // one-line status messages; may be empty
  // When set, `make bzImage` is watched: every 200 ms its log's Kbuild steps are counted
  // (count_build_steps, kernel/build_log.h) and reported as task "build <variant>" in unit
  // "steps", against the step count of the last build in the same build directory (a rebuild)
  // or the largest of the cached builds of the same source and base config (a cold build),
  // else against a 1500-step prior (announced). A build that succeeds ends with a forced line
  // at 100%: done == total == the steps it took. Must outlive ensure_kernel.
  Progress* meter = nullptr;
  // Wall-clock limit for each logged command (config steps, make bzImage); 0 = none. A make
  // that exceeds it is killed with its whole process group and reported as "timed out".
  std::chrono::seconds command_timeout{0};
};

struct PatchId {
  std::filesystem::path path;  // as given in KernelRequest::patches
  std::string sha256;          // of the file content
  std::string subject;         // its mail's Subject (git mailinfo -k), "" for a bare diff
};

struct KernelArtifact {
  std::filesystem::path bzimage;      // in the cache entry (or the prebuilt path)
  std::string kernel_release;         // `make -s kernelrelease`, e.g. "6.1.158-isolab-3fa2c0d1e9b4"
  std::string build_key;              // 64 hex, see compute_build_key (kernel/build_argv.h)
  std::string config_sha256;          // of the final .config ("" for prebuilt)
  std::vector<PatchId> patches;       // in application order
  std::filesystem::path config_path;  // final .config in the cache entry ("" for prebuilt)
  bool from_cache = false;            // nothing was built by this call
  double build_seconds = 0;           // wall time of the make bzImage step (0 when cached)
  // Wall seconds of each stage this call ran, in order, for the run's timings table: "source"
  // (hash, and on a cold cache unpack and commit), "patches" (read; on a build, the worktree
  // switched to the variant's commit), "config", "make", "w1_sparse" (the extra warnings
  // pass), "robot_checks". A stage the call did not reach is absent; a cache hit has no "make".
  std::vector<std::pair<std::string, double>> stage_seconds;
  std::filesystem::path log;   // this run's build log (or the cached copy)
  std::string source_tree_id;  // git tree id of the base commit ("" for prebuilt)
  // The kernel's System.map in the cache entry ("" when the entry has none: prebuilt kernels
  // and entries published before it was kept).
  std::filesystem::path system_map;
  // What a kernel test robot reports on the patches: checkpatch and the includecheck the series
  // adds (kernel/robot_checks.h), found again on every call, then the W=1 and sparse warnings
  // the series adds in the touched .c files (kernel/extra_warnings.h), found when the kernel is
  // built and kept in its cache entry (extra-warnings.json). Empty without patches.
  std::vector<BuildWarning> robot_findings;
};

}  // namespace isolab
