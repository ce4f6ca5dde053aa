#include "stats/step_down.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"
#include "stats/multiplicity.h"

namespace isolab {

namespace {

// The smallest K >= 1 with #{i in rest : p_min_i * K < level} <= K.
std::size_t tarone_k(const std::vector<std::size_t>& rest, std::span<const double> p_min,
                     double level) {
  for (std::size_t k = 1;; ++k) {
    std::size_t m = 0;
    for (std::size_t i : rest) m += p_min[i] * static_cast<double>(k) < level;
    if (m <= k) return k;
  }
}

}  // namespace

DiscreteStepDown discrete_step_down(std::span<const double> p, std::span<const double> p_min,
                                    double level) {
  if (p.size() != p_min.size()) throw Error("discrete_step_down: p and p_min differ in length");
  const std::size_t m = p.size();
  DiscreteStepDown out;
  out.rejected.assign(m, false);
  out.adjusted.assign(m, 1.0);
  out.k.assign(m, 0);
  out.reachable.assign(m, false);
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return p[x] != p[y] ? p[x] < p[y] : p_min[x] < p_min[y];
  });
  std::vector<std::size_t> rest = order;
  out.first_k = tarone_k(rest, p_min, level);
  for (std::size_t i = 0; i < m; ++i)
    out.reachable[i] = p_min[i] * static_cast<double>(out.first_k) < level;
  double running = 0;
  bool stopped = false;
  for (std::size_t j = 0; j < m; ++j) {
    const std::size_t h = order[j];
    const std::size_t k = tarone_k(rest, p_min, level);
    running = std::max(running, std::min(1.0, static_cast<double>(k) * p[h]));
    out.adjusted[h] = running;
    if (stopped) continue;
    out.k[h] = k;
    if (!(p[h] * static_cast<double>(k) < level)) {
      stopped = true;
      continue;
    }
    out.rejected[h] = true;
    rest.erase(std::find(rest.begin(), rest.end(), h));
  }
  return out;
}

double fisher_min_p(std::size_t a_events, std::size_t a_total, std::size_t b_events,
                    std::size_t b_total) {
  const std::size_t k = a_events + b_events;
  const std::size_t in_b = std::min(k, b_total);
  return fisher_exact_greater(k - in_b, a_total, in_b, b_total);
}

}  // namespace isolab
