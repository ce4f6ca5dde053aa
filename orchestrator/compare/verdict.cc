#include "compare/verdict.h"

namespace isolab {

Better better_from_string(const std::string& s) {
  if (s == "lower") return Better::lower;
  if (s == "higher") return Better::higher;
  return Better::none;
}

const char* better_name(Better b) {
  switch (b) {
    case Better::lower:
      return "lower";
    case Better::higher:
      return "higher";
    case Better::none:
      break;
  }
  return "none";
}

const char* metric_kind_name(MetricKind k) {
  switch (k) {
    case MetricKind::count:
      return "count";
    case MetricKind::instructions:
      return "instructions";
    case MetricKind::timing:
      break;
  }
  return "timing";
}

MetricKind metric_kind_of(const std::string& kind, const std::string& unit) {
  if (kind == "count") return MetricKind::count;
  if (kind == "instructions") return MetricKind::instructions;
  if (kind.empty() && (unit == "count" || unit == "1/s")) return MetricKind::count;
  return MetricKind::timing;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::improved:
      return "improved";
    case Verdict::regressed:
      return "regressed";
    case Verdict::changed_below:
      return "changed, below threshold";
    case Verdict::no_change:
      return "no significant change";
    case Verdict::inconclusive:
      break;
  }
  return "inconclusive";
}

}  // namespace isolab
