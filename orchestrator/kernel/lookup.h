// What the kernel cache would give a run for a kernel request, found without building or
// configuring anything (for `isolab run --dry-run`), and the keys a build derives before its
// config step, shared with ensure_kernel (kernel/kernel.h) so that both look in the same place.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel_types.h"
#include "sys/process.h"

namespace isolab {

// Everything a build knows before its config step (ensure_kernel stage 2).
struct KernelInputs {
  std::string source_tree_id;    // git tree id of the source's base commit
  std::string base_target;       // "tinyconfig", ...
  std::string arch;              // host_build_arch()
  std::string compiler_version;  // host_compiler_version()
  bool ccache = false;           // make runs with CC="ccache gcc"
  // The texts of the request's fragments in merge order, then kIsolabRequiredFragment
  // (kernel/build_argv.h); without the generated NR_CPUS fragment, which nr_cpus stands for.
  std::vector<std::string> fragment_texts;
  std::optional<unsigned> nr_cpus;        // KernelRequest::nr_cpus
  std::vector<std::string> patch_sha256;  // in application order
};

struct KernelInputKeys {
  std::string slot;       // 16 hex: the worktree and build dir shared by every patch set
  std::string index_key;  // 64 hex: the file name under <cache>/index/ holding the build key
};

// The build slot is sha256 of the config recipe (kKernelCacheSchema, tree, base, arch,
// compiler, ccache, each fragment as "fragment <bytes>\n<text>") cut to 16 hex; the index key
// is sha256 of the recipe followed by the NR_CPUS fragment (when nr_cpus is set) and one
// "patch <sha256>" line per patch. Pure; any input change changes the index key.
KernelInputKeys kernel_input_keys(const KernelInputs& in);

// `uname -m` of this host ("x86_64" when uname fails).
std::string host_build_arch();
// First line of `gcc --version` through runner. Throws isolab::Error when gcc does not run.
std::string host_compiler_version(ProcessRunner& runner);
// Whether an executable named prog is on $PATH.
bool program_in_path(const std::string& prog);

// One kernel of a run as the cache answers for it.
struct KernelLookup {
  enum class State {
    cached,    // the index maps these inputs to a complete entry: nothing is built
    to_build,  // configured, then built unless an entry has the same final .config
    prebuilt,  // an existing image, booted as it is
  };
  State state = State::to_build;
  std::string build_key;       // cached: 64 hex
  std::string kernel_release;  // cached; prebuilt when the spec gives it
  std::string why;             // to_build: why the cache has no answer, one clause
  // to_build: the recorded wall time (source + patch + config + make seconds of meta.json) of
  // the most recently published entry of the same source tree and base target; nullopt when
  // the cache records none.
  std::optional<double> last_build_seconds;
  std::string last_build_variant;  // that entry's variant_name
};

struct KernelLookupEnv {
  std::filesystem::path cache_dir;
  ProcessRunner& runner;           // runs gcc --version and, for a git source, git rev-parse
  std::optional<bool> use_ccache;  // nullopt: ccache when it is on $PATH (as KernelEnv)
};

// Looks the request up by the index key a run computes first (kernel_input_keys), without
// writing anything but the tarball hash memo a run writes too. A source not yet unpacked or
// fetched into the cache, a fragment or patch that cannot be read: State::to_build with that
// reason. Throws isolab::Error only when gcc does not run.
KernelLookup lookup_kernel(const KernelRequest& request, const KernelLookupEnv& env);

}  // namespace isolab
