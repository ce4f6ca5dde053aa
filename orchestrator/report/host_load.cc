#include "report/host_load.h"

#include "base/number_text.h"

namespace isolab {

namespace {

std::string measure_text(const HostLoadMeasure& m) {
  return m.name + " A " + format_number("%.3g", m.mean_a) + ", B " +
         format_number("%.3g", m.mean_b) + " (exact permutation p = " + format_number("%.3g", m.p) +
         ")";
}

}  // namespace

std::string host_load_flag_line(const HostLoadComparison& c) {
  if (c.measures.empty())
    return "host load: not recorded for both sides (fewer than 2 boots of A or B with "
           "cells[].host_load)";
  std::string line;
  if (c.differ) {
    line = "host load: A and B boots ran under different host load:";
    std::string sep = " ";
    for (const auto& m : c.measures)
      if (m.p < c.alpha / double(c.measures.size())) line += sep + measure_text(m), sep = "; ";
    return line + "; a change in timings may be the host's";
  }
  line = "host load: alike in A and B (";
  for (std::size_t i = 0; i < c.measures.size(); ++i)
    line += (i ? "; " : "") + measure_text(c.measures[i]);
  return line + ")";
}

std::string host_load_flag_line(const results::RunResult& run_a, const std::string& variant_a,
                                const results::RunResult& run_b, const std::string& variant_b,
                                double alpha) {
  return host_load_flag_line(compare_host_loads(variant_host_loads(run_a, variant_a),
                                                variant_host_loads(run_b, variant_b), alpha));
}

}  // namespace isolab
