// `isolab calibrate`'s text output.
#pragma once

#include <string>

#include "calibrate/calibrate.h"

namespace isolab {

// Per run: a table (metric, unit, kind, n, CV %, dispersion, tau, trend p, odd/even p,
// halves p, Holm-adjusted drift p, MDE in unit and %, noise floor %); then the between-run
// table, the false-alarm line and the drifting-metrics line.
std::string render_calibration_text(const Calibration& c);

}  // namespace isolab
