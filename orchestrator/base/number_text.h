// A number as text in a printf format, for messages and reports.
#pragma once

#include <string>

namespace isolab {

// v printed with printf_format, a format with exactly one floating conversion ("%.3g",
// "%+.2f"); the text is cut at 63 characters. Non-finite values print as printf prints them
// ("inf", "nan").
std::string format_number(const char* printf_format, double v);

}  // namespace isolab
