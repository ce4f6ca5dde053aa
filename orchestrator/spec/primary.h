// Declared primary metrics: the few metrics whose verdicts decide `isolab compare`'s exit
// status (compare/compare.h). Declared in the spec's compare section,
//   "compare": {"primary": [{"metric": "vmstat-idle.noise.vmstat_update_per_s", "cpus": "6",
//                            "bad": "higher", "threshold_pct": 10,
//                            "detect": {"change": 0.2, "baseline": 0.4}}]}
// (validated when the spec is loaded, before anything is built, and again by compare from the
// spec a result.json keeps), or on compare's command line as METRIC[@CPUS]:higher|lower.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace isolab {

// What a count primary must detect (interface of docs/verdicts.md "Counts with power"): the
// smallest change of the metric, magnitude in its unit (events/s per CPU for a rate in 1/s,
// events per boot for a count), and the value A is expected to have. The dry run and calibrate
// turn it into a Poisson power calculation (compare/power.h).
struct DetectTarget {
  double change = 0;    // > 0
  double baseline = 0;  // >= 0
};

struct PrimaryMetric {
  std::string metric;          // result.json metric name
  std::vector<unsigned> cpus;  // sorted; empty: the cell's aggregate value. Else the per-boot
                               // sample is the mean of the cell's values on these CPUs
                               // (cells[].metrics.<m>.cpus parallel to values)
  bool higher_is_bad = true;   // "bad": "higher" (true) or "lower"
  std::optional<double> threshold_pct;  // replaces the metric's threshold when given, percent
  std::optional<DetectTarget> detect;   // "detect": {"change", "baseline"}
  // "test": "ranks": the one-sided tests score the boots' midranks (the exact Wilcoxon-Mann-
  // Whitney test) whatever the metric's kind, and an instruction metric's change is that of the
  // medians; for metrics where a few boots the host disturbed lie far out (a tail of wakeup
  // path lengths). "values" (default): the kind's own test (compare/verdict.h).
  bool ranks = false;
  std::string source;  // where it was declared: "/compare/primary/0" or "--primary <text>"

  // The comparison row it decides: cpu_row_name(metric, cpus).
  std::string row_name() const;
};

// The row name of a metric restricted to CPUs: "<metric>[cpu<list>]" with the CPUs in the
// kernel's list format ("x[cpu6]", "x[cpu5-7]"); the metric itself for no CPUs.
std::string cpu_row_name(const std::string& metric, const std::vector<unsigned>& cpus);

// Parses a "primary" array: 1 to kMaxPrimary entries, each an object with "metric" (non-empty
// string), "bad" ("higher" or "lower": the direction of a regression), optional "cpus" (a CPU
// list of explicit numbers, "5", "5-7", "5,7"), "threshold_pct" (number >= 0), "detect"
// ({"change": number > 0, "baseline": number >= 0}, both required) and "test" ("values" or
// "ranks"). `pointer` is
// where the array sits ("/compare/primary"). Throws isolab::SpecError with the entry's pointer:
// "/compare/primary/0/cpus: ...", "/compare/primary/1/bad: must be "higher" or "lower" ...", an
// unknown field, an empty array, more than kMaxPrimary entries, or the same row declared twice.
// The bound keeps Holm's step-down useful: with 5 boots a side the one-sided exact p is at best
// 1/252, and 8 x 1/252 = 0.032 still passes alpha 0.05.
inline constexpr std::size_t kMaxPrimary = 8;
std::vector<PrimaryMetric> primary_from_json(const nlohmann::json& v, const std::string& pointer);

// Parses the command-line form METRIC[@CPUS]:higher|lower (the bad direction), e.g.
// "vmstat-idle.noise.vmstat_update_per_s@6:higher". Throws isolab::Error naming the argument.
PrimaryMetric primary_from_argument(const std::string& arg);

}  // namespace isolab
