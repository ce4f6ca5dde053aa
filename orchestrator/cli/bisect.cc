#include "cli/bisect.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "base/number_text.h"
#include "base/progress.h"
#include "base/random_token.h"
#include "base/utc_time.h"
#include "cli/common.h"
#include "cli/run.h"
#include "compare/power.h"
#include "kernel/kernel.h"
#include "kernel/mbox_series.h"
#include "pipeline/apply_check.h"
#include "pipeline/bisect.h"
#include "pipeline/mailed_series.h"
#include "pipeline/run.h"
#include "spec/compare_settings.h"
#include "spec/spec.h"
#include "sys/process.h"

namespace isolab {

namespace fs = std::filesystem;

namespace {

// "+6.91%" or "n/a".
std::string change_text(double pct) {
  if (!std::isfinite(pct)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.2f%%", pct);
  return buf;
}

// One line per attempt: "step 2: patches 1-2, 4 boots each: regressed +6.91% -> moved (RUN)".
std::string step_line(std::size_t number, const BisectStep& s) {
  return "step " + std::to_string(number) + ": " + prefix_text(s.prefix) +
         (s.attempt > 1 ? " (attempt " + std::to_string(s.attempt) + ")" : "") + ", " +
         std::to_string(s.boots) + " boots each, level " + format_number("%.3g", s.level) + ": " +
         verdict_name(s.measurement.verdict) + " " + change_text(s.measurement.change_pct) +
         " -> " + step_state_name(s.state) + " (" + s.measurement.run_dir.string() + ")";
}

struct BisectCommand {
  std::string spec_path, results_dir = "results", accel = "auto", cache_dir, variant_a, variant_b,
                         parallel, progress_format = "text";
  std::vector<std::string> metrics;
  int boots = 5, max_boots = 20, jobs = 0;
  bool no_trace = false, quiet = false;

  void declare(CLI::App& b) {
    b.add_option("spec", spec_path, "Spec file (JSON) whose variant B applies a series")
        ->required();
    b.add_option("--metric", metrics,
                 "METRIC[@CPUS]:higher|lower (the bad direction), repeatable: the metric to "
                 "bisect; several: the first the whole series moves. Default: the spec's "
                 "compare.primary");
    b.add_option("--variant-a", variant_a, "The baseline variant (default: the spec's first)");
    b.add_option("--variant-b", variant_b,
                 "The variant whose series is bisected (default: the spec's second)");
    b.add_option("--boots", boots,
                 "Boots per variant of a step's first attempt (5: the fewest with which the "
                 "one-sided exact test can reach the first attempt's level, alpha / (1 + "
                 "ceil(log2 patches)) x 3/4, for series up to 256 patches)")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    b.add_option("--max-boots", max_boots,
                 "Most boots per variant of one attempt: an inconclusive step is measured again "
                 "with twice the boots up to this")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    declare_run_like(b);
  }

  void declare_run_like(CLI::App& b) {
    b.add_option("--results-dir", results_dir, "Where the bisect directory is created")
        ->capture_default_str();
    b.add_option("--accel", accel, "auto (KVM if it really runs guests, else TCG), kvm or tcg")
        ->check(CLI::IsMember({"auto", "kvm", "tcg"}))
        ->capture_default_str();
    b.add_option("--cache-dir", cache_dir,
                 "Kernel and image cache (default $ISOLAB_CACHE_DIR or ~/.cache/isolab)");
    b.add_option("-j,--jobs", jobs, "make -j for kernel builds (default: host CPUs)")
        ->check(CLI::Range(1, 4096));
    b.add_option("--parallel", parallel, "Guests booted at once, as for `isolab run`");
    b.add_flag("--no-trace", no_trace, "Do not trace the isolated CPUs during workloads");
    b.add_flag("-q,--quiet", quiet, "No progress on stderr (errors and warnings only)");
    b.add_option("--progress", progress_format, "text or json, as for `isolab run`")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  int run() {
    if (max_boots < boots)
      throw Error("--max-boots " + std::to_string(max_boots) + " is below --boots " +
                  std::to_string(boots));
    Spec spec = load_spec_file(spec_path);
    auto runner = make_real_runner();
    try {
      expand_mailed_series(spec, cache_dir.empty() ? default_cache_dir() : fs::path(cache_dir),
                           *runner);
    } catch (const SpecError& e) {
      throw spec_error_in_file(e, spec_path);
    }
    default_variants(spec);
    std::cerr << mailed_series_text(spec);
    // Spec errors the guest or this host shows come before the apply check, which unpacks the
    // kernel source when the cache does not hold it yet.
    try {
      RunOptions o = guest_tool_run_options();
      o.trace = !no_trace;
      o.parallel = parse_parallel(parallel);
      check_spec_before_builds(spec, o);
    } catch (const SpecError& e) {
      throw spec_error_in_file(e, spec_path);
    }
    // A series that does not apply is refused before any build (pipeline/apply_check.h).
    check_patched_variants(spec, *runner,
                           {cache_dir.empty() ? default_cache_dir() : fs::path(cache_dir),
                            [this](const std::string& m) {
                              if (!quiet) std::cerr << "isolab: " << m << "\n";
                            },
                            nullptr,
                            {}});
    install_interrupt_handlers();
    return bisect(spec, *runner);
  }

  void default_variants(const Spec& spec) {
    if (variant_a.empty()) variant_a = spec.variants.front().name;
    if (variant_b.empty()) {
      if (spec.variants.size() < 2) throw Error("bisect: the spec has one variant; B is needed");
      variant_b = spec.variants[1].name;
    }
  }

  // One --metric: the primary-metric syntax, naming a metric the spec's workloads give.
  static PrimaryMetric metric_argument(const std::string& m, const Spec& spec) {
    PrimaryMetric p;
    try {
      p = primary_from_argument(m);
    } catch (const Error& e) {
      std::string why = e.what();
      if (why.rfind("--primary ", 0) == 0) why = "--metric " + why.substr(10);
      throw Error(why);
    }
    if (!workloads_give(spec.workloads, p.metric, false))
      throw Error("--metric " + m + ": no metric of the spec's workloads is named " + p.metric +
                  " (they give " + workload_prefixes(spec.workloads) + ")");
    return p;
  }

  std::vector<PrimaryMetric> candidates(const Spec& spec) const {
    std::vector<PrimaryMetric> c;
    for (const std::string& m : metrics) c.push_back(metric_argument(m, spec));
    if (c.empty() && spec.compare.is_object() && spec.compare.contains("primary"))
      c = primary_from_json(spec.compare["primary"], "/compare/primary");
    return c;
  }

  int bisect(const Spec& spec, ProcessRunner& runner) {
    const BisectSettings settings{boots, max_boots,
                                  settings_from_json(spec.compare, "/compare").alpha};
    const fs::path dir = bisect_dir(spec);
    Progress meter(progress_mode(progress_format, quiet, STDERR_FILENO), std::cerr,
                   monotonic_seconds);
    RunOptions o = run_options(dir, meter);
    SeriesMeasurer measure(spec, variant_a, variant_b, candidates(spec), o, runner);
    const VariantSpec& a = find_variant(spec, variant_a, "--variant-a");
    const VariantSpec& b = find_variant(spec, variant_b, "--variant-b");
    std::vector<std::string> subjects;
    for (const fs::path& p : b.patches) subjects.push_back(mail_subject(p, runner));
    const double t0 = monotonic_seconds();
    auto record = [&](const BisectOutcome& out) {
      fs::create_directories(dir);
      write_file_atomic(dir / "bisect.json",
                        json_text(bisect_record(spec_path, a, b, subjects, measure.metric(),
                                                settings, out, monotonic_seconds() - t0),
                                  2) +
                            "\n");
    };
    auto on_step = [&](const BisectOutcome& out) {
      std::cout << step_line(out.steps.size(), out.steps.back()) << std::endl;
      record(out);
    };
    std::cout << "bisect: " << b.patches.size() << " patches of " << b.name << " against " << a.name
              << "; " << dir.string() << "\n"
              << levels_text(b.patches.size(), settings);
    BisectOutcome out;
    try {
      out = bisect_series(
          b.patches.size(), settings,
          [&](auto p, int n, double level) { return measure(p, n, level); }, on_step);
    } catch (const Error& e) {
      const bool some = fs::exists(dir / "bisect.json");
      throw Error(std::string(e.what()) +
                  (some ? " (steps so far: " + (dir / "bisect.json").string() + ")" : ""));
    }
    record(out);
    print_conclusion(out, b, subjects, measure.metric(), monotonic_seconds() - t0);
    std::cout << dir.string() << std::endl;
    return out.culprit ? 0 : 1;
  }

  // The error budget, declared before the first boot: each decision's share and the level of
  // each attempt, with a warning when the first attempt's boots cannot reach its level.
  static std::string levels_text(std::size_t patches, const BisectSettings& s) {
    const std::size_t d = bisect_decisions(patches);
    std::string t = "error budget: alpha " + format_number("%.3g", s.alpha) +
                    " of naming a wrong patch, over at most " + std::to_string(d) +
                    " decisions; each attempt's level:";
    int b = s.boots;
    for (int k = 1; k <= bisect_attempts(s); ++k, b *= 2)
      t += std::string(k > 1 ? ", " : " ") + std::to_string(b) +
           " boots: " + format_number("%.3g", step_level(patches, s, k));
    t += "\n";
    // The one-sided exact test of boots against boots gives at best 1 / C(2 boots, boots).
    const double best = best_one_sided_p(static_cast<std::size_t>(s.boots));
    if (best > step_level(patches, s, 1))
      t += "warning: at " + std::to_string(s.boots) +
           " boots a side the exact test gives at best p = " + format_number("%.3g", best) +
           ", above the first attempt's level: every step will need a second attempt (raise "
           "--boots)\n";
    return t;
  }

  static void print_conclusion(const BisectOutcome& out, const VariantSpec& b,
                               const std::vector<std::string>& subjects,
                               const std::optional<PrimaryMetric>& metric, double wall_s) {
    if (metric)
      std::cout << "metric: " << metric->row_name()
                << " (bad: " << (metric->higher_is_bad ? "higher" : "lower") << ")\n";
    std::cout << "conclusion: " << out.conclusion << "\n";
    if (out.culprit)
      std::cout << "first patch that moves it: " << *out.culprit << "/" << out.patches << " "
                << subjects[*out.culprit - 1] << " (" << b.patches[*out.culprit - 1].string()
                << ")\n";
    std::cout << "spent: " << out.steps.size() << " steps, " << out.cells() << " boots, "
              << static_cast<long>(wall_s) << " s\n";
  }

  // <results-dir>/<UTC time>-bisect-<spec name>-<token>; created by the first step's run (or
  // by the first record), so that input refused before any step leaves nothing behind.
  fs::path bisect_dir(const Spec& spec) const {
    return fs::path(results_dir) /
           (utc_now("%Y%m%dT%H%M%SZ") + "-bisect-" + spec.name + "-" + random_token(6));
  }

  RunOptions run_options(const fs::path& dir, Progress& meter) const {
    RunOptions o = guest_tool_run_options();
    o.spec_path = spec_path;
    o.results_dir = dir;
    o.cache_dir = cache_dir;
    o.accel = accel == "kvm"   ? AccelRequest::kvm
              : accel == "tcg" ? AccelRequest::tcg
                               : AccelRequest::automatic;
    o.trace = !no_trace;
    o.jobs = jobs;
    o.parallel = parse_parallel(parallel);
    o.progress = [&meter](const std::string& s) { meter.message(s); };
    o.meter = &meter;
    return o;
  }
};

}  // namespace

Action declare_bisect(CLI::App& sub) { return declare_command<BisectCommand>(sub); }

}  // namespace isolab
