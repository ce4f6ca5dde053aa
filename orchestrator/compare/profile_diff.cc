#include "compare/profile_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace isolab {

namespace {

using nlohmann::json;
using Key = std::tuple<std::string, unsigned, std::string>;  // step, CPU, function
using List = std::pair<std::string, unsigned>;               // step, CPU

struct Side {
  std::map<Key, double> sums;       // over the cells that list the function
  std::map<Key, std::size_t> seen;  // cells that list it
  std::map<List, double> cutoffs;   // sum over cells of the list's smallest entry
  std::size_t cells = 0;
};

// Adds one cell's list for (step, CPU): its functions and its smallest entry.
void add_list(const std::string& step, unsigned cpu, const json& list, Side& side) {
  double smallest = 0;
  bool any = false;
  for (const json& row : list) {
    if (!row.is_object() || !row.contains("function") || !row["function"].is_string() ||
        !row.contains("insns") || !row["insns"].is_number())
      continue;
    const double n = row["insns"].get<double>();
    const Key key{step, cpu, row["function"].get<std::string>()};
    side.sums[key] += n;
    ++side.seen[key];
    smallest = any ? std::min(smallest, n) : n;
    any = true;
  }
  side.cutoffs[{step, cpu}] += smallest;
}

// Adds one cell's profile ({"<step>": {"<cpu>": [{"function", "insns"}]}}) into side.
void add_cell(const json& profile, Side& side) {
  for (auto step = profile.begin(); step != profile.end(); ++step) {
    if (!step->is_object()) continue;
    for (auto cpu = step->begin(); cpu != step->end(); ++cpu) {
      unsigned n = 0;
      if (std::sscanf(cpu.key().c_str(), "%u", &n) != 1 || !cpu->is_array()) continue;
      add_list(step.key(), n, *cpu, side);
    }
  }
}

Side collect(const json& run, const std::string& variant) {
  Side side;
  if (!run.contains("cells") || !run["cells"].is_array()) return side;
  for (const json& c : run["cells"]) {
    if (!c.is_object() || c.value("variant", "") != variant || c.value("status", "") != "ok" ||
        c.value("warmup", false))
      continue;
    const json* ic = c.contains("insn_counts") ? &c["insn_counts"] : nullptr;
    if (!ic || !ic->is_object() || !ic->contains("profile") || !(*ic)["profile"].is_object())
      continue;
    add_cell((*ic)["profile"], side);
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

std::vector<ProfileChange> profile_changes(const json& run_a, const std::string& variant_a,
                                           const json& run_b, const std::string& variant_b,
                                           std::size_t most) {
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
