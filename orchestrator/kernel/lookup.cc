#include "kernel/lookup.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"
#include "kernel/build_argv.h"
#include "kernel/source.h"

namespace fs = std::filesystem;

namespace isolab {

KernelInputKeys kernel_input_keys(const KernelInputs& in) {
  std::string recipe = "schema " + std::to_string(kKernelCacheSchema) + "\ntree " +
                       in.source_tree_id + "\nbase " + in.base_target + "\narch " + in.arch +
                       "\ncompiler " + in.compiler_version + "\nccache " + (in.ccache ? "1" : "0") +
                       "\n";
  for (const auto& text : in.fragment_texts)
    recipe += "fragment " + std::to_string(text.size()) + "\n" + text;
  std::string inputs = recipe;
  if (in.nr_cpus) {
    const std::string nr = nr_cpus_fragment(*in.nr_cpus);
    inputs += "fragment " + std::to_string(nr.size()) + "\n" + nr;
  }
  for (const auto& s : in.patch_sha256) inputs += "patch " + s + "\n";
  return {sha256_hex(recipe).substr(0, 16), sha256_hex(inputs)};
}

std::string host_build_arch() {
  struct utsname u {};
  if (::uname(&u) != 0) return "x86_64";
  return u.machine;
}

namespace {

ProcessResult run_argv(ProcessRunner& runner, std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  return runner.run(spec);
}

// A lookup that ends before the index: the kernel is configured and built by the run.
KernelLookup to_build(std::string why) {
  KernelLookup k;
  k.why = std::move(why);
  return k;
}

// The tree id the run would build from, or nullopt with *why when the cache cannot tell yet.
std::optional<std::string> tarball_tree_id(const KernelSourceSpec& s, const fs::path& cache,
                                           std::string* why) {
  const fs::path tarball = fs::absolute(s.tarball);
  std::error_code ec;
  const fs::path memo = cache / "src" / "tarball-hashes.json";
  if (!fs::is_regular_file(tarball, ec) || !fs::is_regular_file(memo, ec)) {
    *why = "the source " + tarball.filename().string() + " is not unpacked in the cache yet";
    return std::nullopt;
  }
  const std::string id = cached_file_sha256(tarball, memo).substr(0, 16);
  // The memo also holds tarballs that were only hashed (an earlier dry run): their source
  // record exists only once the run unpacked them.
  const fs::path record = cache / "src" / (id + ".json");
  auto j = fs::is_regular_file(record, ec)
               ? nlohmann::json::parse(read_file(record, 1u << 20), nullptr, false)
               : nlohmann::json();
  if (j.is_discarded() || !j.contains("tree_id")) {
    *why = "the source " + tarball.filename().string() + " is not unpacked in the cache yet";
    return std::nullopt;
  }
  return j["tree_id"].get<std::string>();
}

std::optional<std::string> git_tree_id(const KernelSourceSpec& s, const KernelLookupEnv& env,
                                       std::string* why) {
  std::string url = s.git;
  std::error_code ec;
  if (fs::exists(url, ec)) url = fs::absolute(url).string();
  const fs::path repo = env.cache_dir / "git" / (sha256_hex(url).substr(0, 16) + ".git");
  const std::string ref = s.ref.empty() ? "HEAD" : s.ref;
  ProcessResult r = run_argv(env.runner, {"git", "--git-dir", repo.string(), "rev-parse",
                                          "--verify", "--quiet", ref + "^{tree}"});
  const std::string tree = first_line(r.out);
  if (!r.ok() || tree.size() != 40) {
    *why = "the cache's mirror of " + url + " has no ref '" + ref + "' yet";
    return std::nullopt;
  }
  return tree;
}

// The request's inputs before any config step, or nullopt with *why.
std::optional<KernelInputs> request_inputs(const KernelRequest& req, const KernelLookupEnv& env,
                                           std::string* why) {
  KernelInputs in;
  auto tree = req.source.kind == KernelSourceSpec::Kind::git
                  ? git_tree_id(req.source, env, why)
                  : tarball_tree_id(req.source, env.cache_dir, why);
  if (!tree) return std::nullopt;
  in.source_tree_id = *tree;
  in.base_target = req.base_target;
  in.arch = host_build_arch();
  in.compiler_version = host_compiler_version(env.runner);
  in.ccache = env.use_ccache ? *env.use_ccache : program_in_path("ccache");
  in.nr_cpus = req.nr_cpus;
  try {
    for (const auto& f : req.fragments) in.fragment_texts.push_back(read_file(f));
    for (const auto& p : req.patches) in.patch_sha256.push_back(sha256_file(p));
  } catch (const std::exception& e) {
    *why = e.what();
    return std::nullopt;
  }
  in.fragment_texts.emplace_back(kIsolabRequiredFragment);
  return in;
}

// The cached entry the index file names, when it is complete.
std::optional<KernelLookup> index_entry(const fs::path& cache, const std::string& index_key) {
  std::error_code ec;
  const fs::path index = cache / "index" / index_key;
  if (!fs::is_regular_file(index, ec)) return std::nullopt;
  const std::string key = first_line(read_file(index, 200));
  const fs::path entry = cache / "kernels" / key;
  if (key.size() != 64 || !fs::is_regular_file(entry / "bzImage", ec)) return std::nullopt;
  auto meta = nlohmann::json::parse(read_file(entry / "meta.json", 1u << 20), nullptr, false);
  if (meta.is_discarded() || !meta.is_object()) return std::nullopt;
  KernelLookup k;
  k.state = KernelLookup::State::cached;
  k.build_key = key;
  k.kernel_release = meta.value("kernel_release", "");
  return k;
}

// The sum of an entry's recorded stage seconds, or nullopt when it records none.
std::optional<double> recorded_seconds(const nlohmann::json& meta) {
  const auto s = meta.find("seconds");
  if (s == meta.end() || !s->is_object() || s->empty()) return std::nullopt;
  double total = 0;
  for (const auto& [stage, v] : s->items())
    if (v.is_number()) total += v.get<double>();
  return total;
}

// The newest entry of the same source tree and base target that records its build time.
void add_last_build(KernelLookup& k, const fs::path& cache, const std::string& tree_id,
                    const std::string& base_target) {
  std::error_code ec;
  fs::file_time_type newest{};
  for (const auto& e : fs::directory_iterator(cache / "kernels", ec)) {
    auto meta = nlohmann::json::parse(read_file(e.path() / "meta.json", 1u << 20), nullptr, false);
    if (meta.is_discarded() || !meta.is_object() || meta.value("source_tree_id", "") != tree_id ||
        meta.value("base_target", "") != base_target)
      continue;
    const auto seconds = recorded_seconds(meta);
    const auto when = fs::last_write_time(e.path() / "meta.json", ec);
    if (!seconds || ec || (k.last_build_seconds && when <= newest)) continue;
    newest = when;
    k.last_build_seconds = seconds;
    k.last_build_variant = meta.value("variant_name", "");
  }
}

}  // namespace

std::string host_compiler_version(ProcessRunner& runner) {
  ProcessResult r = run_argv(runner, {"gcc", "--version"});
  std::string v = first_line(r.out);
  if (!r.ok() || v.empty())
    throw Error("cannot determine the compiler version: gcc --version " + r.describe());
  return v;
}

bool program_in_path(const std::string& prog) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    if (::access((fs::path(dir) / prog).c_str(), X_OK) == 0) return true;
  }
  return false;
}

KernelLookup lookup_kernel(const KernelRequest& req, const KernelLookupEnv& env) {
  if (req.source.kind == KernelSourceSpec::Kind::prebuilt) {
    KernelLookup k;
    k.state = KernelLookup::State::prebuilt;
    k.kernel_release = req.source.prebuilt_release;
    return k;
  }
  std::string why;
  const fs::path cache = fs::absolute(env.cache_dir);
  const auto in = request_inputs(req, {cache, env.runner, env.use_ccache}, &why);
  if (!in) return to_build(why);
  if (auto k = index_entry(cache, kernel_input_keys(*in).index_key)) return *k;
  KernelLookup k = to_build("no cached kernel for these inputs");
  add_last_build(k, cache, in->source_tree_id, in->base_target);
  return k;
}

}  // namespace isolab
