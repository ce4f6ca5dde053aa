#include "kernel/build_argv.h"

#include "base/error.h"
#include "base/files.h"

namespace isolab {

std::string nr_cpus_fragment(unsigned n) {
  if (n == 0) throw Error("guest kernel NR_CPUS must be at least 1");
  return "# isolab: NR_CPUS follows the guest's CPU count\nCONFIG_NR_CPUS=" + std::to_string(n) +
         "\n";
}

std::string compute_build_key(const BuildKeyInputs& in) {
  // One "field value" line per input; the config goes last with its length so that no
  // concatenation of other fields can collide with it.
  std::string s = "isolab-kernel-build-key schema " + std::to_string(kKernelCacheSchema) + "\n";
  s += "source-tree " + in.source_tree_id + "\n";
  s += "patches " + std::to_string(in.patch_sha256.size()) + "\n";
  for (const auto& p : in.patch_sha256) s += "patch " + p + "\n";
  s += "compiler " + in.compiler_version + "\n";
  s += "arch " + in.arch + "\n";
  s += "target " + in.target + "\n";
  s += "config-bytes " + std::to_string(in.final_config.size()) + "\n";
  s += in.final_config;
  return sha256_hex(s);
}

std::string localversion_for_key(const std::string& build_key) {
  if (build_key.size() < 12) throw Error("build key too short: '" + build_key + "'");
  return "-isolab-" + build_key.substr(0, 12);
}

std::vector<std::string> make_common_vars(bool use_ccache) {
  if (use_ccache) return {"CC=ccache gcc"};
  return {};
}

std::vector<std::string> make_base_config_argv(const std::filesystem::path& build_dir,
                                               const std::string& base_target, bool use_ccache) {
  std::vector<std::string> argv{"make", "O=" + build_dir.string()};
  for (auto& v : make_common_vars(use_ccache)) argv.push_back(v);
  argv.push_back(base_target);
  return argv;
}

std::vector<std::string> merge_config_argv(const std::filesystem::path& source_dir,
                                           const std::filesystem::path& build_dir,
                                           const std::vector<std::filesystem::path>& fragments) {
  std::vector<std::string> argv{(source_dir / "scripts/kconfig/merge_config.sh").string(), "-m",
                                "-O", build_dir.string(), (build_dir / ".config").string()};
  for (const auto& f : fragments) argv.push_back(f.string());
  return argv;
}

std::vector<std::string> make_olddefconfig_argv(const std::filesystem::path& build_dir,
                                                bool use_ccache) {
  return make_base_config_argv(build_dir, "olddefconfig", use_ccache);
}

std::vector<std::string> make_build_argv(const std::filesystem::path& build_dir, int jobs,
                                         const std::string& build_key, bool use_ccache,
                                         const std::string& target) {
  std::vector<std::string> argv{"make", "O=" + build_dir.string(),
                                "-j" + std::to_string(jobs < 1 ? 1 : jobs),
                                "LOCALVERSION=" + localversion_for_key(build_key)};
  for (auto& v : make_common_vars(use_ccache)) argv.push_back(v);
  argv.push_back(target);
  return argv;
}

std::vector<std::string> make_kernelrelease_argv(const std::filesystem::path& build_dir,
                                                 const std::string& build_key, bool use_ccache) {
  std::vector<std::string> argv{"make", "-s", "O=" + build_dir.string(),
                                "LOCALVERSION=" + localversion_for_key(build_key)};
  for (auto& v : make_common_vars(use_ccache)) argv.push_back(v);
  argv.emplace_back("kernelrelease");
  return argv;
}

std::filesystem::path bzimage_in_build_dir(const std::filesystem::path& build_dir,
                                           const std::string& arch) {
  if (arch == "x86_64" || arch == "i386" || arch == "i686")
    return build_dir / "arch/x86/boot/bzImage";
  throw Error("unsupported kernel arch '" + arch + "' (only x86 bzImage builds are supported)");
}

}  // namespace isolab
