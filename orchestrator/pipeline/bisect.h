// The measurements of `isolab bisect`: each step is an ordinary run (run_spec) of A and a
// prefix of B's series, and its verdict is compare's (compare_run_variants) on the metric being
// bisected. The search itself is compare/bisect_search.h.
//
// A prefix's kernel is built in the build slot every variant of the spec shares (kernel/kernel.h:
// one worktree and O= directory per source and config recipe), so a step after the first rebuilds
// only the files its patches change against the previous step's tree.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "compare/bisect_search.h"
#include "pipeline/run.h"
#include "spec/primary.h"
#include "spec/spec.h"
#include "sys/process.h"

namespace isolab {

// The patches a prefix applies, as steps and errors name them: "patch 1", "patches 1-3".
std::string prefix_text(std::size_t prefix);

// The name of the variant that applies B's first `prefix` of `patches` patches:
// "<B>-<prefix>of<patches>", B's name cut so that the whole stays within 40 characters.
std::string prefix_variant_name(const std::string& b, std::size_t prefix, std::size_t patches);

// The spec of one step: variant a, then variant b with only its first `prefix` patches (named
// by prefix_variant_name), `boots` repetitions each, compare.alpha set to the step's `level`
// (compare/bisect_search.h: step_level) and no baseline (nightly mode is off); the raw document
// says the same (its "variants" carry the resolved patch paths), so result.json records what
// ran and `isolab compare` of the step's run judges it at the level the search did. Throws
// isolab::Error when prefix is 0 or beyond b's patches.
Spec prefix_spec(const Spec& spec, const VariantSpec& a, const VariantSpec& b, std::size_t prefix,
                 int boots, double level);

// Measures prefixes of B's series against A for bisect_series(): one run_spec per attempt,
// in options.results_dir, then compare on the metric.
// The metric: candidates (given with --metric, else the spec's compare.primary, in order) are
// tested together (Holm over them) on the whole series; the first regressed one, else the
// first improved one, is chosen and every later step tests it alone. Until one is chosen the
// verdict is inconclusive when any candidate is, else "no significant change".
// Throws isolab::Error when a step's prefix does not build (naming the step's run directory),
// when the run was interrupted, or when no cell of the prefix was measured (a kernel that does
// not boot is another search than this one); compare's errors pass through.
class SeriesMeasurer {
 public:
  SeriesMeasurer(const Spec& spec, const std::string& variant_a, const std::string& variant_b,
                 std::vector<PrimaryMetric> candidates, RunOptions options, ProcessRunner& runner);

  StepMeasurement operator()(std::size_t prefix, int boots, double level);

  // The metric being bisected: set once the whole series moved one.
  const std::optional<PrimaryMetric>& metric() const { return chosen_; }

 private:
  StepMeasurement judge(const std::filesystem::path& run_dir, const std::string& variant_b);

  Spec spec_;
  VariantSpec a_, b_;
  std::vector<PrimaryMetric> candidates_;
  std::optional<PrimaryMetric> chosen_;
  RunOptions options_;
  ProcessRunner& runner_;
};

// The variant named `name` of the spec; throws isolab::Error listing the spec's variants when
// there is none. `what` names the option that gave the name ("--variant-b").
const VariantSpec& find_variant(const Spec& spec, const std::string& name, const std::string& what);

// bisect.json, written after every attempt: the inputs, each step and the conclusion.
//   {"spec": "<path>", "variant_a": "vanilla", "variant_b": "planted",
//    "metric": "<row name>" | null, "bad": "higher" | "lower" | null,
//    "settings": {"boots": 5, "max_boots": 20, "alpha": 0.05},
//    "patches": [{"number": 1, "path": "...", "subject": "[PATCH 1/4] ..."}],
//    "steps": [{"prefix": 4, "attempt": 1, "boots": 5, "level": 0.0125, "verdict": "regressed",
//               "state": "moved", "change_pct": 6.9, "reason": "...", "cells": 8,
//               "run_dir": "<step run directory>"}],
//    "culprit": {"number": 2, "path": "...", "subject": "..."} | null,
//    "undecided": [first, last] | null, "conclusion": "...", "cells": 24, "wall_s": 812}
// change_pct is null when undefined. `subjects` is parallel to b.patches.
nlohmann::json bisect_record(const std::filesystem::path& spec_path, const VariantSpec& a,
                             const VariantSpec& b, const std::vector<std::string>& subjects,
                             const std::optional<PrimaryMetric>& metric,
                             const BisectSettings& settings, const BisectOutcome& outcome,
                             double wall_s);

}  // namespace isolab
