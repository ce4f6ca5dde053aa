#include "pipeline/placement.h"

#include <algorithm>

#include "base/error.h"

namespace isolab {

std::vector<CellBlock> group_blocks(const std::vector<CellPlan>& cells) {
  std::vector<CellBlock> blocks;
  for (const auto& c : cells) {
    const std::string key = (c.warmup ? "w" : "r") + std::to_string(c.repetition);
    auto it = std::find_if(blocks.begin(), blocks.end(),
                           [&](const CellBlock& b) { return b.key == key; });
    if (it == blocks.end()) it = blocks.insert(blocks.end(), CellBlock{key, {}});
    it->cells.push_back(c);
  }
  return blocks;
}

std::vector<std::size_t> place_blocks(std::size_t n_blocks, const std::vector<bool>& usable) {
  std::vector<std::size_t> hosts;
  for (std::size_t h = 0; h < usable.size(); ++h)
    if (usable[h]) hosts.push_back(h);
  std::vector<std::size_t> out(n_blocks, kNoHost);
  if (hosts.empty()) return out;
  for (std::size_t b = 0; b < n_blocks; ++b) out[b] = hosts[b % hosts.size()];
  return out;
}

std::vector<std::size_t> replan_blocks(const std::vector<std::size_t>& placement,
                                       const std::vector<bool>& done,
                                       const std::vector<bool>& usable) {
  if (placement.size() != done.size())
    throw Error("replan_blocks: " + std::to_string(placement.size()) + " placements but " +
                std::to_string(done.size()) + " done flags");
  auto ok = [&](std::size_t h) { return h < usable.size() && usable[h]; };
  std::vector<std::size_t> load(usable.size(), 0);
  for (std::size_t b = 0; b < placement.size(); ++b)
    if (!done[b] && ok(placement[b])) ++load[placement[b]];
  std::vector<std::size_t> out = placement;
  for (std::size_t b = 0; b < out.size(); ++b) {
    if (done[b] || ok(out[b])) continue;
    std::size_t best = kNoHost;
    for (std::size_t h = 0; h < usable.size(); ++h)
      if (usable[h] && (best == kNoHost || load[h] < load[best])) best = h;
    out[b] = best;
    if (best != kNoHost) ++load[best];
  }
  return out;
}

}  // namespace isolab
