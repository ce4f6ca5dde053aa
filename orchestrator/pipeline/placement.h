// Placing cells on several measurement hosts (pure). The unit of placement is the block: one
// repetition (measured or warm-up) of every variant, so that the A and B cells of a comparison
// always run on the same host and the host can be a blocking factor in the statistics
// (compare/compare.h). Used by run_spec when the spec or command line names hosts.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "pipeline/run_plan.h"

namespace isolab {

// The cells of one repetition of every variant, in plan order.
struct CellBlock {
  std::string key;  // "r<rep>" for a measured repetition, "w<rep>" for a warm-up
  std::vector<CellPlan> cells;
};

// Groups the cells of plan_cells() into blocks by (warmup, repetition), keeping the order in
// which each block first appears and the cells' order within it.
std::vector<CellBlock> group_blocks(const std::vector<CellPlan>& cells);

// No host: the block's cells cannot run anywhere.
inline constexpr std::size_t kNoHost = std::numeric_limits<std::size_t>::max();

// Host index of each of n_blocks blocks over the hosts with usable[i] true: round robin in
// block order (so warm-ups and repetitions are spread alike and the per-host block counts differ
// by at most one). Every entry is kNoHost when no host is usable.
std::vector<std::size_t> place_blocks(std::size_t n_blocks, const std::vector<bool>& usable);

// The placement after hosts stopped being usable: blocks that are not done and sit on an
// unusable host move to the usable host with the fewest unfinished blocks (lowest index on a
// tie), one at a time in block order; finished blocks and blocks on usable hosts stay.
// kNoHost when no host is usable. placement, done and the hosts' usable flags must agree in size
// (placement.size() == done.size()); throws isolab::Error otherwise.
std::vector<std::size_t> replan_blocks(const std::vector<std::size_t>& placement,
                                       const std::vector<bool>& done,
                                       const std::vector<bool>& usable);

}  // namespace isolab
