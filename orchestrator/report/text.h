// The text report of a Comparison, for a terminal.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compare/compare.h"

namespace isolab {

// Fixed-width tables for a terminal:
//   metric  unit  A median  B median  change [95% CI]  p  adj p  nA  nB  role  verdict
// (counts: CPUs, A mean, B mean, B-A [95% CI] (change); instructions: A mean, B mean), then why
// each row that is not a plain "no significant change" got its verdict, and the sections above.
std::string render_text(const Comparison& c);

}  // namespace isolab
