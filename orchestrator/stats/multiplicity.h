// Multiple testing over the metrics of one comparison (Holm's step-down for the declared primary
// metrics, Westfall-Young min-P over joint relabellings of the boots for every other metric) and
// the exact test of a failure rate.
//
// The unit of relabelling is the cell (one boot of one variant). A relabelling assigns every
// cell to A or B keeping the number of A cells of each block (host; one block for a single-host
// comparison): under the null hypothesis that the variants do not differ, the labels are
// exchangeable within a block, so every relabelling is as likely as the observed one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "stats/permutation.h"
#include "stats/sample.h"

namespace isolab {

// Holm's step-down adjusted p-values (Holm 1979, "A simple sequentially rejective multiple test
// procedure", Scand. J. Statist. 6:65-70): with the m p-values sorted p_(1) <= ... <= p_(m),
//   adjusted p_(i) = max over j <= i of min(1, (m - j + 1) p_(j)).
// A hypothesis is rejected at family-wise level alpha when its adjusted p is below alpha (Holm's
// rule p_(j) <= alpha / (m - j + 1) for every j <= i, with the strict inequality compare uses
// everywhere); the family-wise error rate is at most alpha whatever the dependence between the
// tests. Returned in the input order; empty input gives an empty result. p-values must lie in
// [0, 1].
std::vector<double> holm_adjust(std::span<const double> p);

// One-sided Fisher exact test that B's rate of an event exceeds A's: a_events of a_total A cells
// and b_events of b_total B cells had it. Conditioning on the total number of events K, the
// number of them in B is hypergeometric (N = a_total + b_total, K, draws b_total), and
//   p = P(X >= b_events) = sum_{x >= b_events} C(K, x) C(N - K, b_total - x) / C(N, b_total)
// (Fisher, "Statistical Methods for Research Workers", 1934, sec. 21.02; Agresti, "Categorical
// Data Analysis", 2nd ed. 2002, sec. 3.5.1). 1 B boot of 5 against 0 of 5: p = 0.5; 4 of 5
// against 0 of 5: p = 5/210 = 0.024. p = 1 when B has no event or a total is 0. Throws
// isolab::Error when events exceed their total.
double fisher_exact_greater(std::size_t a_events, std::size_t a_total, std::size_t b_events,
                            std::size_t b_total);

// The cells of a comparison as a relabelling sees them.
struct RelabelDesign {
  std::vector<bool> in_a;          // the observed label of each cell
  std::vector<std::size_t> block;  // each cell's block (host), 0..; labels move within a block
};

// A set of labellings of the design's cells (1 = A), the observed one first.
struct Relabellings {
  std::size_t cells = 0;
  std::vector<std::uint8_t> flat;  // labelling r is flat[r * cells, (r + 1) * cells)
  bool exact = true;               // every labelling keeping the blocks' A counts
  std::size_t size() const { return cells == 0 ? 0 : flat.size() / cells; }
  std::span<const std::uint8_t> operator[](std::size_t r) const {
    return {flat.data() + r * cells, cells};
  }
};

// Every labelling that keeps each block's number of A cells (prod_h C(N_h, n_a,h) of them) when
// there are at most exact_limit; else the observed labelling and `resamples` random ones (each
// block's labels shuffled by a partial Fisher-Yates from a std::mt19937_64 seeded with `seed`).
// The observed labelling is first either way. Throws isolab::Error when in_a and block differ
// in length.
Relabellings relabellings(const RelabelDesign& design, std::uint64_t exact_limit,
                          std::size_t resamples, std::uint64_t seed);

// A metric of the family: its value in each cell of the design (NaN where the cell lacks it:
// that cell is simply absent from the metric's statistic under every labelling) and its score
// (raw values for counts and instructions, midranks within each block for timings).
struct FamilyMetric {
  std::vector<double> values;
  StratumScore score = StratumScore::values;
};

// Westfall-Young single-step min-P adjustment over joint relabellings (Westfall & Young,
// "Resampling-Based Multiple Testing", Wiley 1993, ch. 2, algorithm 2.8 with exact or resampled
// permutation distributions). Per metric m and labelling r the statistic is the two-sided
// stratified statistic of stats.h stratified_permutation_test,
//   T_m(r) = | sum_h c_h w_h (mean_B,h - mean_A,h) |,  w_h = n_a,h n_b,h / N_h,
// over the cells that have the metric (c_h = 1 for values, 1 / (N_h + 1) for midranks; a block
// with an empty side adds 0). p_m(r) = #{r' : T_m(r') >= T_m(r)} / R (with a 1e-9 relative
// tolerance) is the rank of r among all R labellings, so the raw p of m is p_m(observed), and
//   adjusted p_m = #{r : min over metrics of p_m'(r) <= p_m(observed)} / R,
// which controls the family-wise error rate at alpha for any dependence between the metrics
// (subset pivotality holds for permutation tests of exchangeable boots). Ties and correlated
// clusters of metrics (local timer and timer callbacks, IPIs) cost nothing extra: the min-P
// distribution is taken from the same relabellings. adjusted p >= raw p. Metrics whose values
// are the same in every labelling have p = 1 and do not move the others. Throws isolab::Error
// when a metric's values do not have one entry per cell.
struct FamilyResult {
  std::vector<double> raw_p;       // per metric, in the input order
  std::vector<double> adjusted_p;  // per metric
  std::size_t relabellings = 0;    // R
  bool exact = true;
};
FamilyResult westfall_young_min_p(const RelabelDesign& design,
                                  const std::vector<FamilyMetric>& metrics,
                                  const Relabellings& labellings);

}  // namespace isolab
