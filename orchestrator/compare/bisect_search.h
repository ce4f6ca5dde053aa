// The search of `isolab bisect`: which patch of a series first moves one metric, from verdicts
// of prefixes of the series against A, never guessing on an inconclusive one.
//
// Rules (the measurer says what a prefix's verdict is; compare/verdict.h decides it):
//  1. The whole series (prefix n) is measured first. regressed or improved sets the direction
//     the search looks for; "no significant change" ends the search without a culprit (nothing
//     to bisect); inconclusive is re-measured (rule 3).
//  2. Binary search between lo = 0 (A itself: not moved) and hi = n (moved): prefix
//     mid = lo + (hi - lo) / 2 is moved when its verdict is the whole series' (then hi = mid)
//     and not moved when it is "no significant change" or the opposite verdict (then lo = mid;
//     the opposite one is kept as "moved the other way"). At hi - lo == 1, patch hi is the
//     culprit. Like git bisect it assumes a prefix stays moved once moved; a step moved the other
//     way is where that assumption shows cracks, and the conclusion says so.
//  3. An inconclusive prefix is measured again in a new attempt with twice the boots, up to
//     max_boots per variant; still inconclusive there, the search stops "undecided" and names
//     the patches it could not tell apart (lo + 1 .. hi), or for the whole series, none.
// Each attempt is one call of the measurer: a run of A and the prefix, `boots` boots each, judged
// at the attempt's level (step_level below), so that the whole search names a wrong patch with
// probability at most alpha when every verdict it rests on holds its level.
//
// Error control: the culprit is wrong only when some decisive verdict on the search path is
// wrong, and the path has at most D = 1 + ceil(log2 n) decisions (the whole series, then the
// binary search). Each decision gets alpha / D (Bonferroni). Within a decision, attempts spend
// that share front-loaded: attempt k < K spends 3/4 of what the earlier attempts left, the last
// attempt (K = 1 + floor(log2(max_boots / boots))) all that remains: 3/4, 3/16, 1/16 of the
// share at K = 3. A decision's verdicts together hold its share (a union bound over attempts),
// so the search holds alpha whatever the attempts' outcomes.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compare/verdict.h"

namespace isolab {

// One attempt at one prefix, as the measurer reports it.
struct StepMeasurement {
  Verdict verdict = Verdict::inconclusive;  // of the metric, prefix against A
  std::string reason;                       // the verdict's rule with its numbers
  double change_pct = 0;                    // prefix against A, percent (NaN when undefined)
  std::filesystem::path run_dir;            // the attempt's run directory
  int cells = 0;                            // boots the attempt spent, both variants
};

// Measures the first `prefix` patches (1..n) against A with `boots` boots per variant. May
// throw isolab::Error (a prefix that does not build): the search passes it on.
// `level` is the significance level the attempt's verdict must be judged at (step_level).
using StepMeasurer = std::function<StepMeasurement(std::size_t prefix, int boots, double level)>;

struct BisectSettings {
  int boots = 5;        // boots per variant of a step's first attempt (>= 1)
  int max_boots = 20;   // most boots per variant of one attempt (>= boots)
  double alpha = 0.05;  // probability of naming a wrong patch, in (0, 1)
};

// The decisions the search can take at most over `patches` (>= 1): 1 + ceil(log2 patches).
std::size_t bisect_decisions(std::size_t patches);

// The attempts one decision can take: 1 + floor(log2(max_boots / boots)).
int bisect_attempts(const BisectSettings& settings);

// The level of attempt `attempt` (1-based, at most bisect_attempts) of a decision in a search
// over `patches` patches, by the rule above: alpha / D x 3/4 x (1/4)^(attempt - 1), the last
// attempt alpha / D x (1/4)^(K - 1).
double step_level(std::size_t patches, const BisectSettings& settings, int attempt);

enum class StepState { moved, not_moved, moved_other_way, undecided };

// "moved", "not moved", "moved the other way", "undecided".
const char* step_state_name(StepState s);

struct BisectStep {
  std::size_t prefix = 0;  // patches 1..prefix applied
  int attempt = 1;         // 1, then 2, 3 ... for re-measurements of the same prefix
  int boots = 0;           // per variant, as asked of the measurer
  double level = 0;        // the significance level it was judged at (step_level)
  StepMeasurement measurement;
  StepState state = StepState::undecided;
};

struct BisectOutcome {
  std::size_t patches = 0;
  // The whole series' verdict: regressed or improved when it moved the metric.
  Verdict direction = Verdict::inconclusive;
  std::optional<std::size_t> culprit;  // 1-based patch number, the first that moves
  // The patches the search could not tell apart when it stopped undecided (1-based, first <=
  // last); 0 and 0 otherwise.
  std::size_t undecided_first = 0, undecided_last = 0;
  std::string conclusion;  // one line
  std::vector<BisectStep> steps;

  int cells() const;  // boots spent, every attempt and both variants
};

// Runs the search over a series of `patches` (>= 1) patches; on_step (may be empty) is called
// after every attempt with the steps so far, so a caller can record them before the next
// build. Throws isolab::Error for settings out of range and whatever the measurer throws.
BisectOutcome bisect_series(std::size_t patches, const BisectSettings& settings,
                            const StepMeasurer& measure,
                            const std::function<void(const BisectOutcome&)>& on_step = {});

}  // namespace isolab
