#include "report/aa_relabel.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

namespace isolab {

namespace {

double rate(std::size_t n, std::size_t total) {
  return total ? static_cast<double>(n) / static_cast<double>(total) : 0.0;
}

std::string pct(std::size_t n, std::size_t total) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * rate(n, total));
  return buf;
}

// "  cause: n" lines, most frequent first (then by name), at most kShownCauses of them (the
// JSON form has all).
constexpr std::size_t kShownCauses = 12;

std::string cause_lines(const std::map<std::string, std::size_t>& causes) {
  std::vector<std::pair<std::string, std::size_t>> v(causes.begin(), causes.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  std::string out;
  for (std::size_t k = 0; k < v.size() && k < kShownCauses; ++k)
    out += "    " + v[k].first + ": " + std::to_string(v[k].second) + "\n";
  if (v.size() > kShownCauses)
    out += "    (" + std::to_string(v.size() - kShownCauses) + " more causes in the JSON form)\n";
  return out;
}

}  // namespace

nlohmann::json aa_relabel_to_json(const AaRelabelResult& r) {
  return {{"schema", "isolab-aa-relabelling"},
          {"version", 1},
          {"run_id", r.run_id},
          {"variant_a", r.variant_a},
          {"variant_b", r.variant_b},
          {"cells_a", r.cells_a},
          {"cells_b", r.cells_b},
          {"relabellings", r.relabellings},
          {"exact", r.exact},
          {"primary", r.primary},
          {"primary_origin", r.primary_origin},
          {"exit_1", r.exit_1},
          {"exit_1_rate", rate(r.exit_1, r.relabellings)},
          {"causes", r.causes},
          {"uncorrected",
           {{"exit_1", r.uncorrected_exit_1},
            {"exit_1_rate", rate(r.uncorrected_exit_1, r.relabellings)},
            {"causes", r.uncorrected_causes}}},
          {"observed_exit_1", r.observed_exit_1}};
}

std::string render_aa_relabel_text(const AaRelabelResult& r) {
  std::string o = "A/A relabelling of run " + r.run_id + ": " + std::to_string(r.cells_a) +
                  " cells of " + r.variant_a + " and " + std::to_string(r.cells_b) + " of " +
                  r.variant_b + " pooled; " + std::to_string(r.relabellings) +
                  (r.exact ? " relabellings (every one keeping the group sizes)"
                           : " relabellings (the observed one and a seeded sample)") +
                  "\n";
  std::string primaries;
  for (const auto& p : r.primary) primaries += (primaries.empty() ? "" : ", ") + p;
  o += r.primary.empty()
           ? "exit status rests on: no primary metric declared: kernel failures B has "
             "and A does not, isolation-gate failures of B, new build warnings\n"
           : "exit status rests on: primary metrics " + primaries + " (" + r.primary_origin +
                 "), kernel failures, the gate, new build "
                 "warnings\n";
  o += "exit 1 under compare's rules: " + std::to_string(r.exit_1) + " of " +
       std::to_string(r.relabellings) + " (" + pct(r.exit_1, r.relabellings) + ")\n";
  if (!r.causes.empty()) o += "  causes (relabellings):\n" + cause_lines(r.causes);
  o += "exit 1 if every metric decided alone at alpha, uncorrected, and every kernel failure of B "
       "counted: " +
       std::to_string(r.uncorrected_exit_1) + " of " + std::to_string(r.relabellings) + " (" +
       pct(r.uncorrected_exit_1, r.relabellings) + ")\n";
  if (!r.uncorrected_causes.empty())
    o += "  causes (relabellings):\n" + cause_lines(r.uncorrected_causes);
  o += std::string("the run's own labelling: exit ") + (r.observed_exit_1 ? "1" : "0") + "\n";
  return o;
}

}  // namespace isolab
