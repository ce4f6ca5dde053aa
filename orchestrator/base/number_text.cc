#include "base/number_text.h"

#include <cstdio>

namespace isolab {

std::string format_number(const char* printf_format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, printf_format, v);
  return buf;
}

}  // namespace isolab
