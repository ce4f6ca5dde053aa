// The CUSUM of a nightly series as isolab history prints it, text and JSON (history/cusum.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "history/cusum.h"

namespace isolab {

// "cusum of M against run R (anchor A, margin M'): ..." with one line per night and the alarm.
std::string render_cusum_text(const Cusum& c);
nlohmann::json cusum_to_json(const Cusum& c);

}  // namespace isolab
