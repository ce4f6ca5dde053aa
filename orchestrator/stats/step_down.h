// The discrete step-down that controls a family of exact one-sided tests (compare's exit budget,
// compare/budget.h): tests whose p-values are discrete, each with the smallest p its margins allow.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace isolab {

// The discrete step-down of Tarone (1990, "A modified Bonferroni method for discrete data",
// Biometrics 46:703-707) in the step-down form of Hommel & Krummenauer (1998, "Improvements and
// modifications of Tarone's multiple test procedure for discrete data", Biometrics 54:673-681):
// the hypotheses sorted by p (ties by p_min, then input order); at step j, over the hypotheses
// not yet rejected R_j, K_j is the smallest K >= 1 with #{i in R_j : p_min_i * K < level} <= K;
// the j-th smallest p is rejected when p * K_j < level, else the procedure stops. A hypothesis
// whose p_min cannot get below level / K takes no share of the level. Strong family-wise control
// at `level` (closed testing with Tarone's local tests, whose K can only grow with the set),
// conditionally on the p_min, which the exact tests take from the pooled values.
//   adjusted: max over steps k <= j of min(1, K_k p_(k)) (NaN-free; 1 for hypotheses after the
//   stop that could not be adjusted further is still that running maximum), so that
//   rejected == (adjusted < level);
//   first_k: K_1, the step-down's first K; reachable: p_min * K_1 < level.
// p and p_min must have the same length (else isolab::Error), values in [0, 1], p >= p_min.
struct DiscreteStepDown {
  std::vector<bool> rejected;
  std::vector<double> adjusted;
  std::vector<std::size_t> k;  // K at the hypothesis's step; 0 after the stop
  std::vector<bool> reachable;
  std::size_t first_k = 1;
};
DiscreteStepDown discrete_step_down(std::span<const double> p, std::span<const double> p_min,
                                    double level);

// The smallest one-sided Fisher p (multiplicity.h fisher_exact_greater) the margins allow: with
// k = a_events + b_events events, the table with min(k, b_total) of them in B.
double fisher_min_p(std::size_t a_events, std::size_t a_total, std::size_t b_events,
                    std::size_t b_total);

}  // namespace isolab
