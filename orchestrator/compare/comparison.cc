#include "compare/comparison.h"

#include <algorithm>

namespace isolab {

std::size_t Comparison::count(Verdict v) const {
  return static_cast<std::size_t>(std::count_if(
      metrics.begin(), metrics.end(), [&](const MetricRow& r) { return r.verdict.verdict == v; }));
}

std::size_t Comparison::count(Verdict v, bool primary) const {
  return static_cast<std::size_t>(std::count_if(
      metrics.begin(), metrics.end(),
      [&](const MetricRow& r) { return r.verdict.verdict == v && r.primary == primary; }));
}

std::size_t Comparison::primary_regressions() const { return count(Verdict::regressed, true); }

std::size_t Comparison::kernel_failures_b() const {
  return static_cast<std::size_t>(
      std::count_if(issues.begin(), issues.end(),
                    [](const CellIssue& i) { return i.side == "B" && i.kernel_failure; }));
}

std::size_t Comparison::kernel_failure_regressions() const {
  return static_cast<std::size_t>(std::count_if(failures.begin(), failures.end(),
                                                [](const FailureRow& f) { return f.against_b; }));
}

std::size_t Comparison::gate_regressions() const {
  return static_cast<std::size_t>(
      std::count_if(gate.begin(), gate.end(), [](const GateSummaryRow& g) { return g.against_b; }));
}

std::size_t Comparison::retry_regressions() const { return retries.against_b ? 1 : 0; }

std::size_t Comparison::new_warnings_in_touched_files() const {
  if (!new_warnings) return 0;
  return static_cast<std::size_t>(std::count_if(new_warnings->begin(), new_warnings->end(),
                                                [](const auto& w) { return w.in_touched_file; }));
}

std::size_t Comparison::regressions() const {
  return primary_regressions() + kernel_failure_regressions() + gate_regressions() +
         retry_regressions() + new_warnings_in_touched_files();
}

std::vector<const MetricRow*> Comparison::missing_more_in_b() const {
  std::vector<const MetricRow*> out;
  for (const auto& r : metrics)
    if (!r.derived && r.missing_b > r.missing_a) out.push_back(&r);
  return out;
}

}  // namespace isolab
