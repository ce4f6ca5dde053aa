#include "kernel/kernel.h"

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
#include "base/progress.h"
#include "base/text.h"
#include "kernel/build_argv.h"
#include "kernel/build_log.h"
#include "kernel/cache.h"
#include "kernel/config_check.h"
#include "kernel/extra_warnings.h"
#include "kernel/file_lock.h"
#include "kernel/lookup.h"
#include "kernel/mbox_series.h"
#include "kernel/robot_checks.h"
#include "kernel/source.h"

namespace fs = std::filesystem;

namespace isolab {

namespace {

// The W=1 and sparse findings of a built kernel, in its cache entry (kernel/extra_warnings.h).
constexpr const char* kExtraWarningsFile = "extra-warnings.json";

using Clock = std::chrono::steady_clock;

std::string fmt_seconds(double s) {
  std::ostringstream o;
  o.precision(1);
  o << std::fixed << s << " s";
  return o.str();
}

std::string safe_name(const std::string& s) {
  std::string out;
  for (char c : s)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return out.empty() ? "kernel" : out;
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

// The W=1 and sparse findings a build kept in its entry; none when it kept none (built
// without patches, with the checks off, or by an isolab before them) or the file is unreadable.
std::vector<BuildWarning> read_extra_warnings(const fs::path& entry) {
  std::vector<BuildWarning> out;
  std::error_code ec;
  if (!fs::is_regular_file(entry / kExtraWarningsFile, ec)) return out;
  const auto j = nlohmann::json::parse(read_file(entry / kExtraWarningsFile), nullptr, false);
  try {
    for (const auto& w : j) out.push_back(build_warning_from_json(w));
  } catch (const Error&) {
    out.clear();
  }
  return out;
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
  std::error_code ec;
  if (fs::is_regular_file(entry / "System.map", ec)) a.system_map = entry / "System.map";
  a.from_cache = true;
  a.build_seconds = 0;
  a.log = entry / "build.log";
  a.robot_findings = read_extra_warnings(entry);
  return a;
}

bool entry_complete(const fs::path& entry) {
  std::error_code ec;
  return fs::is_regular_file(entry / "meta.json", ec) && fs::is_regular_file(entry / "bzImage", ec);
}

KernelArtifact prebuilt(const KernelRequest& req, const KernelEnv& env) {
  const fs::path p = req.source.prebuilt;
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

// One ensure_kernel call, stage by stage (run() reads top to bottom). Each stage fills the
// members the next ones read; every error is prefixed by Step with the variant and stage.
class KernelBuilder {
 public:
  KernelBuilder(const KernelRequest& req, const KernelEnv& env)
      : req_(req),
        env_(env),
        variant_(req.variant_name.empty() ? "kernel" : req.variant_name),
        step_(variant_) {}

  KernelArtifact run() {
    if (env_.cache_dir.empty()) throw Error("variant " + variant_ + ": kernel cache dir is empty");
    read_inputs();
    derive_slot_and_index();
    if (auto a = index_hit()) return with_robot_findings(*a);
    slot_lock_.emplace(cache_ / "locks" / ("slot-" + slot_ + ".lock"), say_fn());
    if (auto a = index_hit()) return with_robot_findings(*a);  // built by another process
    open_slot();
    check_out_variant();
    configure();
    derive_build_key();
    if (auto a = entry_hit()) return with_robot_findings(*a);
    make_image();
    extra_warnings_pass();
    read_kernel_release();
    publish();
    return with_robot_findings(built_artifact());
  }

 private:
  void say(const std::string& m) const {
    if (env_.progress) env_.progress(variant_ + ": " + m);
  }
  std::function<void(const std::string&)> say_fn() const {
    return [this](const std::string& m) { say(m); };
  }

  // The robot's checks of the patches against the source's base commit (kernel/robot_checks.h);
  // a check that cannot run is said and leaves no findings, never failing the kernel.
  KernelArtifact with_robot_findings(KernelArtifact a) const {
    a.stage_seconds = stage_seconds();
    if (req_.patches.empty()) return a;
    const auto t0 = Clock::now();
    std::vector<BuildWarning> found;
    try {
      found = robot_checks(src_.repo, src_.base_commit, req_.patches, env_.runner,
                           fs::temp_directory_path() /
                               ("isolab-robot-" + std::to_string(::getpid()) + "-" + variant_),
                           req_.robot_checks);
    } catch (const std::exception& e) {  // also a filesystem error of the work directory
      say(std::string("robot checks not run: ") + e.what());
    }
    // The W=1 and sparse findings the artifact came with (built now, or from its entry) follow.
    found.insert(found.end(), a.robot_findings.begin(), a.robot_findings.end());
    a.robot_findings = std::move(found);
    say("robot checks: " + std::to_string(a.robot_findings.size()) + " finding(s)");
    a.stage_seconds.emplace_back("robot_checks", seconds_since(t0));
    return a;
  }

  // The stages this call ran so far, in order (KernelArtifact::stage_seconds).
  std::vector<std::pair<std::string, double>> stage_seconds() const {
    std::vector<std::pair<std::string, double>> out = {{"source", seconds_.source},
                                                       {"patches", seconds_.patch}};
    if (seconds_.configured) out.emplace_back("config", seconds_.config);
    if (seconds_.built) out.emplace_back("make", seconds_.build);
    if (seconds_.extra_run) out.emplace_back("w1_sparse", seconds_.extra);
    return out;
  }

  // Stage 1: what is known before any config step: the source tree (unpacked once), the
  // patches' and fragments' contents (junk fragments are rejected here), the compiler.
  void read_inputs() {
    cache_ = fs::absolute(env_.cache_dir);
    ccache_ = env_.use_ccache ? *env_.use_ccache : program_in_path("ccache");
    jobs_ = env_.jobs > 0 ? env_.jobs
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    arch_ = host_build_arch();
    sctx_.emplace(SourceContext{cache_, env_.runner, say_fn(), env_.meter, variant_});
    auto t0 = Clock::now();
    src_ = step_("source", [&] { return prepare_source(req_.source, *sctx_); });
    seconds_.source = seconds_since(t0);
    t0 = Clock::now();
    step_("patch", [&] {
      for (const auto& p : req_.patches) {
        std::error_code ec;
        if (!fs::is_regular_file(p, ec)) throw Error(p.string() + ": patch file not found");
        patch_ids_.push_back({p, sha256_file(p), mail_subject(p, env_.runner)});
        patch_shas_.push_back(patch_ids_.back().sha256);
      }
    });
    seconds_.patch = seconds_since(t0);
    step_("config", [&] {
      for (const auto& f : req_.fragments) {
        std::error_code ec;
        if (!fs::is_regular_file(f, ec)) throw Error(f.string() + ": config fragment not found");
        fragments_.push_back({f.string(), read_file(f)});
        parse_kconfig_text(fragments_.back().text, f.string());  // reject junk before make runs
      }
      fragments_.push_back({"isolab required options", kIsolabRequiredFragment});
    });
    compiler_ = step_("compiler", [&] { return host_compiler_version(env_.runner); });
  }

  // Stage 2: the config recipe decides the build slot (worktree + O= dir shared by patch sets);
  // the full input set (recipe, NR_CPUS, patches) decides the index entry that maps straight
  // to a build key.
  void derive_slot_and_index() {
    KernelInputs in{src_.tree_id, req_.base_target, arch_,      compiler_, ccache_,
                    {},           req_.nr_cpus,     patch_shas_};
    for (const auto& f : fragments_) in.fragment_texts.push_back(f.text);
    const KernelInputKeys keys = kernel_input_keys(in);
    slot_ = keys.slot;
    index_file_ = cache_ / "index" / keys.index_key;
    if (req_.nr_cpus) {
      nr_cpus_text_ = nr_cpus_fragment(*req_.nr_cpus);
      fragments_.insert(fragments_.end() - 1, {kNrCpusFragmentOrigin, nr_cpus_text_});
    }
  }

  // The cached entry the index maps these inputs to, when it is complete.
  std::optional<KernelArtifact> index_hit() const {
    std::error_code ec;
    if (!fs::is_regular_file(index_file_, ec)) return std::nullopt;
    const std::string key = first_line(read_file(index_file_, 200));
    const fs::path entry = cache_ / "kernels" / key;
    if (key.size() != 64 || !entry_complete(entry)) return std::nullopt;
    KernelArtifact a = load_entry(entry, patch_ids_);
    say("cache hit " + a.build_key.substr(0, 12) + " (" + a.kernel_release + ")");
    return a;
  }

  // Stage 3 (under the slot lock): the slot's worktree and build dir, and a fresh build log.
  void open_slot() {
    worktree_ = cache_ / "worktrees" / slot_;
    build_dir_ = cache_ / "build" / slot_;
    fs::create_directories(build_dir_);
    mark_cache_use(build_dir_);
    const fs::path log_dir = env_.log_dir.empty() ? cache_ / "logs" : env_.log_dir;
    fs::create_directories(log_dir);
    log_ = fs::absolute(log_dir / ("build-" + safe_name(variant_) + ".log"));
    write_file_atomic(
        log_, "# isolab kernel build, variant " + variant_ + ", source " + src_.description + "\n");
  }

  // Stage 4: the worktree switched to this variant's commit (one commit per patch set).
  void check_out_variant() {
    auto t0 = Clock::now();
    commit_ = step_("patch", [&] {
      return checkout_variant(src_, worktree_, req_.patches, patch_shas_, *sctx_);
    });
    seconds_.patch += seconds_since(t0);
  }

  // Stage 5: base target, merge_config.sh, olddefconfig, then the survival check of every
  // fragment. When the result equals the .config of the previous build in this dir, its mtime
  // is restored so that make does not re-run syncconfig and rebuild everything.
  void configure() {
    auto t0 = Clock::now();
    const fs::path config = build_dir_ / ".config";
    std::string old_config;
    fs::file_time_type old_mtime{};
    if (fs::exists(config)) {
      old_config = read_file(config);
      old_mtime = fs::last_write_time(config);
    }
    final_config_ = step_("config", [&] {
      run_config_commands();
      if (!fs::exists(config))
        throw Error("no .config in " + build_dir_.string() + " after olddefconfig");
      std::string text = read_file(config);
      auto bad = check_config_survival(fragments_, text);
      if (!bad.empty()) {
        std::string msg;
        for (const auto& m : bad) msg += (msg.empty() ? "" : "; ") + m.message();
        throw Error(msg);
      }
      return text;
    });
    if (!old_config.empty() && old_config == final_config_) fs::last_write_time(config, old_mtime);
    seconds_.config = seconds_since(t0);
    seconds_.configured = true;
  }

  void run_config_commands() const {
    const fs::path required = build_dir_ / "isolab-required.config";
    write_file_atomic(required, kIsolabRequiredFragment);
    std::vector<fs::path> frag_paths;
    for (const auto& f : req_.fragments) frag_paths.push_back(fs::absolute(f));
    if (req_.nr_cpus) {
      const fs::path nr_cpus_file = build_dir_ / "isolab-nr-cpus.config";
      write_file_atomic(nr_cpus_file, nr_cpus_text_);
      frag_paths.push_back(nr_cpus_file);
    }
    frag_paths.push_back(required);
    const std::vector<std::vector<std::string>> commands = {
        make_base_config_argv(build_dir_, req_.base_target, ccache_),
        merge_config_argv(worktree_, build_dir_, frag_paths),
        make_olddefconfig_argv(build_dir_, ccache_)};
    for (std::size_t i = 0; i < commands.size(); ++i)
      run_logged(env_, commands[i], worktree_, log_,
                 config_poll(env_, variant_, i, commands.size()));
    if (env_.meter) env_.meter->finish("config " + variant_);
  }

  // Stage 6: the build key from the final .config and the other inputs.
  void derive_build_key() {
    config_sha_ = sha256_hex(final_config_);
    key_ = compute_build_key({src_.tree_id, patch_shas_, final_config_, compiler_, arch_, kTarget});
    entry_ = cache_ / "kernels" / key_;
    say("build key " + key_.substr(0, 12) + " (source " + fmt_seconds(seconds_.source) +
        ", patches " + fmt_seconds(seconds_.patch) + ", config " + fmt_seconds(seconds_.config) +
        ")");
  }

  // A complete entry for the key (another patch set or NR_CPUS gave the same .config), else
  // nothing, with the key's lock held for the build. Runs hold complete entries with a shared
  // lock (hold_kernel_entry): look before locking.
  std::optional<KernelArtifact> entry_hit() {
    if (!entry_complete(entry_)) key_lock_.emplace(cache_ / "locks" / (key_ + ".lock"), say_fn());
    if (!entry_complete(entry_)) return std::nullopt;
    write_file_atomic(index_file_, key_ + "\n");
    say("cache hit " + key_.substr(0, 12) + " after config");
    return load_entry(entry_, patch_ids_);
  }

  // Stage 7: make bzImage, its Kbuild steps counted as progress against the expected total.
  void make_image() {
    auto t0 = Clock::now();
    say("building " + std::string(kTarget) + " with make -j" + std::to_string(jobs_) +
        (ccache_ ? " (ccache)" : "") + ", log " + log_.string());
    step_("build", [&] {
      std::function<void()> poll;
      std::optional<LogStepCounter> counter;
      std::optional<double> total;
      const std::string task = "build " + variant_;
      if (env_.meter) {
        total = static_cast<double>(build_steps_estimate());
        counter.emplace(log_);
        poll = [&] {
          env_.meter->update(task, static_cast<double>(counter->poll()), total, "steps");
        };
      }
      run_logged(env_, make_build_argv(build_dir_, jobs_, key_, ccache_, kTarget), worktree_, log_,
                 poll);
      if (!env_.meter) return;
      // The steps make really took, as a 100% line: the estimate may have been off, and without
      // it the throttle can leave the build's last seconds with no line.
      const double steps = static_cast<double>(counter->poll());
      env_.meter->update(task, steps, steps, "steps", true);
      env_.meter->finish(task);
    });
    seconds_.build = seconds_since(t0);
    seconds_.built = true;
  }

  // Stage 7b: the touched .c files compiled again at W=1 and checked by sparse (where installed),
  // after the series and at its base, in this build dir; what the series adds becomes robot
  // findings (kernel/extra_warnings.h). A pass that cannot run is said, never a build failure.
  void extra_warnings_pass() {
    const RobotChecks& rc = req_.robot_checks;
    const bool sparse = rc.sparse && program_in_path("sparse");
    if (req_.patches.empty() || !(rc.w1 || sparse)) return;
    const auto t0 = Clock::now();
    extra_warnings_passes(rc, sparse);
    seconds_.extra = seconds_since(t0);
    seconds_.extra_run = true;
  }

  void extra_warnings_passes(const RobotChecks& rc, bool sparse) {
    if (rc.sparse && !sparse) say("sparse is not installed: the sparse check does not run");
    std::vector<std::string> touched;
    for (const auto& p : req_.patches)
      for (auto& f : patch_touched_files(read_file(p, 16u << 20))) touched.push_back(f);
    const std::vector<std::string> objects = compiled_objects(touched, build_dir_);
    extra_.emplace();
    if (objects.empty()) return;
    try {
      const auto after = extra_pass("series", objects, rc.w1, sparse);
      switch_worktree(worktree_, src_.base_commit, *sctx_);
      const auto before = extra_pass("base", objects, rc.w1, sparse);
      switch_worktree(worktree_, commit_, *sctx_);
      const std::string log = read_file(log_, 64u << 20);
      extra_ = added_warnings(before, after, parse_build_warnings(log, build_log_source_dir(log)));
      say(std::string(rc.w1 ? "W=1" : "") + (rc.w1 && sparse ? " and " : "") +
          (sparse ? "sparse" : "") + " on " + std::to_string(objects.size()) +
          " touched object(s): " + std::to_string(extra_->size()) + " new warning(s)");
    } catch (const std::exception& e) {  // also a filesystem error
      say(std::string("W=1/sparse checks not run: ") + e.what());
      extra_.reset();
      try {
        switch_worktree(worktree_, commit_, *sctx_);
      } catch (const Error&) {  // the next build checks its own commit out anyway
      }
    }
  }

  // One W=1/sparse pass over those of `objects` whose source the worktree's commit has (a file
  // the series adds is not at its base), each source touched first so that make compiles (and
  // checks) it; its log is extra-<name>-<variant>.log beside the build log.
  std::vector<BuildWarning> extra_pass(const std::string& name,
                                       const std::vector<std::string>& all_objects, bool w1,
                                       bool sparse) {
    std::vector<std::string> objects;
    for (const std::string& o : all_objects) {
      const fs::path source = worktree_ / (o.substr(0, o.size() - 2) + ".c");
      std::error_code ec;
      if (!fs::is_regular_file(source, ec)) continue;
      fs::last_write_time(source, fs::file_time_type::clock::now());
      objects.push_back(o);
    }
    if (objects.empty()) return {};
    const fs::path log =
        log_.parent_path() / ("extra-" + name + "-" + safe_name(variant_) + ".log");
    write_file_atomic(log,
                      "# isolab W=1/sparse pass at the " + name + ", variant " + variant_ + "\n");
    run_logged(env_, extra_warnings_argv(build_dir_, jobs_, key_, ccache_, w1, sparse, objects),
               worktree_, log);
    return parse_extra_warnings(read_file(log, 64u << 20), worktree_.string());
  }

  std::size_t build_steps_estimate() const {
    if (auto n = expected_build_steps(cache_, build_dir_, src_.tree_id, req_.base_target))
      return *n;
    say("no earlier build of this source and base config in the cache: progress counts "
        "against an estimate of " +
        std::to_string(kColdBuildStepsPrior) + " steps");
    return kColdBuildStepsPrior;
  }

  // Stage 8: `make kernelrelease`, which must carry the key's LOCALVERSION.
  void read_kernel_release() {
    release_ = step_("build", [&] {
      ProcessSpec spec;
      spec.argv = make_kernelrelease_argv(build_dir_, key_, ccache_);
      spec.cwd = worktree_;
      ProcessResult r = env_.runner.run(spec);
      std::string rel = first_line(r.out);
      if (!r.ok() || rel.empty())
        throw Error("make kernelrelease " + r.describe() + ": " + sanitize_excerpt(r.err, 400));
      if (rel.find(localversion_for_key(key_)) == std::string::npos)
        throw Error("kernel release '" + sanitize_excerpt(rel, 200) + "' does not carry " +
                    localversion_for_key(key_));
      return rel;
    });
  }

  // Stage 9: the entry written in a temporary directory and renamed into place, then indexed.
  void publish() {
    step_("publish", [&] {
      const fs::path image = bzimage_in_build_dir(build_dir_, arch_);
      if (!fs::is_regular_file(image))
        throw Error("make succeeded but " + image.string() + " is missing");
      const fs::path tmp = cache_ / "kernels" / (".tmp-" + key_ + "-" + std::to_string(::getpid()));
      std::error_code ec;
      fs::remove_all(tmp, ec);
      fs::create_directories(tmp);
      fs::copy_file(image, tmp / "bzImage");
      // The symbol table, for attributing counted kernel instructions to functions.
      if (fs::is_regular_file(build_dir_ / "System.map", ec))
        fs::copy_file(build_dir_ / "System.map", tmp / "System.map");
      write_file_atomic(tmp / "config", final_config_);
      write_file_atomic(tmp / "kernel_release", release_ + "\n");
      fs::copy_file(log_, tmp / "build.log");
      write_file_atomic(tmp / "meta.json", json_text(entry_meta(), 2) + "\n");
      if (extra_) {
        nlohmann::json extra = nlohmann::json::array();
        for (const auto& w : *extra_) extra.push_back(build_warning_to_json(w));
        write_file_atomic(tmp / kExtraWarningsFile, json_text(extra, 2) + "\n");
      }
      fs::create_directories(entry_.parent_path());
      if (fs::exists(entry_)) fs::remove_all(entry_);  // incomplete leftover (we hold the key lock)
      fs::rename(tmp, entry_);
      write_file_atomic(index_file_, key_ + "\n");
    });
    mark_cache_use(entry_);
    say("built " + release_ + " in " + fmt_seconds(seconds_.build));
  }

  nlohmann::json entry_meta() const {
    nlohmann::json patches = nlohmann::json::array();
    for (const auto& p : patch_ids_)
      patches.push_back({{"path", p.path.string()}, {"sha256", p.sha256}, {"subject", p.subject}});
    nlohmann::json frags = nlohmann::json::array();
    for (const auto& f : fragments_)
      frags.push_back({{"path", f.origin}, {"sha256", sha256_hex(f.text)}});
    return {{"schema_version", kKernelCacheSchema},
            {"build_key", key_},
            {"kernel_release", release_},
            {"config_sha256", config_sha_},
            {"source", src_.description},
            {"source_tree_id", src_.tree_id},
            {"base_commit", src_.base_commit},
            {"variant_commit", commit_},
            {"patches", patches},
            {"base_target", req_.base_target},
            {"fragments", frags},
            {"compiler", compiler_},
            {"arch", arch_},
            {"target", kTarget},
            {"ccache", ccache_},
            {"jobs", jobs_},
            {"variant_name", variant_},
            {"seconds",
             {{"source", seconds_.source},
              {"patch", seconds_.patch},
              {"config", seconds_.config},
              {"build", seconds_.build}}}};
  }

  KernelArtifact built_artifact() const {
    KernelArtifact a;
    a.bzimage = entry_ / "bzImage";
    a.kernel_release = release_;
    a.build_key = key_;
    a.config_sha256 = config_sha_;
    a.patches = patch_ids_;
    a.config_path = entry_ / "config";
    std::error_code ec;
    if (fs::is_regular_file(entry_ / "System.map", ec)) a.system_map = entry_ / "System.map";
    a.from_cache = false;
    a.build_seconds = seconds_.build;
    a.log = log_;
    a.source_tree_id = src_.tree_id;
    a.robot_findings = extra_.value_or(std::vector<BuildWarning>{});
    return a;
  }

  static constexpr const char* kTarget = "bzImage";

  const KernelRequest& req_;
  const KernelEnv& env_;
  const std::string variant_;
  Step step_;
  // read_inputs
  fs::path cache_;
  bool ccache_ = false;
  int jobs_ = 1;
  std::string arch_;
  std::optional<SourceContext> sctx_;
  SourceTree src_;
  std::vector<PatchId> patch_ids_;
  std::vector<std::string> patch_shas_;
  std::vector<ConfigFragment> fragments_;
  std::string compiler_;
  // derive_slot_and_index
  std::string slot_, nr_cpus_text_;
  fs::path index_file_;
  // open_slot, check_out_variant, configure
  fs::path worktree_, build_dir_, log_;
  std::string commit_, final_config_;
  // derive_build_key, make_image, read_kernel_release
  std::string config_sha_, key_, release_;
  fs::path entry_;
  // extra_warnings_pass: what the series adds at W=1 and in sparse; nullopt when not run.
  std::optional<std::vector<BuildWarning>> extra_;
  struct {
    double source = 0, patch = 0, config = 0, build = 0, extra = 0;
    bool configured = false, built = false, extra_run = false;
  } seconds_;
  // Held until the call returns; the key lock is released first.
  std::optional<FileLock> slot_lock_;
  std::optional<FileLock> key_lock_;
};

}  // namespace

fs::path default_cache_dir() {
  if (const char* d = std::getenv("ISOLAB_CACHE_DIR"); d && *d) return d;
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "isolab";
  return "/var/tmp/isolab-cache";
}

KernelArtifact ensure_kernel(const KernelRequest& req, const KernelEnv& env) {
  if (req.source.kind == KernelSourceSpec::Kind::prebuilt) return prebuilt(req, env);
  return KernelBuilder(req, env).run();
}

}  // namespace isolab
