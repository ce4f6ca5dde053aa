// A/A relabelling: how often would compare exit 1 on the boots of one kernel?
//
// Input: a run whose two compared variants (variant_order[0] and [1]) are the same kernel (an
// A/A run, `isolab run SPEC --aa`); any run is taken as if it were one. Its non-warm-up cells of
// those two variants, whatever their status, are pooled and relabelled: every assignment to the
// two variants that keeps each variant's number of cells (and, for cells from several hosts, each
// host's; multiplicity.h relabellings) when there are at most exact_limit of them (C(10,5) = 252
// for 5 boots each), else the observed labelling and `resamples` seeded random ones. Each
// relabelling is compared by compare_runs with the settings given (with exit_status_only: the
// intervals and the family-wise p of secondary metrics cannot move the exit status and are not
// computed). Reported: the number of relabellings whose comparison exits 1 and, per cause, in how
// many it was among the causes ("primary <row>", "kernel failure <class>", "gate <check>", "new
// build warnings"); and, for reference, the number that would exit 1 if every metric row of
// result.json (not the per-CPU rows) were judged alone by its own two-sided test at alpha with
// no multiplicity correction and every kernel failure of B counted: the rules compare had before
// primary metrics, family-wise p and failure rates. On identical kernels every exit 1 is a false
// alarm, so exit_1 / relabellings estimates compare's false alarm rate for runs of this kind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare/verdict.h"
#include "spec/compare_settings.h"

namespace isolab {

struct AaRelabelOptions {
  // The two variants pooled: "" takes variant_order[0] (A) and [1] (B). A nightly run's
  // tonight's kernel and its baseline (`<variant>` and `<variant>-baseline`) are named so.
  std::string variant_a, variant_b;
  std::uint64_t exact_limit = 100000;
  std::size_t resamples = 2000;
  std::uint64_t seed = 1;
};

struct AaRelabelResult {
  std::string run_id;
  std::string variant_a, variant_b;
  std::size_t cells_a = 0, cells_b = 0;  // relabelled cells of each variant
  std::size_t relabellings = 0;          // including the observed labelling
  bool exact = true;                     // every relabelling, not a sample
  std::vector<std::string> primary;      // row names of the declared primary metrics
  std::string primary_origin;            // "spec", "--primary" or ""
  std::size_t exit_1 = 0;                // relabellings whose comparison exits 1
  std::map<std::string, std::size_t> causes;
  std::size_t uncorrected_exit_1 = 0;  // the same under the per-metric rule (above)
  std::map<std::string, std::size_t> uncorrected_causes;
  bool observed_exit_1 = false;  // the run's own labelling exits 1
};

// Runs the method above. Throws isolab::Error when the run lacks variant_order with two variants
// (and options name none), names a variant the run does not have, or has no cell to relabel,
// and as compare_runs does (a refused comparison included).
AaRelabelResult relabel_aa(const nlohmann::json& run, const CompareSettings& settings,
                           const AaRelabelOptions& options = {});

}  // namespace isolab
