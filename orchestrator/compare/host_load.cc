#include "compare/host_load.h"

#include <cstdio>
#include <functional>

#include "stats/permutation.h"
#include "stats/sample.h"

namespace isolab {

namespace {

// The mean of a measure's start and end values, or of the one present.
std::optional<double> mean_of_ends(const nlohmann::json& start, const nlohmann::json& end) {
  const bool s = start.is_number(), e = end.is_number();
  if (s && e) return (start.get<double>() + end.get<double>()) / 2;
  if (s) return start.get<double>();
  if (e) return end.get<double>();
  return std::nullopt;
}

nlohmann::json first_of(const nlohmann::json& loadavg) {
  return loadavg.is_array() && !loadavg.empty() ? loadavg[0] : nlohmann::json();
}

CellHostLoad cell_load(const nlohmann::json& cell, const nlohmann::json& h) {
  CellHostLoad l;
  l.cell_id = cell.value("id", "");
  l.loadavg_1min = mean_of_ends(first_of(h.value("loadavg_start", nlohmann::json())),
                                first_of(h.value("loadavg_end", nlohmann::json())));
  l.cpu_pressure_some_avg10 =
      mean_of_ends(h.value("cpu_pressure_some_avg10_start", nlohmann::json()),
                   h.value("cpu_pressure_some_avg10_end", nlohmann::json()));
  if (auto s = h.find("steal_s"); s != h.end() && s->is_number()) l.steal_s = s->get<double>();
  return l;
}

struct MeasureDef {
  const char* name;
  std::function<std::optional<double>(const CellHostLoad&)> get;
};

const std::vector<MeasureDef>& measures() {
  static const std::vector<MeasureDef> m = {
      {"1-min loadavg", [](const CellHostLoad& c) { return c.loadavg_1min; }},
      {"CPU pressure (some avg10, %)",
       [](const CellHostLoad& c) { return c.cpu_pressure_some_avg10; }},
      {"steal (s per boot)", [](const CellHostLoad& c) { return c.steal_s; }}};
  return m;
}

std::vector<double> values_of(const std::vector<CellHostLoad>& cells, const MeasureDef& m) {
  std::vector<double> v;
  for (const auto& c : cells)
    if (auto x = m.get(c)) v.push_back(*x);
  return v;
}

}  // namespace

std::vector<CellHostLoad> variant_host_loads(const nlohmann::json& run,
                                             const std::string& variant) {
  std::vector<CellHostLoad> out;
  if (!run.is_object()) return out;
  const auto cells = run.find("cells");
  if (cells == run.end() || !cells->is_array()) return out;
  for (const auto& c : *cells) {
    if (!c.is_object() || c.value("variant", "") != variant || c.value("status", "") != "ok" ||
        c.value("warmup", false))
      continue;
    const auto h = c.find("host_load");
    if (h != c.end() && h->is_object()) out.push_back(cell_load(c, *h));
  }
  return out;
}

HostLoadComparison compare_host_loads(const std::vector<CellHostLoad>& a,
                                      const std::vector<CellHostLoad>& b, double alpha) {
  HostLoadComparison r;
  r.alpha = alpha;
  for (const auto& def : measures()) {
    const std::vector<double> va = values_of(a, def), vb = values_of(b, def);
    if (va.size() < 2 || vb.size() < 2) continue;
    HostLoadMeasure m;
    m.name = def.name;
    m.n_a = va.size(), m.n_b = vb.size();
    m.mean_a = describe(va).mean, m.mean_b = describe(vb).mean;
    m.p = permutation_test_mean(va, vb).p;
    r.measures.push_back(m);
  }
  for (const auto& m : r.measures) r.differ = r.differ || m.p < alpha / double(r.measures.size());
  return r;
}

}  // namespace isolab
