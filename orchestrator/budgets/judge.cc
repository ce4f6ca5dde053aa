#include "budgets/judge.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "base/error.h"
#include "base/files.h"
#include "base/json_text.h"
#include "base/number_text.h"
#include "cmdline/cpulist.h"
#include "results/budget_facts.h"
#include "spec/json_object.h"

namespace isolab {

namespace {

using json = nlohmann::json;
using results::BudgetCell;
using results::BudgetHistogram;
using results::BudgetMetric;

// One value a budget is judged on, before the CPU filter and the verdict.
struct Sample {
  std::string workload;
  std::optional<int> cpu;
  std::optional<double> value;
  bool beyond_range = false;  // a percentile among the overflows: over whatever the limit
  std::optional<double> runtime_s;
  std::string note;
};

// The step's runtime in seconds, from the first source judge.h lists that has it.
// value: the metric's value, whose own window comes first; nullptr for a histogram's.
std::optional<double> step_runtime(const results::BudgetValue* value, const BudgetCell& cell,
                                   const json& run, const std::string& wl) {
  if (value && value->window_recorded) return value->window_s;
  if (auto w = cell.noise_window_s(wl)) return w;
  if (auto w = results::imported_window_s(run)) return w;
  return results::workload_duration_s(run, wl);
}

// unit -> factor into the budget's unit; nullopt when they do not convert.
std::optional<double> unit_factor(const std::string& unit, const std::string& to) {
  if (unit == to) return 1.0;
  if (unit == "ns" && to == "us") return 1e-3;
  return std::nullopt;
}

std::vector<Sample> metric_samples(const BudgetSpec& b, const BudgetCell& cell, const json& run,
                                   const std::string& wl) {
  const std::string name = wl + "." + b.cell_metric;
  const std::optional<BudgetMetric> m = cell.metric(name);
  if (!m) return {};
  const auto factor = unit_factor(m->unit, b.unit);
  std::vector<Sample> out;
  if (!m->values_array)
    return {{wl, std::nullopt, std::nullopt, false, std::nullopt,
             "metrics/" + json_pointer_token(name) + "/values is not an array"}};
  for (const auto& mv : m->values) {
    Sample s{wl, mv.cpu, std::nullopt, false, step_runtime(&mv, cell, run, wl), ""};
    if (!factor)
      s.note = "unit " + sanitize_excerpt(m->unit_text, 20) + ", not " + b.unit;
    else if (mv.value)
      s.value = *mv.value * *factor;
    else
      s.note = "no value";
    out.push_back(s);
  }
  return out;
}

// The nearest-rank percentile's bucket end in us (judge.h), or the histogram's end with
// beyond_range set; a note when the histogram is malformed or empty.
void percentile_of_histogram(const BudgetHistogram& h, double p, Sample& s) {
  const auto factor = unit_factor(h.unit, "us");
  const auto width_ns = h.bucket_ns;
  const double overflows = h.overflows;
  if (!factor || !width_ns || *width_ns <= 0 || !h.counts_object || overflows < 0) {
    s.note = "histogram without unit us/ns, bucket_ns or counts";
    return;
  }
  std::map<double, double> buckets;
  double n = overflows;
  for (const auto& [key, count] : h.counts) {
    char* end = nullptr;
    const double lower = std::strtod(key.c_str(), &end);
    if (key.empty() || *end != '\0' || !std::isfinite(lower) || !count || *count < 0)
      return void(s.note =
                      "bucket \"" + sanitize_excerpt(key, 20) + "\" is not a number with a count");
    buckets[lower * *factor] += *count;
    n += *count;
  }
  if (n <= 0) return void(s.note = "empty histogram");
  // ceil(P/100 n) in long double, less a rounding margin ("99" of 100 samples is rank 99).
  const double k =
      std::max(1.0, static_cast<double>(std::ceil(static_cast<long double>(p) * n / 100 - 1e-9L)));
  double seen = 0;
  for (const auto& [lower, c] : buckets)
    if ((seen += c) >= k) return void(s.value = lower + *width_ns / 1000);
  s.beyond_range = true;
  s.value = buckets.empty() ? 0.0 : buckets.rbegin()->first + *width_ns / 1000;
  s.note = "p" + format_number("%g", p) + " lies among the overflows, beyond the histogram's " +
           format_number("%g", *s.value) + " us";
}

// CPU N of the histogram "<wl>[cpu<N>]"; nullopt for any other name.
std::optional<int> histogram_cpu(const std::string& name, const std::string& wl) {
  const std::string head = wl + "[cpu";
  if (name.size() <= head.size() + 1 || name.compare(0, head.size(), head) != 0 ||
      name.back() != ']')
    return std::nullopt;
  const std::string digits = name.substr(head.size(), name.size() - head.size() - 1);
  if (digits.empty() || digits.size() > 5 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoi(digits);
}

std::vector<Sample> histogram_samples(const BudgetSpec& b, const BudgetCell& cell, const json& run,
                                      const std::string& wl) {
  std::vector<Sample> out;
  for (const BudgetHistogram& h : cell.histograms()) {
    Sample s{wl, std::nullopt, std::nullopt, false, step_runtime(nullptr, cell, run, wl), ""};
    if (h.name != wl && !(s.cpu = histogram_cpu(h.name, wl))) continue;
    percentile_of_histogram(h, *b.percentile, s);
    out.push_back(s);
  }
  return out;
}

// The CPUs judged: the budget's, else the cell's isolated CPUs, else nullopt (every CPU).
std::optional<CpuSet> judged_cpus(const BudgetSpec& b, const BudgetCell& cell) {
  if (!b.cpus.empty()) return try_parse_cpulist(b.cpus, kMaxCpus).set;
  const std::optional<std::string> iso = cell.isolated();
  if (!iso) return std::nullopt;
  const CpuListParse r = try_parse_cpulist(*iso, kMaxCpus);
  return r.ok() ? std::optional<CpuSet>(r.set) : std::nullopt;
}

// The causes that make up "interruptions" (parse/trace.h noise_causes()).
constexpr const char* kInterruptionCauses[] = {"local_timer", "ipi_reschedule", "ipi_call_function",
                                               "irq",         "vmstat_update",  "workqueue_other"};

// The cause a count budget counts ("vmstat_update" of noise.vmstat_update_per_s), "" for the
// total and for timing budgets.
std::string counted_cause(const BudgetSpec& b) {
  for (const char* c : kInterruptionCauses)
    if (b.cell_metric == std::string("noise.") + c + "_per_s") return c;
  return "";
}

// "local_timer (1001 events)": the budget's own cause, or the one with the most events on
// `cpu` in the workload's trace (the first of kInterruptionCauses on a tie).
std::string top_cause(const BudgetSpec& b, const BudgetCell& cell, const std::string& wl,
                      std::optional<int> cpu) {
  if (!cpu) return "no CPU to name (a value of every thread)";
  const std::string own = counted_cause(b);
  const auto counts = cell.noise_cause_counts(wl, *cpu);
  if (!counts) return "not traced";
  std::string best;
  double most = -1;
  for (const char* cause : kInterruptionCauses) {
    const auto n = counts->find(cause);
    if ((own.empty() || own == cause) && n != counts->end() && n->second > most)
      best = cause, most = n->second;
  }
  if (most > 0) return best + " (" + format_number("%g", most) + " events)";
  return "none traced (no interruption on CPU " + std::to_string(*cpu) + ")";
}

bool timing_enforced(const BudgetCell& cell) {
  const std::string a = cell.accelerator();
  return a == "kvm" || a == "bare-metal";
}

BudgetCheck check_of(std::size_t index, const BudgetSpec& b, const BudgetCell& cell,
                     const Sample& s) {
  BudgetCheck c;
  c.budget = index;
  c.cell = cell.id();
  c.variant = cell.variant();
  c.workload = s.workload;
  c.cpu = s.cpu;
  c.value = s.value;
  c.note = s.note;
  c.enforced = b.kind == BudgetKind::count || timing_enforced(cell);
  if (!s.value) return c;
  if (b.min_runtime_s && (!s.runtime_s || *s.runtime_s < *b.min_runtime_s)) {
    c.note = s.runtime_s ? "the step ran " + format_number("%g", *s.runtime_s) + " s, below " +
                               format_number("%g", *b.min_runtime_s) + " s"
                         : "the step's runtime is not recorded";
    return c;
  }
  c.outcome = s.beyond_range || *s.value >= b.below ? BudgetOutcome::over : BudgetOutcome::pass;
  if (c.outcome == BudgetOutcome::over) c.cause = top_cause(b, cell, s.workload, s.cpu);
  if (!c.enforced)
    c.note += (c.note.empty() ? "" : "; ") +
              std::string("reported, not enforced: the cell ran under ") +
              sanitize_excerpt(cell.accelerator_text(), 20);
  return c;
}

void judge_cell(std::size_t index, const BudgetSpec& b, const BudgetCell& cell, const json& run,
                BudgetVerdict& v) {
  const std::optional<CpuSet> cpus = judged_cpus(b, cell);
  std::size_t judged = 0;
  for (const auto& wl : cell.workloads()) {
    if (!b.workload.empty() && wl != b.workload) continue;
    for (const Sample& s :
         b.percentile ? histogram_samples(b, cell, run, wl) : metric_samples(b, cell, run, wl)) {
      if (s.cpu && cpus && !cpus->test(static_cast<unsigned>(*s.cpu))) continue;
      v.checks.push_back(check_of(index, b, cell, s));
      ++judged;
    }
  }
  if (judged == 0) {
    BudgetCheck c;
    c.budget = index;
    c.cell = cell.id();
    c.variant = cell.variant();
    c.workload = b.workload;
    c.note = "the cell has no " + b.metric + (b.workload.empty() ? "" : " of " + b.workload) +
             (cpus ? " on CPUs " + cpus->to_list() : "");
    v.checks.push_back(c);
  }
}

std::string value_text(double v, const std::string& unit) {
  return format_number("%.6g", v) + (unit == "us" ? " us" : " /s");
}

// The enforced over of `variant` ("" = any) with the largest excess relative to its limit, or
// nullptr.
const BudgetCheck* worst_over(const BudgetVerdict& v, const std::string& variant) {
  const BudgetCheck* worst = nullptr;
  double ratio = 0;
  for (const auto& c : v.checks) {
    if (c.outcome != BudgetOutcome::over || !c.enforced) continue;
    if (!variant.empty() && c.variant != variant) continue;
    const double r = *c.value / v.budgets[c.budget].below;
    if (!worst || r > ratio) worst = &c, ratio = r;
  }
  return worst;
}

// The verdict over the checks of `variant` ("" = every cell).
std::string verdict_of(const BudgetVerdict& v, const std::string& variant) {
  std::size_t judged = 0, overs = 0;
  for (const auto& c : v.checks)
    if (c.enforced && c.outcome != BudgetOutcome::not_judged &&
        (variant.empty() || c.variant == variant))
      ++judged, overs += c.outcome == BudgetOutcome::over;
  const BudgetCheck* w = worst_over(v, variant);
  if (!w) return judged > 0 ? "within budget" : "no enforced budget was judged";
  const BudgetSpec& b = v.budgets[w->budget];
  std::string s = "over budget on " +
                  (w->cpu ? "CPU " + std::to_string(*w->cpu) : "the CPUs of " + w->workload) +
                  " by " + value_text(*w->value - b.below, b.unit) + " (" + b.metric + " " +
                  value_text(*w->value, b.unit) + " of " + w->workload + " in cell " + w->cell +
                  ", limit " + value_text(b.below, b.unit) + "), cause: " + w->cause;
  if (overs > 1) s += "; " + std::to_string(overs - 1) + " more check(s) over";
  return s;
}

void conclude(BudgetVerdict& v) {
  std::set<std::string> tcg;
  std::vector<std::string> variants;
  for (const auto& c : v.checks) {
    if (std::find(variants.begin(), variants.end(), c.variant) == variants.end())
      variants.push_back(c.variant);
    if (c.outcome == BudgetOutcome::not_judged) continue;
    if (c.enforced)
      ++v.enforced_judged, v.over = v.over || c.outcome == BudgetOutcome::over;
    else
      tcg.insert(c.cell);
  }
  if (!tcg.empty()) {
    std::string cells;
    for (const auto& c : tcg) cells += (cells.empty() ? "" : ", ") + c;
    v.not_enforced = "timing budgets reported, not enforced: cells " + cells +
                     " ran under TCG, whose timings follow the host's load";
  }
  v.verdict = verdict_of(v, "");
  for (const auto& name : variants) v.variant_verdicts.emplace_back(name, verdict_of(v, name));
}

}  // namespace

BudgetVerdict judge_budgets(const std::vector<BudgetSpec>& budgets, const json& result) {
  const auto cells = results::budget_cells(result);
  if (!cells) throw Error("/cells: result.json must have a cells array");
  BudgetVerdict v;
  v.budgets = budgets;
  for (std::size_t i = 0; i < budgets.size(); ++i)
    for (const auto& cell : *cells)
      if (cell.measured()) judge_cell(i, budgets[i], cell, result, v);
  conclude(v);
  return v;
}

std::vector<BudgetSpec> budgets_of_run(const json& result) {
  const json* b = results::spec_budgets(result);
  return b ? parse_budgets(*b, "/spec/budgets") : std::vector<BudgetSpec>{};
}

int budget_exit_status(const BudgetVerdict& v) {
  if (v.over) return 4;
  return v.enforced_judged == 0 ? 3 : 0;
}

namespace {

const char* outcome_name(BudgetOutcome o) {
  return o == BudgetOutcome::pass ? "pass" : o == BudgetOutcome::over ? "over" : "not judged";
}

json budget_json(const BudgetSpec& b) {
  return {{"metric", b.metric},
          {"workload", b.workload.empty() ? json() : json(b.workload)},
          {"below", b.below},
          {"unit", b.unit},
          {"kind", b.kind == BudgetKind::timing ? "timing" : "count"},
          {"cpus", b.cpus.empty() ? json() : json(b.cpus)},
          {"min_runtime_s", b.min_runtime_s ? json(*b.min_runtime_s) : json()}};
}

json check_json(const BudgetCheck& c) {
  return {{"budget", c.budget},
          {"cell", c.cell},
          {"variant", c.variant},
          {"workload", c.workload},
          {"cpu", c.cpu ? json(*c.cpu) : json()},
          {"value", c.value ? json(*c.value) : json()},
          {"outcome", outcome_name(c.outcome)},
          {"enforced", c.enforced},
          {"cause", c.cause},
          {"note", c.note}};
}

// "oslat_max_us < 20 us: 2 pass, 2 over (worst CPU 3: 40302 us), 0 not judged".
std::string budget_line(std::size_t i, const BudgetVerdict& v) {
  const BudgetSpec& b = v.budgets[i];
  std::size_t pass = 0, over = 0, none = 0, reported = 0;
  const BudgetCheck* worst = nullptr;
  for (const auto& c : v.checks) {
    if (c.budget != i) continue;
    if (c.outcome == BudgetOutcome::not_judged) {
      ++none;
      continue;
    }
    if (!c.enforced) ++reported;
    if (c.outcome == BudgetOutcome::pass) {
      ++pass;
      continue;
    }
    ++over;
    if (!worst || *c.value > *worst->value) worst = &c;
  }
  std::string s = "  " + budget_text(b) + ": " + std::to_string(pass) + " pass, " +
                  std::to_string(over) + " over";
  if (worst)
    s += " (worst " + (worst->cpu ? "CPU " + std::to_string(*worst->cpu) : worst->workload) +
         " of cell " + worst->cell + ": " + value_text(*worst->value, b.unit) + ")";
  if (reported) s += ", " + std::to_string(reported) + " of them reported, not enforced";
  return s + ", " + std::to_string(none) + " not judged\n";
}

}  // namespace

json to_json(const BudgetVerdict& v) {
  json variants = json::object();
  for (const auto& [name, verdict] : v.variant_verdicts) variants[name] = verdict;
  json j = {{"verdict", v.verdict},
            {"variants", variants},
            {"over", v.over},
            {"exit_status", budget_exit_status(v)},
            {"not_enforced", v.not_enforced},
            {"budgets", json::array()},
            {"checks", json::array()}};
  for (const auto& b : v.budgets) j["budgets"].push_back(budget_json(b));
  for (const auto& c : v.checks) j["checks"].push_back(check_json(c));
  return j;
}

std::string budget_verdict_text(const BudgetVerdict& v) {
  std::string s = "Budgets (strictly below; docs/verdicts.md \"Budgets\"):\n";
  for (std::size_t i = 0; i < v.budgets.size(); ++i) s += budget_line(i, v);
  for (const auto& c : v.checks)
    if (c.outcome == BudgetOutcome::not_judged && !c.note.empty())
      s += "  not judged: " + v.budgets[c.budget].metric + " in cell " + c.cell + ": " + c.note +
           "\n";
  if (!v.not_enforced.empty()) s += v.not_enforced + "\n";
  if (v.variant_verdicts.size() > 1)
    for (const auto& [name, verdict] : v.variant_verdicts) s += "  " + name + ": " + verdict + "\n";
  return s + "budgets: " + v.verdict + "\n";
}

}  // namespace isolab
