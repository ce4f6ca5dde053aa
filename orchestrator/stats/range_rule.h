// The range rule for measurements that do not vary (docs/verdicts.md): an instruction count
// whose boots of one kernel agree within a jitter J that `isolab calibrate` measured over K
// independent runs is decided from the ranges of A's and B's boots, not from a permutation
// floor.
//
// Applies when n_A >= 2, n_B >= 2 and max - min <= J on each side. The change then lies in
//   [min B - max A - J, max B - min A + J]
// (in the metric's unit); an interval that excludes 0 is a change. False alarms (B the same
// kernel as A): the rule fires only when the comparison's boots span more than J, which a run of
// the calibrated kernel does with probability at most 1 / (K + 1) (its span would be the
// largest of K + 1 exchangeable runs' spans), and then only when the labels put every B boot on
// one side of every A boot, probability 1 / C(n_A + n_B, n_B) per direction given the pooled
// values. Its one-sided false-alarm bound is therefore
//   b = 1 / ((K + 1) C(n_A + n_B, n_B)):
// 0.0125 at 3 against 3 after K = 3 runs, 0.00357 at 4 against 4, 0.000992 at 5 against 5.
// The assumption: the compared kernels' boots vary no more than the calibrated kernel's; a side
// whose boots spread more than J (a bimodal path) is sent back to the exact tests.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace isolab {

struct RangeRule {
  bool applies = false;
  std::string why_not;  // when not: "A's boots spread 459 > jitter 0.5"
  double jitter = 0;
  std::size_t runs = 0;
  double low = 0, high = 0;  // the change's interval, metric's unit (B - A)
  double bound = 1;          // one-sided false-alarm bound b
};

// b above; 0 when n_a or n_b is below 2 (the rule does not apply, so it spends nothing of alpha).
// runs >= 1.
double range_rule_bound(std::size_t n_a, std::size_t n_b, std::size_t runs);

// The rule for one metric: values finite; jitter >= 0 in the metric's unit.
RangeRule range_rule(std::span<const double> a, std::span<const double> b, double jitter,
                     std::size_t runs);

}  // namespace isolab
