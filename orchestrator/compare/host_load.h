// Whether A's and B's boots ran under like host load (result.json cells[].host_load, recorded
// by pipeline/host_sample.h, read by results/cell_facts.h): a difference in timings between
// variants whose boots met different load may be the host's, not the kernel's. Pure functions;
// compare's summary prints host_load_flag_line().
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "results/cell_facts.h"
#include "results/result.h"

namespace isolab {

// The host loads of the contributing boots of one variant (status "ok", not warm-up), in
// cells[] order; boots without a host_load object are left out, as are measures that are null
// or not numbers. An unknown variant gives an empty list.
std::vector<results::CellHostLoad> variant_host_loads(const results::RunResult& run,
                                                      const std::string& variant);

// One measure compared between the sides.
struct HostLoadMeasure {
  std::string name;  // "1-min loadavg", "CPU pressure (some avg10, %)", "steal (s per boot)"
  std::size_t n_a = 0, n_b = 0;
  double mean_a = 0, mean_b = 0;
  double p = 1;  // two-sided exact permutation test of the means (stats.h permutation_test_mean)
};

// The rule: every measure with values in at least 2 boots of each side is tested with the
// exact two-sided permutation test of the difference of means (stats.h, Fisher 1935); the
// loads differ when some measure's p < alpha / (measures tested) (Bonferroni over the
// measures). 5 + 5 boots: the smallest p is 2/252 = 0.008, below 0.05/3.
struct HostLoadComparison {
  std::vector<HostLoadMeasure> measures;  // tested ones, in the order above
  bool differ = false;
  double alpha = 0.05;
};
HostLoadComparison compare_host_loads(const std::vector<results::CellHostLoad>& a,
                                      const std::vector<results::CellHostLoad>& b,
                                      double alpha = 0.05);

}  // namespace isolab
