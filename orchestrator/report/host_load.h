// compare's host-load line (compare/host_load.h): whether A's and B's boots ran under like host
// load, as one line of the text and Markdown summaries.
#pragma once

#include <string>

#include "compare/host_load.h"
#include "results/result.h"

namespace isolab {

// One line for compare's summary:
//   "host load: A and B boots ran under different host load: 1-min loadavg A 0.85, B 2.4
//    (exact permutation p = 0.008); a change in timings may be the host's"
//   "host load: alike in A and B (1-min loadavg A 0.85, B 0.9, p = 0.69; ...)"
//   "host load: not recorded for both sides (runs made before cells[].host_load)"
std::string host_load_flag_line(const HostLoadComparison& c);

// variant_host_loads of both sides, compare_host_loads and host_load_flag_line in one call.
std::string host_load_flag_line(const results::RunResult& run_a, const std::string& variant_a,
                                const results::RunResult& run_b, const std::string& variant_b,
                                double alpha = 0.05);

}  // namespace isolab
