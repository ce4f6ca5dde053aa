// The text report of a Comparison, for a terminal.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compare/compare.h"

namespace isolab {

// What the text report shows beyond the answer.
struct TextOptions {
  // Every metric row in the tables and their "why" lines; by default only the primary rows and
  // the secondary rows that changed (regressed, improved, changed below threshold), with a line
  // counting the rest.
  bool all_rows = false;
};

// The answer first, for an 80x24 terminal: the runs compared; "verdict: <regressed | no
// regression | could not reach alpha> (exit status N)"; one line per primary row, per failure,
// gate check or retry rate counted against B (or not), the isolation gate in one line, what
// could not be decided; the secondary rows that changed; then "method:", what the exit status
// rests on; every line word-wrapped at 80 columns. Then fixed-width tables:
//   metric  unit  A median  B median  change [95% CI]  p  adj p  nA  nB  role  verdict
// (counts: CPUs, A mean, B mean, B-A [95% CI] (change); instructions: A mean, B mean), then why
// each row shown that is not a plain "no significant change" got its verdict, the histogram
// tails, profile changes, latency traces, kernel failures, the gate per check, the cells that
// did not count, the settings that decided the verdicts and the closing tally.
std::string render_text(const Comparison& c, const TextOptions& options = {});

}  // namespace isolab
