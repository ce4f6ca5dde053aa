// isolab history's output, text and JSON (history/history.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "history/history.h"

namespace isolab {

// Table: run_id  started_at  variant  n  median  unit.
std::string render_history_text(const std::string& metric, const std::vector<HistoryRow>& rows);
nlohmann::json history_to_json(const std::string& metric, const std::vector<HistoryRow>& rows);

}  // namespace isolab
