#include "cmdline/nearest_name.h"

#include <algorithm>
#include <numeric>

namespace isolab {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest_name(std::string_view given,
                                        const std::vector<std::string_view>& known,
                                        std::size_t max_distance) {
  std::optional<std::string> best;
  std::size_t best_distance = max_distance + 1;
  for (const std::string_view k : known) {
    const std::size_t d = edit_distance(given, k);
    if (d > 0 && d < best_distance) {
      best = std::string(k);
      best_distance = d;
    }
  }
  return best;
}

}  // namespace isolab
