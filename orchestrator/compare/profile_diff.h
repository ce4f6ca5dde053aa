// Where the kernel instructions went: the differential profile of two variants from the
// per-step kernel profiles that the instruction-counting plugin gives each cell (result.json
// cells[].insn_counts.profile, workload/insn_metrics.h: per workload step and isolated CPU, the
// kernel functions with the most instructions, largest first, named from System.map).
//
// Per (step, CPU, function) the per-boot mean over each variant's contributing cells (ok, not
// warm-up). A cell's list holds its top functions only, so a function a list leaves out
// executed at most that list's smallest entry there: it counts that much, and the side's mean
// is then an upper bound (a_at_most / b_at_most). Changes are ranked by the smallest |B - A|
// the bounds allow, and one whose sign the bounds leave open is not reported. Informational:
// no verdict rests on it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "results/result.h"

namespace isolab {

struct ProfileChange {
  std::string step;                           // workload name
  unsigned cpu = 0;                           // the isolated CPU
  std::string function;                       // kernel function
  double a = 0;                               // mean kernel instructions per boot in A's cells
  double b = 0;                               // the same in B's
  bool a_at_most = false, b_at_most = false;  // the mean is an upper bound (see above)
  std::size_t cells_a = 0, cells_b = 0;
  double diff() const { return b - a; }
};

// The `most` largest |b - a| over every step, CPU and function of the two variants' cells,
// largest first (ties: step, CPU, function). Empty when either side has no profile. Never
// throws for a malformed profile entry: it is skipped (results/cell_facts.h insn_profile).
std::vector<ProfileChange> profile_changes(const results::RunResult& run_a,
                                           const std::string& variant_a,
                                           const results::RunResult& run_b,
                                           const std::string& variant_b, std::size_t most = 10);

}  // namespace isolab
