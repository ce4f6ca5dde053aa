// oslat's text summary into an OslatResult (parse/oslat.h has the format and the result).
#pragma once

#include <string_view>

#include "parse/oslat.h"

namespace isolab {

// Parses oslat's text output: the one summary table in `text`, after any header or wrapper
// lines (lines after the table are ignored); avg is left out where parse_oslat_json leaves it
// out. Refuses, with isolab::Error naming the line (and quoting a table row): a run cut
// short (a header or "Test completed." but no table, or a table that stops before its Duration
// row), oslat's usage text or "ERROR:" lines instead of a table (libnuma's numa_available()
// failing is named as a kernel without CONFIG_NUMA), a table row whose label, unit or number
// of columns is wrong, a value that is not a number, two tables, duplicate CPUs, and bucket
// labels that do not rise by one width.
OslatResult parse_oslat_text(std::string_view text);

}  // namespace isolab
