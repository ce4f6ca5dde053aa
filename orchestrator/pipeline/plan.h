// The pure part of a run: which cells to boot, in which order, with which guest.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmdline/analyze.h"
#include "spec/spec.h"
#include "workload/workload.h"

namespace isolab {

// One boot: one variant x one repetition.
struct CellPlan {
  std::string id;  // "<variant>-r<rep>" or "<variant>-w<rep>" for warm-ups
  std::string variant;
  int repetition = 0;
  bool warmup = false;
};

// Warm-ups first, then the measured repetitions; within each repetition the variants are
// interleaved (A B A B ...) so that drift on the host hits every variant alike.
std::vector<CellPlan> plan_cells(const Spec& spec);

// The guest a spec asks for, derived from its command line (cmdline/analyze.h).
struct GuestDerivation {
  std::string cmdline;  // the guest's isolation command line (without console/panic)
  int vcpus = 0;
  CpuPartition partition;
  std::string expect_isolated;   // what sysfs `isolated` should show
  std::string expect_nohz_full;  // what sysfs `nohz_full` should show ("" = nothing asked)
  nlohmann::json analysis;       // the analyzer's JSON (kept, dropped, warnings)
  ExpectedIsolation expected;    // what the isolation gate checks in the guest
};

// Throws SpecError("/guest/...") when the command line cannot be understood.
GuestDerivation derive_guest(const Spec& spec);

// A dry run: the plan as JSON (variants, cells in order, guest, steps per workload).
nlohmann::json describe_plan(const Spec& spec, const GuestDerivation& guest);

}  // namespace isolab
