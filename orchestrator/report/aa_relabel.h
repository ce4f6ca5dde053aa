// isolab compare --relabel-aa's output, text and JSON (calibrate/relabel_aa.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "calibrate/relabel_aa.h"

namespace isolab {

// {"schema":"isolab-aa-relabelling","version":1,"run_id","variant_a","variant_b","cells_a",
//  "cells_b","relabellings","exact","primary","primary_origin","exit_1","exit_1_rate","causes":
//  {cause: count},"uncorrected":{"exit_1","exit_1_rate","causes"},"observed_exit_1"}
nlohmann::json aa_relabel_to_json(const AaRelabelResult& r);

// The same as lines of text: what was relabelled, what the exit status rests on, the exit-1
// count and rate with the causes (the 12 most frequent), and the uncorrected reference.
std::string render_aa_relabel_text(const AaRelabelResult& r);

}  // namespace isolab
