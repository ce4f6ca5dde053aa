#include "compare/profile_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

namespace isolab {

namespace {

using nlohmann::json;
using Key = std::tuple<std::string, unsigned, std::string>;  // step, CPU, function

struct Side {
  std::map<Key, double> sums;
  std::size_t cells = 0;
};

// Adds one cell's profile ({"<step>": {"<cpu>": [{"function", "insns"}]}}) into side.
void add_cell(const json& profile, Side& side) {
  for (auto step = profile.begin(); step != profile.end(); ++step) {
    if (!step->is_object()) continue;
    for (auto cpu = step->begin(); cpu != step->end(); ++cpu) {
      unsigned n = 0;
      if (std::sscanf(cpu.key().c_str(), "%u", &n) != 1 || !cpu->is_array()) continue;
      for (const json& row : *cpu) {
        if (!row.is_object() || !row.contains("function") || !row["function"].is_string() ||
            !row.contains("insns") || !row["insns"].is_number())
          continue;
        side.sums[{step.key(), n, row["function"].get<std::string>()}] +=
            row["insns"].get<double>();
      }
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

}  // namespace

std::vector<ProfileChange> profile_changes(const json& run_a, const std::string& variant_a,
                                           const json& run_b, const std::string& variant_b,
                                           std::size_t most) {
  const Side a = collect(run_a, variant_a), b = collect(run_b, variant_b);
  if (!a.cells || !b.cells) return {};
  std::map<Key, ProfileChange> rows;
  for (const auto* side : {&a, &b})
    for (const auto& [key, sum] : side->sums) {
      ProfileChange& r = rows[key];
      std::tie(r.step, r.cpu, r.function) = key;
      (side == &a ? r.a : r.b) = sum / static_cast<double>(side->cells);
      r.cells_a = a.cells;
      r.cells_b = b.cells;
    }
  std::vector<ProfileChange> out;
  for (auto& [key, r] : rows) out.push_back(r);
  std::stable_sort(out.begin(), out.end(), [](const ProfileChange& x, const ProfileChange& y) {
    return std::fabs(x.diff()) > std::fabs(y.diff());
  });
  if (out.size() > most) out.resize(most);
  return out;
}

std::vector<std::string> profile_change_lines(const std::vector<ProfileChange>& changes) {
  std::vector<std::string> lines;
  char buf[512];
  for (const ProfileChange& r : changes) {
    std::snprintf(buf, sizeof buf,
                  "%s CPU %u: %s %.3g -> %.3g (%+.3g) kernel instructions per boot", r.step.c_str(),
                  r.cpu, r.function.c_str(), r.a, r.b, r.diff());
    lines.push_back(buf);
  }
  return lines;
}

}  // namespace isolab
