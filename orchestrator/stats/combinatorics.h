// Counting for the exact tests: binomial coefficients on the log scale, so that the number of
// reassignments of 2 x 40 boots (C(80, 40), about 1e23) stays finite.
#pragma once

#include <cstddef>

namespace isolab {

// log C(n, k) = lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1), natural log. k <= n.
double log_choose(std::size_t n, std::size_t k);

}  // namespace isolab
