#include "stats/range_rule.h"

#include <algorithm>
#include <cmath>

#include "base/number_text.h"
#include "stats/combinatorics.h"

namespace isolab {

double range_rule_bound(std::size_t n_a, std::size_t n_b, std::size_t runs) {
  if (n_a < 2 || n_b < 2) return 0;  // the rule never applies: no false alarm
  const double c = std::exp(log_choose(n_a + n_b, n_b));
  return 1.0 / (static_cast<double>(std::max<std::size_t>(runs, 1) + 1) * std::round(c));
}

RangeRule range_rule(std::span<const double> a, std::span<const double> b, double jitter,
                     std::size_t runs) {
  RangeRule r;
  r.jitter = jitter;
  r.runs = runs;
  r.bound = range_rule_bound(a.size(), b.size(), runs);
  if (a.size() < 2 || b.size() < 2) {
    r.why_not = "fewer than 2 boots on a side";
    return r;
  }
  const auto [amin, amax] = std::minmax_element(a.begin(), a.end());
  const auto [bmin, bmax] = std::minmax_element(b.begin(), b.end());
  const double sa = *amax - *amin, sb = *bmax - *bmin;
  if (sa > jitter || sb > jitter) {
    const bool a_wide = sa > jitter;
    r.why_not = std::string(a_wide ? "A" : "B") + "'s boots spread " +
                format_number("%.3g", a_wide ? sa : sb) + " > jitter " +
                format_number("%.3g", jitter) + " (not one path in every boot)";
    return r;
  }
  r.applies = true;
  r.low = *bmin - *amax - jitter;
  r.high = *bmax - *amin + jitter;
  return r;
}

}  // namespace isolab
