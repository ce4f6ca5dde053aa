#include "cmdline/analysis_output.h"

#include <sstream>

namespace isolab {

nlohmann::json to_json(const Analysis& a) {
  auto verdicts = [](const std::vector<ParamVerdict>& v) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& x : v) arr.push_back({{"param", x.param}, {"reason", x.reason}});
    return arr;
  };
  nlohmann::json hints = nlohmann::json::array();
  for (const LineHint& h : a.hints)
    hints.push_back({{"param", h.param},
                     {"housekeeping", h.housekeeping.to_list()},
                     {"min_cpus", h.min_cpus},
                     {"meaning", h.meaning},
                     {"error", h.error}});
  return {
      {"source_line", a.source_line},
      {"from_dmesg", a.from_dmesg},
      {"customer_kernel", a.customer_kernel},
      {"customer_kernel_messages", a.customer_kernel_messages},
      {"hints", hints},
      {"vcpus", a.vcpus},
      {"vcpus_overridden", a.vcpus_overridden},
      {"vcpus_needed", a.vcpus_needed},
      {"vcpus_reason", a.vcpus_reason},
      {"cpu_count_unknown", a.cpu_count_unknown},
      {"nr_cpus_required", a.nr_cpus_required},
      {"nr_cpus_config", a.nr_cpus_config},
      {"cmdline_bytes", a.cmdline_bytes},
      {"truncated", a.truncated},
      {"possible", a.possible},
      {"online", a.online},
      {"housekeeping", a.housekeeping.to_list()},
      {"isolated", a.isolated.to_list()},
      {"nohz_full", a.nohz_full.to_list()},
      {"rcu_nocbs", a.rcu_nocbs.to_list()},
      {"irqaffinity", a.irqaffinity.to_list()},
      {"managed_irq_isolated", a.managed_irq_isolated.to_list()},
      {"workqueue_cpumask", a.workqueue_cpumask.to_list()},
      {"isolcpus_flags", a.isolcpus_flags},
      {"kept", a.kept},
      {"guest_cmdline", a.guest_cmdline()},
      {"dropped", verdicts(a.dropped)},
      {"replaced", verdicts(a.replaced)},
      {"warnings", a.warnings},
      {"expected_kernel_messages", a.expected_kernel_messages},
      {"isolation_params", a.isolation_params},
  };
}

std::string to_text(const Analysis& a) {
  std::ostringstream o;
  auto list = [](const CpuSet& s) { return s.empty() ? std::string("(none)") : s.to_list(); };
  if (!a.customer_kernel.empty()) o << "customer kernel: " << a.customer_kernel << "\n";
  for (const auto& m : a.customer_kernel_messages) o << "  it said: " << m << "\n";
  for (const LineHint& h : a.hints)
    if (h.error.empty()) o << "hint: " << h.param << ": " << h.meaning << "\n";
  o << "vCPUs:         " << a.vcpus << (a.vcpus_overridden ? " (override)" : "") << "  ("
    << a.vcpus_reason << ")\n"
    << "possible/online: " << a.possible << "/" << a.online << "\n"
    << "guest kernel:  CONFIG_NR_CPUS >= " << a.nr_cpus_required << " (analysed with "
    << a.nr_cpus_config << ")\n"
    << "housekeeping:  " << list(a.housekeeping) << "\n"
    << "isolated:      " << list(a.isolated) << "  (isolcpus= domain CPUs, as sysfs shows them)\n"
    << "nohz_full:     " << list(a.nohz_full) << "\n"
    << "rcu_nocbs:     " << list(a.rcu_nocbs) << "\n"
    << "irqaffinity:   " << list(a.irqaffinity) << "\n"
    << "isolcpus flags: ";
  for (size_t i = 0; i < a.isolcpus_flags.size(); ++i) o << (i ? "," : "") << a.isolcpus_flags[i];
  o << "\nguest command line: " << a.guest_cmdline() << "\n";
  for (const auto& d : a.dropped) o << "dropped  " << d.param << "  (" << d.reason << ")\n";
  for (const auto& r : a.replaced) o << "replaced " << r.param << "  (" << r.reason << ")\n";
  for (const auto& w : a.warnings) o << "warning: " << w << "\n";
  return o.str();
}

nlohmann::json to_json(const ExpectedIsolation& e) {
  return {
      {"vcpus", e.vcpus},
      {"possible", e.possible.to_list()},
      {"online", e.online.to_list()},
      {"housekeeping", e.housekeeping.to_list()},
      {"isolated", e.isolated.to_list()},
      {"nohz_full_requested", e.nohz_full_requested},
      {"nohz_full", e.nohz_full.to_list()},
      {"rcu_offload", e.rcu_offload ? nlohmann::json(e.rcu_offload->to_list()) : nullptr},
      {"irq_default_affinity", e.irq_default_affinity.to_list()},
      {"irq_default_affinity_mask", e.irq_default_affinity.to_mask()},
      {"irqaffinity_requested", e.irqaffinity_requested},
      {"irq_avoid", e.irq_avoid.to_list()},
      {"managed_irq", e.managed_irq},
      {"managed_irq_avoid", e.managed_irq_avoid.to_list()},
      {"workqueue_cpumask", e.workqueue_cpumask.to_list()},
      {"nohz_off", e.nohz_off},
      {"required_params", e.required_params},
      {"expected_kernel_messages", e.expected_kernel_messages},
  };
}

}  // namespace isolab
