#pragma once
// The current UTC time as text, for run ids and result.json timestamps. Header-only.

#include <ctime>
#include <string>

namespace isolab {

// Now in UTC formatted with strftime(3) `fmt`; the default is ISO 8601 ("2026-11-30T20:03:48Z"),
// "%Y%m%dT%H%M%SZ" gives the compact form of run ids. Output longer than 63 bytes is empty.
inline std::string utc_now(const char* fmt = "%Y-%m-%dT%H:%M:%SZ") {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  if (std::strftime(buf, sizeof buf, fmt, &tm) == 0) return {};
  return buf;
}

}  // namespace isolab
