// Pure pieces of the kernel build: the argv of every make/merge_config invocation and the
// build key. No side effects; unit-tested for exact argv.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace isolab {

// Bumped whenever the meaning of a cache entry changes (layout, key inputs, make variables).
inline constexpr int kKernelCacheSchema = 1;

// The options isolab itself requires, merged after the user's fragments: the build key goes
// into LOCALVERSION on the make command line, so the automatic "-gXXXX"/"+" suffix must be off
// (scripts/setlocalversion).
inline constexpr const char* kIsolabRequiredFragment =
    "# isolab: the release string is <version>-isolab-<key12> from LOCALVERSION\n"
    "# CONFIG_LOCALVERSION_AUTO is not set\n"
    "CONFIG_LOCALVERSION=\"\"\n";

// The fragment KernelRequest::nr_cpus generates: a comment line, then "CONFIG_NR_CPUS=<n>".
// Throws isolab::Error for n == 0.
std::string nr_cpus_fragment(unsigned n);
// Its origin in survival-check messages and meta.json.
inline constexpr const char* kNrCpusFragmentOrigin = "isolab guest CPU count";

struct BuildKeyInputs {
  std::string source_tree_id;             // git tree id of the base commit
  std::vector<std::string> patch_sha256;  // content hashes, in application order
  std::string final_config;               // the whole final .config text
  std::string compiler_version;           // first line of `gcc --version`
  std::string arch;                       // "x86_64"
  std::string target;                     // "bzImage"
};

// Lowercase hex SHA-256 over a canonical, line-based rendering of the inputs plus
// kKernelCacheSchema (see commands.cc for the exact text). Any input change changes the key.
std::string compute_build_key(const BuildKeyInputs& in);

// "-isolab-" + first 12 hex digits of the key; passed as LOCALVERSION=... to make.
std::string localversion_for_key(const std::string& build_key);

// Make variables common to every make call: {"CC=ccache gcc"} when ccache is used, else {}.
std::vector<std::string> make_common_vars(bool use_ccache);

// make O=<build_dir> [vars] <base_target>   (cwd: the source worktree)
std::vector<std::string> make_base_config_argv(const std::filesystem::path& build_dir,
                                               const std::string& base_target, bool use_ccache);

// <src>/scripts/kconfig/merge_config.sh -m -O <build_dir> <build_dir>/.config <fragments...>
// (-m: merge only, the olddefconfig step follows; cwd: the source worktree)
std::vector<std::string> merge_config_argv(const std::filesystem::path& source_dir,
                                           const std::filesystem::path& build_dir,
                                           const std::vector<std::filesystem::path>& fragments);

// make O=<build_dir> [vars] olddefconfig
std::vector<std::string> make_olddefconfig_argv(const std::filesystem::path& build_dir,
                                                bool use_ccache);

// make O=<build_dir> -j<jobs> LOCALVERSION=-isolab-<key12> [CC=ccache gcc] <target>
std::vector<std::string> make_build_argv(const std::filesystem::path& build_dir, int jobs,
                                         const std::string& build_key, bool use_ccache,
                                         const std::string& target = "bzImage");

// make -s O=<build_dir> LOCALVERSION=-isolab-<key12> [CC=ccache gcc] kernelrelease
std::vector<std::string> make_kernelrelease_argv(const std::filesystem::path& build_dir,
                                                 const std::string& build_key, bool use_ccache);

// The bzImage path inside a build dir for an arch ("x86_64" -> arch/x86/boot/bzImage).
std::filesystem::path bzimage_in_build_dir(const std::filesystem::path& build_dir,
                                           const std::string& arch);

}  // namespace isolab
