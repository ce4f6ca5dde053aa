#include "compare/profile_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "results/cell_facts.h"

namespace isolab {

namespace {

using Key = std::tuple<std::string, unsigned, std::string>;  // step, CPU, function
using List = std::pair<std::string, unsigned>;               // step, CPU

struct Side {
  std::map<Key, double> sums;       // over the cells that list the function
  std::map<Key, std::size_t> seen;  // cells that list it
  std::map<List, double> cutoffs;   // sum over cells of the list's smallest entry
  std::size_t cells = 0;
};

// Adds one cell's list for (step, CPU): its functions and its smallest entry.
void add_list(const results::ProfileList& list, Side& side) {
  double smallest = 0;
  bool any = false;
  for (const auto& e : list.entries) {
    const Key key{list.step, list.cpu, e.function};
    side.sums[key] += e.insns;
    ++side.seen[key];
    smallest = any ? std::min(smallest, e.insns) : e.insns;
    any = true;
  }
  side.cutoffs[{list.step, list.cpu}] += smallest;
}

Side collect(const results::RunResult& run, const std::string& variant) {
  Side side;
  for (const auto& c : run.cells) {
    if (c.variant.value_or("") != variant || !c.is_ok() || c.is_warmup()) continue;
    const auto profile = results::insn_profile(c);
    if (!profile) continue;
    for (const auto& list : *profile) add_list(list, side);
    ++side.cells;
  }
  return side;
}

// The side's mean per boot of a function; a cell whose list leaves it out contributes its
// list's smallest entry, and *at_most says so (the mean is then an upper bound).
double side_value(const Side& side, const Key& key, bool* at_most) {
  const auto s = side.sums.find(key);
  const auto n = side.seen.find(key);
  const std::size_t seen = n == side.seen.end() ? 0 : n->second;
  double sum = s == side.sums.end() ? 0 : s->second;
  *at_most = seen < side.cells;
  if (*at_most) {
    const auto c = side.cutoffs.find({std::get<0>(key), std::get<1>(key)});
    const double mean_cut = c == side.cutoffs.end() ? 0 : c->second / side.cells;
    sum += static_cast<double>(side.cells - seen) * mean_cut;
  }
  return sum / static_cast<double>(side.cells);
}

// The smallest |B - A| the bounds allow: 0 when a bound leaves the change's sign open.
double least_change(const ProfileChange& r) {
  if (r.a_at_most && r.b_at_most) return 0;
  if (r.a_at_most) return r.b > r.a ? r.b - r.a : 0;
  if (r.b_at_most) return r.a > r.b ? r.a - r.b : 0;
  return std::fabs(r.diff());
}

}  // namespace

std::vector<ProfileChange> profile_changes(const results::RunResult& run_a,
                                           const std::string& variant_a,
                                           const results::RunResult& run_b,
                                           const std::string& variant_b, std::size_t most) {
  const Side a = collect(run_a, variant_a), b = collect(run_b, variant_b);
  if (!a.cells || !b.cells) return {};
  std::set<Key> keys;
  for (const auto* side : {&a, &b})
    for (const auto& [key, sum] : side->sums) keys.insert(key);
  std::vector<ProfileChange> out;
  for (const Key& key : keys) {
    ProfileChange r;
    std::tie(r.step, r.cpu, r.function) = key;
    r.a = side_value(a, key, &r.a_at_most);
    r.b = side_value(b, key, &r.b_at_most);
    r.cells_a = a.cells;
    r.cells_b = b.cells;
    if (least_change(r) > 0) out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(), [](const ProfileChange& x, const ProfileChange& y) {
    return least_change(x) > least_change(y);
  });
  if (out.size() > most) out.resize(most);
  return out;
}

}  // namespace isolab
