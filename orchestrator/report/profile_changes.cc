#include "report/profile_changes.h"

#include <cstdio>

namespace isolab {

std::vector<std::string> profile_change_lines(const std::vector<ProfileChange>& changes) {
  std::vector<std::string> lines;
  char buf[512];
  for (const ProfileChange& r : changes) {
    std::snprintf(buf, sizeof buf,
                  "%s CPU %u: %s %s%.3g -> %s%.3g (%s%+.3g) kernel instructions per boot",
                  r.step.c_str(), r.cpu, r.function.c_str(), r.a_at_most ? "<=" : "", r.a,
                  r.b_at_most ? "<=" : "", r.b, r.a_at_most || r.b_at_most ? "at least " : "",
                  r.a_at_most ? r.b - r.a : (r.b_at_most ? r.b - r.a : r.diff()));
    lines.emplace_back(buf);
  }
  return lines;
}

}  // namespace isolab
