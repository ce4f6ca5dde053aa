#include "compare/budget.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/error.h"
#include "base/number_text.h"
#include "stats/multiplicity.h"
#include "stats/permutation.h"
#include "stats/step_down.h"

namespace isolab {

namespace {

std::string boots_text(std::size_t n, std::size_t total) {
  return std::to_string(n) + " of " + std::to_string(total) + " boot" + (total == 1 ? "" : "s");
}

}  // namespace

namespace {

// Kernel-failure classes in report order.
constexpr const char* kFailureClasses[] = {"build", "boot",    "boot_timeout", "panic",
                                           "oops",  "warning", "rcu_stall",    "lockup"};

std::size_t cells_with(const std::vector<CellRecord>& cells, const std::string& klass) {
  return static_cast<std::size_t>(std::count_if(
      cells.begin(), cells.end(), [&](const auto& c) { return failure_weight_class(c) == klass; }));
}

}  // namespace

std::string failure_weight_class(const CellRecord& cell) {
  if (cell.status != "failed" || !is_kernel_failure_class(cell.failure_class)) return "";
  if (cell.failure_class == "boot" && cell.reason.find("_timeout") != std::string::npos)
    return "boot_timeout";
  return cell.failure_class;
}

std::vector<FailureRow> weigh_failures(const std::vector<CellRecord>& a,
                                       const std::vector<CellRecord>& b) {
  std::vector<FailureRow> rows;
  for (const char* klass : kFailureClasses) {
    FailureRow f;
    f.failure_class = klass;
    f.a_cells = cells_with(a, klass);
    f.b_cells = cells_with(b, klass);
    if (f.a_cells == 0 && f.b_cells == 0) continue;
    f.a_total = a.size();
    f.b_total = b.size();
    f.p = fisher_exact_greater(f.a_cells, f.a_total, f.b_cells, f.b_total);
    f.p_min = fisher_min_p(f.a_cells, f.a_total, f.b_cells, f.b_total);
    f.reason = "B " + boots_text(f.b_cells, f.b_total) + ", A " + boots_text(f.a_cells, f.a_total) +
               "; one-sided Fisher p = " + format_number("%.3g", f.p) + " (smallest possible " +
               format_number("%.3g", f.p_min) + ")";
    rows.push_back(std::move(f));
  }
  return rows;
}

void weigh_gate(std::vector<GateSummaryRow>& rows) {
  for (auto& g : rows) {
    const std::size_t a_fail = g.a_total - g.a_pass, b_fail = g.b_total - g.b_pass;
    g.p = g.p_min = 1;
    g.against_b = false;
    g.reason.clear();
    if (b_fail == 0) continue;
    g.p = fisher_exact_greater(a_fail, g.a_total, b_fail, g.b_total);
    g.p_min = fisher_min_p(a_fail, g.a_total, b_fail, g.b_total);
    g.reason = "B failed it in " + boots_text(b_fail, g.b_total) + ", A in " +
               boots_text(a_fail, g.a_total) +
               "; one-sided Fisher p = " + format_number("%.3g", g.p) + " (smallest possible " +
               format_number("%.3g", g.p_min) + ")";
  }
}

RetryRow weigh_retries(const std::vector<CellRecord>& a, const std::vector<CellRecord>& b) {
  RetryRow r;
  Stratum s;
  for (const auto& c : a) s.a.push_back(static_cast<double>(c.retries));
  for (const auto& c : b) s.b.push_back(static_cast<double>(c.retries));
  r.a_cells = a.size();
  r.b_cells = b.size();
  for (const auto& c : a) r.a_retries += c.retries;
  for (const auto& c : b) r.b_retries += c.retries;
  if (r.a_retries + r.b_retries == 0) return r;
  const StratifiedResult t = stratified_permutation_test({s}, StratumScore::values, 1000000, 20000,
                                                         0x72657472, Alternative::greater);
  r.p = t.p;
  r.p_min = t.min_p;
  r.reason = "infrastructure failures booted again: B " + std::to_string(r.b_retries) + " in " +
             std::to_string(r.b_cells) + " boots, A " + std::to_string(r.a_retries) + " in " +
             std::to_string(r.a_cells) + "; one-sided exact p = " + format_number("%.3g", r.p) +
             " (smallest possible " + format_number("%.3g", r.p_min) + ")";
  return r;
}

}  // namespace isolab
