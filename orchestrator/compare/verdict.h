// The vocabulary of compare's verdicts: the metric kinds, the better direction, the verdicts
// and what a verdict carries. The tests: compare/metric_test.h; the rules that decide:
// compare/verdict_rules.h.
#pragma once

#include <limits>
#include <string>

namespace isolab {

enum class Better { lower, higher, none };

// "lower" / "higher"; anything else (absent, "none") is Better::none.
Better better_from_string(const std::string& s);
const char* better_name(Better b);  // "lower", "higher", "none"

enum class Verdict { improved, regressed, changed_below, no_change, inconclusive };

enum class MetricKind { timing, count, instructions };

// "timing" / "count" / "instructions".
const char* metric_kind_name(MetricKind k);

// The kind of a metric from its result.json fields: count when kind is "count", instructions
// when it is "instructions", count when kind is empty (absent) and unit is "count" or "1/s";
// timing otherwise.
MetricKind metric_kind_of(const std::string& kind, const std::string& unit);

// "improved", "regressed", "changed, below threshold", "no significant change",
// "inconclusive".
const char* verdict_name(Verdict v);

struct VerdictResult {
  Verdict verdict = Verdict::inconclusive;
  std::string reason;  // one line saying which rule decided, with the numbers
  double threshold_pct = 0;
  // The margin of "no significant change" and the largest change the interval does not exclude
  // (+inf when unbounded, NaN without an interval): percent of A for timing and instructions,
  // the metric's unit for counts (margin_relative says which).
  double margin = 0;
  bool margin_relative = true;
  double cannot_exclude = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace isolab
