#include "history/equivalence.h"

#include "compare/verdict_rules.h"

namespace isolab {

std::string not_equivalent_reason(const Comparison& c) {
  if (const int status = compare_exit_status(c); status != 0)
    return "exit status " + std::to_string(status);
  bool measured = false;
  for (const MetricRow& r : c.metrics) {
    if (!r.primary || !r.not_measured.empty()) continue;
    measured = true;
    if (r.verdict.verdict == Verdict::no_change || same_value_in_every_boot(r.test)) continue;
    return r.name + " is " + verdict_name(r.verdict.verdict);
  }
  return measured ? "" : "no primary metric was measured";
}

}  // namespace isolab
