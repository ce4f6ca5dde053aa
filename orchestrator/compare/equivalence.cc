#include "compare/equivalence.h"

#include <algorithm>

namespace isolab {

namespace {

// Every boot of both sides had one value.
bool same_value_everywhere(const MetricRow& r) {
  if (r.a_values.empty() || r.b_values.empty()) return false;
  const double v = r.a_values.front();
  auto is_v = [v](double x) { return x == v; };
  return std::all_of(r.a_values.begin(), r.a_values.end(), is_v) &&
         std::all_of(r.b_values.begin(), r.b_values.end(), is_v);
}

}  // namespace

std::string not_equivalent_reason(const Comparison& c) {
  if (const int status = compare_exit_status(c); status != 0)
    return "exit status " + std::to_string(status);
  bool measured = false;
  for (const MetricRow& r : c.metrics) {
    if (!r.primary || !r.not_measured.empty()) continue;
    measured = true;
    if (r.verdict.verdict == Verdict::no_change || same_value_everywhere(r)) continue;
    return r.name + " is " + verdict_name(r.verdict.verdict);
  }
  return measured ? "" : "no primary metric was measured";
}

}  // namespace isolab
