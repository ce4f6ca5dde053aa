// Where the kernel instructions went: the differential profile of two variants from the
// per-step kernel profiles that the instruction-counting plugin gives each cell (result.json
// cells[].insn_counts.profile, workload/insn_metrics.h: per workload step and isolated CPU, the
// kernel functions with the most instructions, largest first, named from System.map).
//
// Per (step, CPU, function) the per-boot mean over each variant's contributing cells (ok, not
// warm-up); a function missing from a cell's list counts 0 there (the list holds a cell's top
// functions only, so a small count can be a truncation: the rows name the top changes, which
// are well above the lists' cut-off). Informational: no verdict rests on it.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace isolab {

struct ProfileChange {
  std::string step;      // workload name
  unsigned cpu = 0;      // the isolated CPU
  std::string function;  // kernel function
  double a = 0;          // mean kernel instructions per boot in A's cells
  double b = 0;          // the same in B's
  std::size_t cells_a = 0, cells_b = 0;
  double diff() const { return b - a; }
};

// The `most` largest |b - a| over every step, CPU and function of the two variants' cells,
// largest first (ties: step, CPU, function). Empty when either side has no profile. Never
// throws for a malformed profile entry: it is skipped.
std::vector<ProfileChange> profile_changes(const nlohmann::json& run_a,
                                           const std::string& variant_a,
                                           const nlohmann::json& run_b,
                                           const std::string& variant_b, std::size_t most = 10);

// One line per change: "vmstat-syscall CPU 5: refresh_cpu_vm_stats 0 -> 9.3e+06 (+9.3e+06)
// kernel instructions per boot". Empty input gives no line.
std::vector<std::string> profile_change_lines(const std::vector<ProfileChange>& changes);

}  // namespace isolab
