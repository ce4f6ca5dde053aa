// Whether B is equivalent to A, the condition on which a nightly baseline moves (docs/verdicts.md,
// "The nightly baseline"): a baseline that moved on every night without a regression would
// ratchet, each night's change inside the margin and their sum beyond it.
//
// Equivalent: compare's exit status is 0, at least one primary metric was measured, and every
// measured primary row is "no significant change" (its interval inside +-margin) or had the same
// value in every boot of both sides (a count that stayed 0: nothing to tell them apart). A
// primary that is inconclusive, changed below its threshold, improved or regressed is not.
#pragma once

#include <string>

#include "compare/compare.h"

namespace isolab {

// "" when c shows equivalence as above; else why not, one line naming the first primary row
// that keeps it from it ("vmstat-syscall.insns_per_syscall is changed, below threshold"), or
// "exit status 1" / "exit status 3" / "no primary metric was measured".
std::string not_equivalent_reason(const Comparison& c);

}  // namespace isolab
