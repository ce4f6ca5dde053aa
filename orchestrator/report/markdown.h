// The Markdown form of a Comparison.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compare/compare.h"

namespace isolab {

// GitHub-flavoured Markdown tables, for a mailing-list reply or a pull request; '|' and other
// table-breaking characters in values are escaped.
std::string render_markdown(const Comparison& c);

}  // namespace isolab
