#include "compare/host_load.h"

#include <cstdio>
#include <functional>

#include "stats/permutation.h"
#include "stats/sample.h"

namespace isolab {

namespace {

struct MeasureDef {
  const char* name;
  std::function<std::optional<double>(const results::CellHostLoad&)> get;
};

const std::vector<MeasureDef>& measures() {
  static const std::vector<MeasureDef> m = {
      {"1-min loadavg", [](const results::CellHostLoad& c) { return c.loadavg_1min; }},
      {"CPU pressure (some avg10, %)",
       [](const results::CellHostLoad& c) { return c.cpu_pressure_some_avg10; }},
      {"steal (s per boot)", [](const results::CellHostLoad& c) { return c.steal_s; }}};
  return m;
}

std::vector<double> values_of(const std::vector<results::CellHostLoad>& cells,
                              const MeasureDef& m) {
  std::vector<double> v;
  for (const auto& c : cells)
    if (auto x = m.get(c)) v.push_back(*x);
  return v;
}

}  // namespace

std::vector<results::CellHostLoad> variant_host_loads(const results::RunResult& run,
                                                      const std::string& variant) {
  std::vector<results::CellHostLoad> out;
  for (const auto& c : run.cells) {
    if (c.variant.value_or("") != variant || !c.is_ok() || c.is_warmup()) continue;
    if (auto load = results::cell_host_load(c)) out.push_back(std::move(*load));
  }
  return out;
}

HostLoadComparison compare_host_loads(const std::vector<results::CellHostLoad>& a,
                                      const std::vector<results::CellHostLoad>& b, double alpha) {
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
