#include "pipeline/plan.h"

#include "base/error.h"
#include "base/files.h"

using nlohmann::json;

namespace isolab {

std::vector<CellPlan> plan_cells(const Spec& spec) {
  std::vector<CellPlan> cells;
  for (int w = 0; w < spec.warmup_repetitions; ++w)
    for (const auto& v : spec.variants)
      cells.push_back({v.name + "-w" + std::to_string(w), v.name, w, true});
  for (int r = 0; r < spec.repetitions; ++r)
    for (const auto& v : spec.variants)
      cells.push_back({v.name + "-r" + std::to_string(r), v.name, r, false});
  return cells;
}

GuestDerivation derive_guest(const Spec& spec) {
  GuestDerivation g;
  std::string text;
  std::string ptr;
  bool customer = false;
  if (!spec.customer_cmdline.empty()) {
    text = spec.customer_cmdline;
    ptr = "/guest/customer_cmdline";
    customer = true;
  } else if (!spec.customer_dmesg.empty()) {
    text = read_file(spec.customer_dmesg, 16u << 20);
    ptr = "/guest/customer_dmesg";
    customer = true;
  } else {
    text = spec.cmdline;
    ptr = "/guest/cmdline";
  }
  AnalyzeOptions ao;
  if (spec.vcpus > 0) ao.vcpus = static_cast<unsigned>(spec.vcpus);
  Analysis a;
  try {
    a = analyze(text, ao);
  } catch (const Error& e) {
    throw SpecError(ptr, e.what());
  }
  // In a hand-written line a CPU list the kernel would reject is a mistake in the spec; in a
  // customer's line it is a fact about the customer's machine, kept as a warning.
  if (!customer)
    for (const auto& w : a.warnings)
      if (w.find("cpulist '") != std::string::npos &&
          (w.find("EINVAL") != std::string::npos || w.find("ERANGE") != std::string::npos ||
           w.find("EOVERFLOW") != std::string::npos))
        throw SpecError(ptr, w);
  g.vcpus = static_cast<int>(a.vcpus);
  // A customer's line is reduced to what matters in a guest; a hand-written line is the
  // developer's own choice and is passed as written.
  if (customer) {
    for (const auto& k : a.kept) g.cmdline += (g.cmdline.empty() ? "" : " ") + k;
  } else {
    g.cmdline = spec.cmdline;
  }
  g.analysis = to_json(a);
  g.expected = expected_isolation(a);
  unsigned n = a.vcpus;
  g.partition.all = CpuSet::all(n);
  g.partition.isolated = (a.isolated | a.nohz_full).resized(n);
  g.partition.housekeeping = g.partition.all - g.partition.isolated;
  g.expect_isolated = g.expected.isolated.to_list();
  g.expect_nohz_full = g.expected.nohz_full_requested ? g.expected.nohz_full.to_list() : "";
  return g;
}

json describe_plan(const Spec& spec, const GuestDerivation& guest) {
  json j;
  j["spec"] = spec.name;
  j["guest"] = {{"cmdline", guest.cmdline},
                {"vcpus", guest.vcpus},
                {"memory_mib", spec.memory_mib},
                {"isolated", guest.partition.isolated.to_list()},
                {"housekeeping", guest.partition.housekeeping.to_list()},
                {"expect_sysfs_isolated", guest.expect_isolated},
                {"expect_sysfs_nohz_full", guest.expect_nohz_full},
                {"analysis", guest.analysis}};
  j["variants"] = json::array();
  for (const auto& v : spec.variants) {
    json pv = json::array();
    for (const auto& p : v.patches) pv.push_back(p.string());
    json fr = json::array();
    for (const auto& f : spec.config_fragments) fr.push_back(f.string());
    for (const auto& f : v.config_fragments) fr.push_back(f.string());
    j["variants"].push_back({{"name", v.name},
                             {"patches", pv},
                             {"config_fragments", fr},
                             {"base_config", spec.base_config},
                             {"extra_cmdline", v.extra_cmdline}});
  }
  j["cells"] = json::array();
  for (const auto& c : plan_cells(spec))
    j["cells"].push_back(
        {{"id", c.id}, {"variant", c.variant}, {"repetition", c.repetition}, {"warmup", c.warmup}});
  j["steps"] = json::array();
  for (const auto& w : spec.workloads) {
    GuestStep s = guest_step(w, guest.partition, spec.timeouts, true);
    j["steps"].push_back({{"name", s.name}, {"script", s.script}, {"timeout_s", s.timeout_s}});
  }
  return j;
}

}  // namespace isolab
