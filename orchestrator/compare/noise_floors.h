// The noise floors of a calibration document (calibrate/calibration_json.h), as compare
// --noise-floor takes them, and whether the calibration was made under the runs' comparison key.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isolab {

// Reads the noise floors (percent by metric name) from calibration_to_json() output, as
// `compare --noise-floor FILE` takes it. null floors are skipped. Throws isolab::SpecError
// with the JSON pointer for a document that is not a calibration or a floor that is not a
// number >= 0.
std::map<std::string, double> noise_floors_from_json(const nlohmann::json& j);

// Why a calibration document may not be used for `run`: one line per field of the two
// comparison_key objects that differs ("isolab_revision: calibration=X, run=Y"), or one line
// when the calibration carries no comparison_key (made by an older isolab). Empty: usable.
std::vector<std::string> calibration_key_differences(const nlohmann::json& calibration,
                                                     const nlohmann::json& run);

}  // namespace isolab
