// An OpenShift PerformanceProfile (performance.openshift.io/v2, also v1 and v1alpha1, whose
// fields read here are the same) and what the Node Tuning Operator renders from it: the kernel
// command line and runtime settings of the TuneD profile it writes for the node.
//
// The rules are the operator's (openshift/cluster-node-tuning-operator, current master):
//  - assets/performanceprofile/tuned/openshift-node-performance, the TuneD profile template:
//    its [bootloader] options in this order give the kernel line
//      cmdline_cpu_part          nohz=on rcu_nocbs=<isolated> tuned.non_isolcpus=<mask>
//                                systemd.cpu_affinity=<not isolated> intel_iommu=on iommu=pt
//      cmdline_isolation         isolcpus=managed_irq,<isolated>, or
//                                isolcpus=domain,managed_irq,<isolated> when
//                                spec.cpu.balanceIsolated is false
//      cmdline_realtime          (workloadHints.realTime) nohz_full=<isolated> tsc=reliable
//                                nosoftlockup nmi_watchdog=0 mce=off skew_tick=1
//                                rcutree.kthread_prio=11
//      cmdline_power_performance (workloadHints.highPowerConsumption) processor.max_cstate=1
//                                intel_idle.max_cstate=0, and idle=poll with realTime too
//      cmdline_hugepages         default_hugepagesz=<size> hugepagesz=<size> hugepages=<count>
//      cmdline_additionalArg     spec.additionalKernelArgs, in order
//      cmdline_pstate            intel_pstate=passive (workloadHints.perPodPowerManagement);
//                                otherwise TuneD's intel_recommended_pstate for the node's CPU,
//                                which the profile alone does not give (not rendered)
//    its [variables] isolated_cores=<isolated>, and its [sysctl] kernel.timer_migration=1 and,
//    with realTime, kernel.hung_task_timeout_secs=600, kernel.nmi_watchdog=0,
//    kernel.sched_rt_runtime_us=-1, vm.stat_interval=10.
//  - pkg/performanceprofile/controller/performanceprofile/components/tuned/tuned.go: the
//    template's values: <isolated> is spec.cpu.isolated as written; hugepages of a page with a
//    `node` are left to a per-node unit, and a 2M page on a node with a 1G default adds
//    hugepagesz=2M hugepages=0; the TuneD profile is named openshift-node-performance-<name>.
//  - pkg/apis/performanceprofile/v2/performanceprofile_types.go: workloadHints.realTime
//    defaults to true, highPowerConsumption and perPodPowerManagement to false.
//  - TuneD (tuned/profiles/functions, tuned/utils/commands.py): <not isolated> is
//    cpulist_invert(isolated) over the online CPUs (here: the profile's CPUs without the
//    offlined ones), written as a comma-separated list; <mask> is cpulist2hex() of it
//    (cmdline/line_hints.h).
// The parent TuneD profiles (cpu-partitioning, network-latency, latency-performance) add their
// own cmdline_ options depending on the node's TuneD version: not rendered, and said so.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cmdline/cpulist.h"
#include "machine/kube_yaml.h"

namespace isolab {

struct HugePage {
  std::string size;
  unsigned count = 0;
  std::optional<unsigned> node;
};

struct PerformanceProfile {
  std::string name, file;
  size_t isolated_line = 0;
  std::string isolated_text;  // spec.cpu.isolated as written
  CpuSet reserved, isolated, shared, offlined;
  bool balance_isolated = true;
  bool realtime_hint = true, high_power = false, per_pod_power = false;
  bool rt_kernel = false;
  std::optional<std::string> default_hugepages_size;
  std::vector<HugePage> pages;
  std::vector<std::string> additional_args;
  std::vector<std::pair<std::string, std::string>> node_selector;
};

// The profile of a PerformanceProfile object. isolab::Error naming FILE:LINE and the field:
// spec.cpu.reserved or spec.cpu.isolated missing, a CPU list that does not parse, reserved and
// isolated overlapping (the operator's validation refuses it), a count or boolean that is not
// one, an object of another kind.
PerformanceProfile read_performance_profile(const KubeObject& o);

struct RenderedProfile {
  std::vector<std::string> kernel_args;  // in the template's order
  std::string tuned_profile;             // "openshift-node-performance-<name>"
  std::vector<std::string> include;      // the TuneD profiles it includes
  std::vector<std::pair<std::string, std::string>> variables;
  std::vector<std::pair<std::string, std::string>> sysctls;
  CpuSet cpus, online, not_isolated;      // the profile's CPUs, without offlined, the rest
  std::vector<std::string> not_rendered;  // what depends on the node, with why

  std::string cmdline() const;  // kernel_args joined by single spaces
};

RenderedProfile render(const PerformanceProfile& p);

// TuneD's cpulist2hex(): "00f0000f", "00030000,00000003"; "00000000" for the empty set.
std::string tuned_cpumask_hex(const CpuSet& s);

}  // namespace isolab
