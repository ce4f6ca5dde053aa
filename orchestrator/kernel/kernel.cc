#include "kernel/kernel.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "kernel/build_log.h"
#include "kernel/cache.h"
#include "kernel/commands.h"
#include "kernel/config_check.h"
#include "kernel/file_lock.h"
#include "kernel/source.h"

namespace fs = std::filesystem;

namespace isolab {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string fmt_seconds(double s) {
  std::ostringstream o;
  o.precision(1);
  o << std::fixed << s << " s";
  return o.str();
}

bool in_path(const std::string& prog) {
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

std::string host_arch() {
  struct utsname u {};
  if (::uname(&u) != 0) return "x86_64";
  return u.machine;
}

std::string safe_name(const std::string& s) {
  std::string out;
  for (char c : s)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return out.empty() ? "kernel" : out;
}

std::string first_line(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.pop_back();
  return l;
}

// Prefixes every error thrown inside with "variant <name>: <step>: ".
class Step {
 public:
  Step(std::string variant) : variant_(std::move(variant)) {}
  template <typename F>
  auto operator()(const std::string& step, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const SpecError&) {
      throw;
    } catch (const std::exception& e) {
      throw Error("variant " + variant_ + ": " + step + ": " + e.what());
    }
  }

 private:
  std::string variant_;
};

// Runs the command; with `poll`, calls it every 200 ms while the command runs (and applies
// env.command_timeout itself, as run() would).
ProcessResult run_polled(const KernelEnv& env, const ProcessSpec& spec,
                         const std::function<void()>& poll) {
  if (!poll) return env.runner.run(spec);
  auto child = env.runner.start(spec);
  const auto t0 = Clock::now();
  for (;;) {
    if (auto r = child->wait_for(std::chrono::milliseconds(200))) return *r;
    poll();
    if (env.command_timeout.count() > 0 && Clock::now() - t0 > env.command_timeout) {
      ProcessResult r = child->terminate();
      r.timed_out = true;
      return r;
    }
  }
}

// Runs one make step with its output appended to the variant log; throws with the first
// error of the log on failure.
void run_logged(const KernelEnv& env, const std::vector<std::string>& argv, const fs::path& cwd,
                const fs::path& log, const std::function<void()>& poll = {}) {
  {
    // A header line so the log says which command produced what follows.
    std::ofstream out(log, std::ios::app);
    out << "\n### " << argv_to_display(argv) << "\n";
  }
  ProcessSpec spec;
  spec.argv = argv;
  spec.cwd = cwd;
  spec.stdout_path = log;
  spec.stderr_to_stdout = true;
  spec.append = true;
  // C locale: ASCII quotes and English messages in the log, so the error scan is stable.
  spec.env = {{"LC_ALL", "C"}};
  spec.timeout = env.command_timeout;
  ProcessResult r = run_polled(env, spec, poll);
  if (r.ok()) return;
  std::string text = fs::exists(log) ? read_file(log, 64u << 20) : "";
  // Only the part of the log this command wrote.
  std::size_t at = text.rfind("\n### ");
  if (at != std::string::npos) text = text.substr(at);
  std::string first = first_build_error(text, cwd.string());
  throw Error(std::string(argv[0] == "make" ? "make" : fs::path(argv[0]).filename().string()) +
              " " + r.describe() + (first.empty() ? "" : "; first error: " + first) +
              "; log: " + log.string());
}

std::string compiler_version(const KernelEnv& env) {
  ProcessSpec spec;
  spec.argv = {"gcc", "--version"};
  ProcessResult r = env.runner.run(spec);
  std::string v = first_line(r.out);
  if (!r.ok() || v.empty())
    throw Error("cannot determine the compiler version: gcc --version " + r.describe());
  return v;
}

KernelArtifact load_entry(const fs::path& entry, const std::vector<PatchId>& patches) {
  mark_cache_use(entry);
  auto j = nlohmann::json::parse(read_file(entry / "meta.json"), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error("corrupt kernel cache entry " + entry.string() + " (meta.json)");
  KernelArtifact a;
  a.bzimage = entry / "bzImage";
  a.kernel_release = j.value("kernel_release", "");
  a.build_key = j.value("build_key", "");
  a.config_sha256 = j.value("config_sha256", "");
  a.source_tree_id = j.value("source_tree_id", "");
  a.patches = patches;
  a.config_path = entry / "config";
  a.from_cache = true;
  a.build_seconds = 0;
  a.log = entry / "build.log";
  return a;
}

bool entry_complete(const fs::path& entry) {
  std::error_code ec;
  return fs::is_regular_file(entry / "meta.json", ec) && fs::is_regular_file(entry / "bzImage", ec);
}

KernelArtifact prebuilt(const KernelRequest& req, const KernelEnv& env) {
  const fs::path p = req.source.prebuilt_bzimage;
  std::error_code ec;
  if (p.empty() || !fs::is_regular_file(p, ec))
    throw Error("variant " + req.variant_name + ": prebuilt kernel image '" + p.string() +
                "' does not exist");
  KernelArtifact a;
  a.bzimage = fs::absolute(p);
  a.kernel_release = req.source.prebuilt_release;
  a.build_key = cached_file_sha256(a.bzimage, env.cache_dir / "src" / "prebuilt-hashes.json");
  a.from_cache = true;
  return a;
}

// The Kbuild steps a log gained since it was opened: reads only what was appended.
class LogStepCounter {
 public:
  explicit LogStepCounter(fs::path log) : log_(std::move(log)) {
    std::error_code ec;
    offset_ = fs::file_size(log_, ec);
    if (ec) offset_ = 0;
  }
  std::size_t poll() {
    std::ifstream in(log_, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset_));
    std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    offset_ += chunk.size();
    partial_ += chunk;
    const std::size_t nl = partial_.rfind('\n');
    if (nl == std::string::npos) return steps_;
    steps_ += count_build_steps(std::string_view(partial_).substr(0, nl + 1));
    partial_.erase(0, nl + 1);
    return steps_;
  }

 private:
  fs::path log_;
  std::uintmax_t offset_ = 0;
  std::string partial_;
  std::size_t steps_ = 0;
};

// The build command's part of a cached entry's log: after its last "### " header.
struct PastBuild {
  std::string header;  // "### make O=<build dir> -j2 ... bzImage"
  std::size_t steps = 0;
  fs::file_time_type when{};
};

std::vector<PastBuild> past_builds(const fs::path& cache, const std::string& tree_id,
                                   const std::string& base_target) {
  std::vector<PastBuild> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache / "kernels", ec)) {
    try {
      auto meta = nlohmann::json::parse(read_file(e.path() / "meta.json", 1u << 20));
      if (meta.value("source_tree_id", "") != tree_id ||
          meta.value("base_target", "") != base_target)
        continue;
      std::string log = read_file(e.path() / "build.log", 64u << 20);
      std::size_t at = log.rfind("\n### ");
      if (at == std::string::npos) continue;
      PastBuild b;
      b.header = log.substr(at + 1, log.find('\n', at + 1) - at - 1);
      b.steps = count_build_steps(std::string_view(log).substr(at));
      b.when = fs::last_write_time(e.path() / "meta.json");
      out.push_back(std::move(b));
    } catch (const std::exception&) {
      // An entry being written or pruned: not an estimate.
    }
  }
  return out;
}

// How many Kbuild steps the build about to run in build_dir should take: a rebuild (vmlinux
// already there) like the last build in that directory, a cold build like the largest build
// of the same source and base config. nullopt when the cache has no such build.
std::optional<std::size_t> expected_build_steps(const fs::path& cache, const fs::path& build_dir,
                                                const std::string& tree_id,
                                                const std::string& base_target) {
  const auto past = past_builds(cache, tree_id, base_target);
  std::error_code ec;
  const bool rebuild = fs::exists(build_dir / "vmlinux", ec);
  std::optional<std::size_t> best;
  fs::file_time_type newest{};
  const std::string here = "O=" + build_dir.string() + " ";
  for (const auto& b : past) {
    if (rebuild && b.header.find(here) != std::string::npos && (!best || b.when > newest)) {
      best = b.steps;
      newest = b.when;
    } else if (!rebuild) {
      best = std::max(best.value_or(0), b.steps);
    }
  }
  return best;
}

// A cold build's Kbuild steps when the cache has no build of the same source and base config
// to count against: measured here, tinyconfig + base.config + isolation.config on 6.1 took
// 1431 steps, with preempt-rt.config on 6.12 1545. A rough prior: the percentage stops at 99
// when a build needs more.
constexpr std::size_t kColdBuildStepsPrior = 1500;

// The config stage's heartbeat: command i of n is running ("config <variant>", commands).
std::function<void()> config_poll(const KernelEnv& env, const std::string& variant, std::size_t i,
                                  std::size_t n) {
  if (!env.meter) return {};
  return [&env, task = "config " + variant, i, n] {
    env.meter->update(task, static_cast<double>(i), static_cast<double>(n), "commands");
  };
}

}  // namespace

fs::path default_cache_dir() {
  if (const char* d = std::getenv("ISOLAB_CACHE_DIR"); d && *d) return d;
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "isolab";
  return "/var/tmp/isolab-cache";
}

KernelArtifact ensure_kernel(const KernelRequest& req, const KernelEnv& env) {
  if (req.source.kind == SourceSpec::Kind::prebuilt) return prebuilt(req, env);
  const std::string variant = req.variant_name.empty() ? "kernel" : req.variant_name;
  Step step(variant);
  auto say = [&](const std::string& m) {
    if (env.progress) env.progress(variant + ": " + m);
  };
  if (env.cache_dir.empty()) throw Error("variant " + variant + ": kernel cache dir is empty");
  const fs::path cache = fs::absolute(env.cache_dir);
  const bool ccache = env.use_ccache ? *env.use_ccache : in_path("ccache");
  const int jobs = env.jobs > 0 ? env.jobs : std::max(1u, std::thread::hardware_concurrency());
  const std::string arch = host_arch();
  const std::string target = "bzImage";
  SourceContext sctx{cache, env.runner, say, env.meter, variant};

  // Inputs known before any config step.
  auto t0 = Clock::now();
  SourceTree src = step("source", [&] { return prepare_source(req.source, sctx); });
  double source_s = seconds_since(t0);
  std::vector<PatchId> patch_ids;
  std::vector<std::string> patch_shas;
  step("patch", [&] {
    for (const auto& p : req.patches) {
      std::error_code ec;
      if (!fs::is_regular_file(p, ec)) throw Error(p.string() + ": patch file not found");
      patch_ids.push_back({p, sha256_file(p)});
      patch_shas.push_back(patch_ids.back().sha256);
    }
  });
  std::vector<ConfigFragment> fragments;
  step("config", [&] {
    for (const auto& f : req.fragments) {
      std::error_code ec;
      if (!fs::is_regular_file(f, ec)) throw Error(f.string() + ": config fragment not found");
      fragments.push_back({f.string(), read_file(f)});
      parse_kconfig_text(fragments.back().text, f.string());  // reject junk before make runs
    }
    fragments.push_back({"isolab required options", kIsolabRequiredFragment});
  });
  const std::string compiler = step("compiler", [&] { return compiler_version(env); });

  // The config recipe decides the build slot (worktree + O= dir shared by patch sets); the
  // full input set decides the index entry that maps straight to a build key.
  std::string recipe = "schema " + std::to_string(kKernelCacheSchema) + "\ntree " + src.tree_id +
                       "\nbase " + req.base_target + "\narch " + arch + "\ncompiler " + compiler +
                       "\nccache " + (ccache ? "1" : "0") + "\n";
  for (const auto& f : fragments)
    recipe += "fragment " + std::to_string(f.text.size()) + "\n" + f.text;
  const std::string slot = sha256_hex(recipe).substr(0, 16);
  std::string inputs = recipe;
  const std::string nr_cpus_text = req.nr_cpus ? nr_cpus_fragment(*req.nr_cpus) : "";
  if (req.nr_cpus) {
    inputs += "fragment " + std::to_string(nr_cpus_text.size()) + "\n" + nr_cpus_text;
    fragments.insert(fragments.end() - 1, {kNrCpusFragmentOrigin, nr_cpus_text});
  }
  for (const auto& s : patch_shas) inputs += "patch " + s + "\n";
  const fs::path index_file = cache / "index" / sha256_hex(inputs);
  auto try_index = [&]() -> std::optional<KernelArtifact> {
    std::error_code ec;
    if (!fs::is_regular_file(index_file, ec)) return std::nullopt;
    std::string key = first_line(read_file(index_file, 200));
    fs::path entry = cache / "kernels" / key;
    if (key.size() != 64 || !entry_complete(entry)) return std::nullopt;
    return load_entry(entry, patch_ids);
  };
  if (auto a = try_index()) {
    say("cache hit " + a->build_key.substr(0, 12) + " (" + a->kernel_release + ")");
    return *a;
  }

  FileLock slot_lock(cache / "locks" / ("slot-" + slot + ".lock"), say);
  if (auto a = try_index()) {  // built by another process while we waited
    say("cache hit " + a->build_key.substr(0, 12) + " (" + a->kernel_release + ")");
    return *a;
  }
  const fs::path worktree = cache / "worktrees" / slot;
  const fs::path build_dir = cache / "build" / slot;
  fs::create_directories(build_dir);
  mark_cache_use(build_dir);
  fs::path log_dir = env.log_dir.empty() ? cache / "logs" : env.log_dir;
  fs::create_directories(log_dir);
  const fs::path log = fs::absolute(log_dir / ("build-" + safe_name(variant) + ".log"));
  write_file_atomic(
      log, "# isolab kernel build, variant " + variant + ", source " + src.description + "\n");

  t0 = Clock::now();
  std::string commit =
      step("patch", [&] { return checkout_variant(src, worktree, req.patches, patch_shas, sctx); });
  double patch_s = seconds_since(t0);

  // Config. When the result equals the .config of the previous build in this dir, its mtime is
  // restored so that make does not re-run syncconfig and rebuild everything.
  t0 = Clock::now();
  const fs::path config = build_dir / ".config";
  std::string old_config;
  fs::file_time_type old_mtime{};
  if (fs::exists(config)) {
    old_config = read_file(config);
    old_mtime = fs::last_write_time(config);
  }
  const fs::path required = build_dir / "isolab-required.config";
  write_file_atomic(required, kIsolabRequiredFragment);
  const fs::path nr_cpus_file = build_dir / "isolab-nr-cpus.config";
  if (req.nr_cpus) write_file_atomic(nr_cpus_file, nr_cpus_text);
  std::string final_config = step("config", [&] {
    std::vector<fs::path> frag_paths;
    for (const auto& f : req.fragments) frag_paths.push_back(fs::absolute(f));
    if (req.nr_cpus) frag_paths.push_back(nr_cpus_file);
    frag_paths.push_back(required);
    const std::vector<std::vector<std::string>> commands = {
        make_base_config_argv(build_dir, req.base_target, ccache),
        merge_config_argv(worktree, build_dir, frag_paths),
        make_olddefconfig_argv(build_dir, ccache)};
    for (std::size_t i = 0; i < commands.size(); ++i)
      run_logged(env, commands[i], worktree, log, config_poll(env, variant, i, commands.size()));
    if (env.meter) env.meter->finish("config " + variant);
    if (!fs::exists(config))
      throw Error("no .config in " + build_dir.string() + " after olddefconfig");
    std::string text = read_file(config);
    auto bad = check_config_survival(fragments, text);
    if (!bad.empty()) {
      std::string msg;
      for (const auto& m : bad) msg += (msg.empty() ? "" : "; ") + m.message();
      throw Error(msg);
    }
    return text;
  });
  if (!old_config.empty() && old_config == final_config) fs::last_write_time(config, old_mtime);
  double config_s = seconds_since(t0);
  const std::string config_sha = sha256_hex(final_config);

  BuildKeyInputs key_in{src.tree_id, patch_shas, final_config, compiler, arch, target};
  const std::string key = compute_build_key(key_in);
  const fs::path entry = cache / "kernels" / key;
  say("build key " + key.substr(0, 12) + " (source " + fmt_seconds(source_s) + ", patches " +
      fmt_seconds(patch_s) + ", config " + fmt_seconds(config_s) + ")");
  // Runs hold complete entries with a shared lock (hold_kernel_entry): look before locking.
  std::optional<FileLock> key_lock;
  if (!entry_complete(entry)) key_lock.emplace(cache / "locks" / (key + ".lock"), say);
  if (entry_complete(entry)) {
    write_file_atomic(index_file, key + "\n");
    say("cache hit " + key.substr(0, 12) + " after config");
    return load_entry(entry, patch_ids);
  }

  t0 = Clock::now();
  say("building " + target + " with make -j" + std::to_string(jobs) + (ccache ? " (ccache)" : "") +
      ", log " + log.string());
  step("build", [&] {
    std::function<void()> poll;
    std::optional<LogStepCounter> counter;
    std::optional<double> total;
    const std::string task = "build " + variant;
    if (env.meter) {
      if (auto n = expected_build_steps(cache, build_dir, src.tree_id, req.base_target)) {
        total = static_cast<double>(*n);
      } else {
        total = static_cast<double>(kColdBuildStepsPrior);
        say("no earlier build of this source and base config in the cache: progress counts "
            "against an estimate of " +
            std::to_string(kColdBuildStepsPrior) + " steps");
      }
      counter.emplace(log);
      poll = [&] { env.meter->update(task, static_cast<double>(counter->poll()), total, "steps"); };
    }
    run_logged(env, make_build_argv(build_dir, jobs, key, ccache, target), worktree, log, poll);
    if (env.meter) env.meter->finish(task);
  });
  const double build_s = seconds_since(t0);
  const std::string release = step("build", [&] {
    ProcessSpec spec;
    spec.argv = make_kernelrelease_argv(build_dir, key, ccache);
    spec.cwd = worktree;
    ProcessResult r = env.runner.run(spec);
    std::string rel = first_line(r.out);
    if (!r.ok() || rel.empty())
      throw Error("make kernelrelease " + r.describe() + ": " + sanitize_excerpt(r.err, 400));
    if (rel.find(localversion_for_key(key)) == std::string::npos)
      throw Error("kernel release '" + sanitize_excerpt(rel, 200) + "' does not carry " +
                  localversion_for_key(key));
    return rel;
  });

  step("publish", [&] {
    const fs::path image = bzimage_in_build_dir(build_dir, arch);
    if (!fs::is_regular_file(image))
      throw Error("make succeeded but " + image.string() + " is missing");
    const fs::path tmp = cache / "kernels" / (".tmp-" + key + "-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp);
    fs::copy_file(image, tmp / "bzImage");
    write_file_atomic(tmp / "config", final_config);
    write_file_atomic(tmp / "kernel_release", release + "\n");
    fs::copy_file(log, tmp / "build.log");
    nlohmann::json patches = nlohmann::json::array();
    for (const auto& p : patch_ids)
      patches.push_back({{"path", p.path.string()}, {"sha256", p.sha256}});
    nlohmann::json frags = nlohmann::json::array();
    for (const auto& f : fragments)
      frags.push_back({{"path", f.origin}, {"sha256", sha256_hex(f.text)}});
    nlohmann::json meta{
        {"schema_version", kKernelCacheSchema},
        {"build_key", key},
        {"kernel_release", release},
        {"config_sha256", config_sha},
        {"source", src.description},
        {"source_tree_id", src.tree_id},
        {"base_commit", src.base_commit},
        {"variant_commit", commit},
        {"patches", patches},
        {"base_target", req.base_target},
        {"fragments", frags},
        {"compiler", compiler},
        {"arch", arch},
        {"target", target},
        {"ccache", ccache},
        {"jobs", jobs},
        {"variant_name", variant},
        {"seconds",
         {{"source", source_s}, {"patch", patch_s}, {"config", config_s}, {"build", build_s}}}};
    write_file_atomic(tmp / "meta.json", json_text(meta, 2) + "\n");
    fs::create_directories(entry.parent_path());
    if (fs::exists(entry)) fs::remove_all(entry);  // incomplete leftover (we hold the key lock)
    fs::rename(tmp, entry);
    write_file_atomic(index_file, key + "\n");
  });
  mark_cache_use(entry);
  say("built " + release + " in " + fmt_seconds(build_s));

  KernelArtifact a;
  a.bzimage = entry / "bzImage";
  a.kernel_release = release;
  a.build_key = key;
  a.config_sha256 = config_sha;
  a.patches = patch_ids;
  a.config_path = entry / "config";
  a.from_cache = false;
  a.build_seconds = build_s;
  a.log = log;
  a.source_tree_id = src.tree_id;
  return a;
}

}  // namespace isolab
