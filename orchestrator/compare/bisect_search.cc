#include "compare/bisect_search.h"

#include <cmath>
#include <numeric>

#include "base/error.h"

namespace isolab {

namespace {

// The state of a verdict when the search looks for `direction` (regressed or improved);
// `direction` inconclusive: the whole series, whose moving verdict sets the direction.
StepState state_of(Verdict v, Verdict direction) {
  if (v == Verdict::inconclusive) return StepState::undecided;
  // Changed below the threshold: not the move the search looks for (one beyond the margin).
  if (v == Verdict::no_change || v == Verdict::changed_below) return StepState::not_moved;
  if (direction == Verdict::inconclusive || v == direction) return StepState::moved;
  return StepState::moved_other_way;
}

// The search in progress: the outcome it builds and what it calls.
class Search {
 public:
  Search(std::size_t patches, const BisectSettings& s, const StepMeasurer& measure,
         const std::function<void(const BisectOutcome&)>& on_step)
      : settings_(s), measure_(measure), on_step_(on_step) {
    out_.patches = patches;
  }

  BisectOutcome run() {
    const StepState whole = decide(out_.patches);
    if (whole != StepState::moved) return end_without_series_move(whole);
    out_.direction = out_.steps.back().measurement.verdict;
    std::size_t lo = 0, hi = out_.patches;
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      const StepState s = decide(mid);
      if (s == StepState::undecided) return end_undecided(lo, hi, mid);
      (s == StepState::moved ? hi : lo) = mid;
    }
    return end_with_culprit(hi);
  }

 private:
  // Measures `prefix` until its state is decided or max_boots is reached.
  StepState decide(std::size_t prefix) {
    int attempt = 1;
    for (int boots = settings_.boots;; boots *= 2, ++attempt) {
      const double level = step_level(out_.patches, settings_, attempt);
      BisectStep step{
          prefix, attempt, boots, level, measure_(prefix, boots, level), StepState::undecided};
      step.state = state_of(step.measurement.verdict, out_.direction);
      out_.steps.push_back(step);
      if (on_step_) on_step_(out_);
      if (step.state != StepState::undecided || boots * 2 > settings_.max_boots) return step.state;
    }
  }

  BisectOutcome end_without_series_move(StepState whole) {
    const BisectStep& s = out_.steps.back();
    if (whole == StepState::not_moved)
      out_.conclusion = "the whole series makes no significant change (" + s.measurement.reason +
                        "): nothing to bisect";
    else
      out_.conclusion = "the whole series stays inconclusive at " + std::to_string(s.boots) +
                        " boots per variant (" + s.measurement.reason + "): nothing to bisect";
    return out_;
  }

  BisectOutcome end_undecided(std::size_t lo, std::size_t hi, std::size_t mid) {
    out_.undecided_first = lo + 1;
    out_.undecided_last = hi;
    out_.conclusion = "undecided: patches 1-" + std::to_string(mid) + " stay inconclusive at " +
                      std::to_string(out_.steps.back().boots) +
                      " boots per variant; the first patch that moves the metric is one of " +
                      std::to_string(lo + 1) + "-" + std::to_string(hi);
    return out_;
  }

  BisectOutcome end_with_culprit(std::size_t culprit) {
    out_.culprit = culprit;
    out_.conclusion = "patch " + std::to_string(culprit) + " of " + std::to_string(out_.patches) +
                      " is the first that moves the metric (" + verdict_name(out_.direction) + ")";
    for (const BisectStep& s : out_.steps)
      if (s.state == StepState::moved_other_way) {
        out_.conclusion += "; patches 1-" + std::to_string(s.prefix) +
                           " moved it the other way, so the series does not move it in one "
                           "step: read every step's verdict";
        break;
      }
    return out_;
  }

  BisectSettings settings_;
  const StepMeasurer& measure_;
  const std::function<void(const BisectOutcome&)>& on_step_;
  BisectOutcome out_;
};

}  // namespace

const char* step_state_name(StepState s) {
  switch (s) {
    case StepState::moved:
      return "moved";
    case StepState::not_moved:
      return "not moved";
    case StepState::moved_other_way:
      return "moved the other way";
    case StepState::undecided:
      return "undecided";
  }
  return "undecided";
}

std::size_t bisect_decisions(std::size_t patches) {
  std::size_t d = 1;
  for (std::size_t span = 1; span < patches; span *= 2) ++d;
  return d;
}

int bisect_attempts(const BisectSettings& settings) {
  int k = 1;
  for (int b = settings.boots; b * 2 <= settings.max_boots; b *= 2) ++k;
  return k;
}

double step_level(std::size_t patches, const BisectSettings& settings, int attempt) {
  const double share = settings.alpha / static_cast<double>(bisect_decisions(patches));
  const int last = bisect_attempts(settings);
  const double left = std::pow(0.25, attempt - 1);  // what the earlier attempts left
  return attempt >= last ? share * left : share * 0.75 * left;
}

int BisectOutcome::cells() const {
  return std::accumulate(steps.begin(), steps.end(), 0,
                         [](int sum, const BisectStep& s) { return sum + s.measurement.cells; });
}

BisectOutcome bisect_series(std::size_t patches, const BisectSettings& settings,
                            const StepMeasurer& measure,
                            const std::function<void(const BisectOutcome&)>& on_step) {
  if (patches == 0) throw Error("bisect: the series has no patch");
  if (settings.boots < 1 || settings.max_boots < settings.boots)
    throw Error("bisect: boots must be >= 1 and max boots >= boots (got " +
                std::to_string(settings.boots) + " and " + std::to_string(settings.max_boots) +
                ")");
  if (!(settings.alpha > 0 && settings.alpha < 1))
    throw Error("bisect: alpha must be in (0, 1) (got " + std::to_string(settings.alpha) + ")");
  return Search(patches, settings, measure, on_step).run();
}

}  // namespace isolab
