#include "pipeline/plan_json.h"

#include <filesystem>
#include <vector>

#include "guest/init_script.h"
#include "pipeline/fidelity.h"
#include "vm/vm.h"
#include "workload/step.h"

using nlohmann::json;

namespace isolab {

namespace {

// What isolab adds to the guest's line beyond the spec's, and when (the dry run's text says the
// same in words): vm/vm.h full_kernel_cmdline and insn_count_params, guest/init_script.h
// trace_event_boot_param.
json added_params_json() {
  json insn = json::array();
  for (const AddedParam& p : insn_count_params())
    insn.push_back({{"param", p.param}, {"reason", p.reason}});
  return {{"every_boot", kEveryBootParams},
          {"tcg", kTcgBootParams},
          {"tracing",
           {{"bytes", trace_event_boot_param().size()},
            {"params", {"trace_event=...", "trace_clock=global"}},
            {"when", "unless --no-trace"}}},
          {"insn_count", insn}};
}

}  // namespace

json describe_plan(const Spec& spec, const GuestDerivation& guest) {
  json j;
  j["spec"] = spec.name;
  j["guest"] = {{"cmdline", guest.cmdline},
                {"vcpus", guest.vcpus},
                {"nr_cpus_required", guest.nr_cpus_required},
                {"memory_mib", spec.memory_mib},
                {"topology", to_json(guest.topology)},
                {"isolated", guest.partition.isolated.to_list()},
                {"housekeeping", guest.partition.housekeeping.to_list()},
                {"expect_sysfs_isolated", guest.expect_isolated},
                {"expect_sysfs_nohz_full", guest.expect_nohz_full},
                {"analysis", guest.analysis},
                {"added_params", added_params_json()}};
  if (!spec.numa_nodes.empty()) {
    j["guest"]["numa_nodes"] = json::array();
    for (const auto& n : spec.numa_nodes)
      j["guest"]["numa_nodes"].push_back({{"cpus", n.cpus}, {"memory_mib", n.memory_mib}});
  }
  if (spec.customer) j["fidelity"] = to_json(fidelity_rows(spec, guest));
  j["variants"] = json::array();
  for (const auto& v : spec.variants) {
    json pv = json::array();
    for (const auto& p : v.patches) pv.push_back(p.string());
    json fr = json::array();
    for (const auto& f : spec.config_fragments) fr.push_back(f.string());
    for (const auto& f : v.config_fragments) fr.push_back(f.string());
    std::vector<std::filesystem::path> all_fragments = spec.config_fragments;
    all_fragments.insert(all_fragments.end(), v.config_fragments.begin(), v.config_fragments.end());
    const auto nr = guest_kernel_nr_cpus(all_fragments, guest.nr_cpus_required);
    j["variants"].push_back({{"name", v.name},
                             {"nr_cpus_fragment", nr ? json(*nr) : json(nullptr)},
                             {"patches", pv},
                             {"config_fragments", fr},
                             {"base_config", spec.base_config},
                             {"extra_cmdline", v.extra_cmdline},
                             {"sysctls", v.sysctls}});
  }
  j["boot_order"] = {{"seed", spec.boot_order_seed ? json(*spec.boot_order_seed) : json(nullptr)},
                     {"note", spec.boot_order_seed
                                  ? "variants in a seeded random order within each block"
                                  : "no seed given: the run draws one when it starts and shuffles "
                                    "the variants within each block; cells shown in the spec's "
                                    "order"}};
  j["cells"] = json::array();
  for (const auto& c : plan_cells(spec, spec.boot_order_seed))
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
