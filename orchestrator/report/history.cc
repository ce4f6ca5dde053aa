#include "report/history.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace isolab {

std::string render_history_text(const std::string& metric, const std::vector<HistoryRow>& rows) {
  std::ostringstream o;
  o << "history of " << metric << " (median of ok cells per run and variant)\n";
  std::size_t wr = 6, wv = 7;
  for (const auto& r : rows) {
    wr = std::max(wr, r.run_id.size());
    wv = std::max(wv, r.variant.size());
  }
  char line[128];
  o << "run_id" << std::string(wr - 6, ' ') << "  started_at            variant"
    << std::string(wv - 7, ' ') << "    n        median  unit\n";
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "  %-20s  ", r.started_at.c_str());
    o << r.run_id << std::string(wr - r.run_id.size(), ' ') << line << r.variant
      << std::string(wv - r.variant.size(), ' ');
    std::snprintf(line, sizeof line, "  %3zu  %12.6g  ", r.n, r.median);
    o << line << r.unit << "\n";
  }
  if (rows.empty()) o << "(no values)\n";
  return o.str();
}

nlohmann::json history_to_json(const std::string& metric, const std::vector<HistoryRow>& rows) {
  nlohmann::json j = {{"metric", metric}, {"rows", nlohmann::json::array()}};
  for (const auto& r : rows) {
    j["rows"].push_back(
        {{"run_id", r.run_id},
         {"started_at", r.started_at},
         {"variant", r.variant},
         {"n", r.n},
         {"median", std::isfinite(r.median) ? nlohmann::json(r.median) : nlohmann::json()},
         {"unit", r.unit}});
  }
  return j;
}

}  // namespace isolab
