#include "pipeline/bisect.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/error.h"
#include "compare/compare.h"
#include "compare/request.h"
#include "results/result_file.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace isolab {

namespace {

// The row of `metric` among a comparison's primary rows, or nullptr.
const MetricRow* primary_row(const Comparison& c, const PrimaryMetric& metric) {
  for (const MetricRow& r : c.metrics)
    if (r.primary && r.declared && r.declared->row_name() == metric.row_name()) return &r;
  return nullptr;
}

// Among the candidates' rows, the first with verdict v, or nullptr.
const MetricRow* first_with(const Comparison& c, const std::vector<PrimaryMetric>& candidates,
                            Verdict v) {
  for (const PrimaryMetric& m : candidates)
    if (const MetricRow* r = primary_row(c, m); r && r->verdict.verdict == v) return r;
  return nullptr;
}

StepMeasurement measurement_of(const MetricRow& r, const fs::path& run_dir) {
  StepMeasurement m;
  m.verdict = r.verdict.verdict;
  m.reason = r.name + ": " + r.verdict.reason;
  m.change_pct = r.change_pct;
  m.run_dir = run_dir;
  return m;
}

// No candidate moved: inconclusive when any is, else no significant change; the reason lists
// every candidate's verdict.
StepMeasurement unmoved(const Comparison& c, const std::vector<PrimaryMetric>& candidates,
                        const fs::path& run_dir) {
  StepMeasurement m;
  m.verdict = Verdict::no_change;
  m.run_dir = run_dir;
  m.change_pct = std::nan("");
  for (const PrimaryMetric& p : candidates) {
    const MetricRow* r = primary_row(c, p);
    const Verdict v = r ? r->verdict.verdict : Verdict::inconclusive;
    if (v == Verdict::inconclusive) m.verdict = Verdict::inconclusive;
    m.reason += (m.reason.empty() ? "" : "; ") + p.row_name() + ": " +
                (r ? r->verdict.reason : std::string("not measured"));
  }
  if (candidates.size() == 1 && primary_row(c, candidates[0]))
    m.change_pct = primary_row(c, candidates[0])->change_pct;
  return m;
}

json patch_json(const VariantSpec& b, const std::vector<std::string>& subjects, std::size_t n) {
  return {{"number", n},
          {"path", b.patches[n - 1].string()},
          {"subject", n - 1 < subjects.size() ? subjects[n - 1] : ""}};
}

json step_json(const BisectStep& s) {
  const double c = s.measurement.change_pct;
  return {{"prefix", s.prefix},
          {"attempt", s.attempt},
          {"boots", s.boots},
          {"level", s.level},
          {"verdict", verdict_name(s.measurement.verdict)},
          {"state", step_state_name(s.state)},
          {"change_pct", std::isfinite(c) ? json(c) : json(nullptr)},
          {"reason", s.measurement.reason},
          {"cells", s.measurement.cells},
          {"run_dir", s.measurement.run_dir.string()}};
}

}  // namespace

std::string prefix_text(std::size_t prefix) {
  return prefix == 1 ? "patch 1" : "patches 1-" + std::to_string(prefix);
}

std::string prefix_variant_name(const std::string& b, std::size_t prefix, std::size_t patches) {
  const std::string tail = "-" + std::to_string(prefix) + "of" + std::to_string(patches);
  return b.substr(0, 40 - std::min<std::size_t>(tail.size(), 40)) + tail;
}

Spec prefix_spec(const Spec& spec, const VariantSpec& a, const VariantSpec& b, std::size_t prefix,
                 int boots, double level) {
  if (prefix == 0 || prefix > b.patches.size())
    throw Error("bisect: no prefix of " + std::to_string(prefix) + " patches in variant " + b.name +
                " (" + std::to_string(b.patches.size()) + " patches)");
  Spec s = spec;
  VariantSpec p = b;
  p.name = prefix_variant_name(b.name, prefix, b.patches.size());
  p.patches.resize(prefix);
  s.variants = {a, p};
  s.repetitions = boots;
  s.baseline_run.clear();
  s.baseline_last_good = false;
  json raw_a = json::object(), raw_p = json::object();
  for (const json& v : spec.raw.value("variants", json::array())) {
    if (v.value("name", "") == a.name) raw_a = v;
    if (v.value("name", "") == b.name) raw_p = v;
  }
  raw_p["name"] = p.name;
  raw_p["patches"] = json::array();
  for (const fs::path& f : p.patches) raw_p["patches"].push_back(f.string());
  s.raw["variants"] = json::array({raw_a, raw_p});
  s.raw["repetitions"] = boots;
  if (!s.compare.is_object()) s.compare = json::object();
  s.compare["alpha"] = level;
  if (!s.raw.contains("compare") || !s.raw["compare"].is_object())
    s.raw["compare"] = json::object();
  s.raw["compare"]["alpha"] = level;
  s.raw.erase("baseline_run");
  s.raw.erase("baseline_last_good");
  return s;
}

const VariantSpec& find_variant(const Spec& spec, const std::string& name,
                                const std::string& what) {
  std::string names;
  for (const VariantSpec& v : spec.variants) {
    if (v.name == name) return v;
    names += (names.empty() ? "" : ", ") + v.name;
  }
  throw Error(what + " " + name + ": no such variant in the spec (it has " + names + ")");
}

SeriesMeasurer::SeriesMeasurer(const Spec& spec, const std::string& variant_a,
                               const std::string& variant_b, std::vector<PrimaryMetric> candidates,
                               RunOptions options, ProcessRunner& runner)
    : spec_(spec),
      candidates_(std::move(candidates)),
      options_(std::move(options)),
      runner_(runner) {
  a_ = find_variant(spec_, variant_a, "--variant-a");
  b_ = find_variant(spec_, variant_b, "--variant-b");
  if (a_.name == b_.name) throw Error("bisect: A and B are both variant " + a_.name);
  if (b_.patches.empty())
    throw Error("bisect: variant " + b_.name + " has no patches: nothing to bisect");
  if (candidates_.empty())
    throw Error(
        "bisect: no metric to bisect: give --metric METRIC[@CPUS]:higher|lower or "
        "declare compare.primary in the spec");
  if (candidates_.size() == 1) chosen_ = candidates_.front();
}

StepMeasurement SeriesMeasurer::operator()(std::size_t prefix, int boots, double level) {
  const Spec step = prefix_spec(spec_, a_, b_, prefix, boots, level);
  const RunSummary sum = run_spec(step, options_, runner_);
  const std::string where =
      prefix_text(prefix) + " of " + b_.name + " (run " + sum.run_dir.string() + ")";
  if (sum.status == "interrupted") throw Error("bisect: interrupted while measuring " + where);
  if (!sum.build_failures.empty())
    throw Error("bisect: " + where + " did not build: " + sum.build_failures.front());
  StepMeasurement m = judge(sum.run_dir, step.variants[1].name);
  m.cells = sum.cells_ok + sum.cells_invalid + sum.cells_failed;
  return m;
}

StepMeasurement SeriesMeasurer::judge(const fs::path& run_dir, const std::string& variant_b) {
  const json run = load_result(run_dir);
  CompareSettings settings = run_compare_settings(run, run_dir);
  settings.primary = chosen_ ? std::vector<PrimaryMetric>{*chosen_} : candidates_;
  settings.primary_origin = "--primary";
  const Comparison c = compare_run_variants(run, settings);
  if (c.cells_a == 0 || c.cells_b == 0)
    throw Error("bisect: no boot of " + std::string(c.cells_b == 0 ? variant_b : a_.name) +
                " in run " + run_dir.string() + " was measured; see its cells' failures");
  if (chosen_) {
    const MetricRow* r = primary_row(c, *chosen_);
    if (!r) throw Error("bisect: " + chosen_->row_name() + " is not in run " + run_dir.string());
    return measurement_of(*r, run_dir);
  }
  const MetricRow* moved = first_with(c, candidates_, Verdict::regressed);
  if (!moved) moved = first_with(c, candidates_, Verdict::improved);
  if (!moved) return unmoved(c, candidates_, run_dir);
  for (const PrimaryMetric& p : candidates_)
    if (p.row_name() == moved->declared->row_name()) chosen_ = p;
  return measurement_of(*moved, run_dir);
}

json bisect_record(const fs::path& spec_path, const VariantSpec& a, const VariantSpec& b,
                   const std::vector<std::string>& subjects,
                   const std::optional<PrimaryMetric>& metric, const BisectSettings& settings,
                   const BisectOutcome& outcome, double wall_s) {
  json r = {
      {"spec", spec_path.string()},
      {"variant_a", a.name},
      {"variant_b", b.name},
      {"metric", metric ? json(metric->row_name()) : json(nullptr)},
      {"bad", metric ? json(metric->higher_is_bad ? "higher" : "lower") : json(nullptr)},
      {"settings",
       {{"boots", settings.boots}, {"max_boots", settings.max_boots}, {"alpha", settings.alpha}}},
      {"patches", json::array()},
      {"steps", json::array()},
      {"culprit", nullptr},
      {"undecided", nullptr},
      {"conclusion", outcome.conclusion},
      {"cells", outcome.cells()},
      {"wall_s", wall_s}};
  for (std::size_t n = 1; n <= b.patches.size(); ++n)
    r["patches"].push_back(patch_json(b, subjects, n));
  for (const BisectStep& s : outcome.steps) r["steps"].push_back(step_json(s));
  if (outcome.culprit) r["culprit"] = patch_json(b, subjects, *outcome.culprit);
  if (outcome.undecided_first)
    r["undecided"] = json::array({outcome.undecided_first, outcome.undecided_last});
  return r;
}

}  // namespace isolab
