// Whether two runs may be compared: the differences of their comparison keys, the metrics'
// sources, and the refusal that lists them (overridden by --force or --pool-hosts).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "compare/comparison.h"
#include "compare/variant_data.h"
#include "results/run_facts.h"
#include "spec/compare_settings.h"

namespace isolab {

// Differences of the comparison_key objects of two runs, one line each
// ("accelerator: A=tcg, B=kvm"), over the union of their keys; a missing comparison_key is a
// difference. Hashed keys are shown by what they hash: workloads_sha256 as "workloads:
// A=latency (cyclictest), ...; B=latency (cyclictest, imported)" (from spec.workloads), and
// host_fingerprint_sha256 as "host: cpu_model A=X, B=Y; ..." (the host fields that differ), or,
// when either run used several libvirt hosts ("hosts"), as "host: hosts A=<cpu_model> x<cpus>
// (<hypervisor> <version>) + ..., B=this machine (<cpu_model>)". Also a
// difference: the accelerators the contributing cells actually used, and, per metric, the
// source of its values (metric_source_differences).
std::vector<std::string> comparison_key_differences(const results::RunFacts& run_a,
                                                    const results::RunFacts& run_b);
// The same of two documents (results::run_facts of each).
std::vector<std::string> comparison_key_differences(const nlohmann::json& run_a,
                                                    const nlohmann::json& run_b);

// One line per metric whose "source" differs between the sides or within one side (an
// instruction count from the TCG plugin is not the guest PMU's; parse/metrics.h):
//   "metric vmstat-syscall.insns_per_syscall: source A=tcg-plugin, B=pmu"
// (a side with several sources lists them joined by ","). Metrics with no source on a side
// (older results, timings) are not differences. Like a differing accelerator, each is a
// reason to refuse the comparison unless forced.
std::vector<std::string> metric_source_differences(const VariantData& a, const VariantData& b);

// Thrown when two runs are not comparable and force was not given; what() lists every
// difference and names --force.
class ComparisonRefused : public Error {
 public:
  // option: the command-line option that overrides the refusal, named in what().
  explicit ComparisonRefused(std::vector<std::string> differences,
                             const std::string& option = "--force");
  const std::vector<std::string>& differences() const { return differences_; }

 private:
  std::vector<std::string> differences_;
};

// The tools whose recorded versions differ between A's and B's contributing cells, one line
// each: "latency: cyclictest A=2.40, B=2.50" ("(none)" for a side that recorded none)
// (Comparison::version_differences; informational, never a refusal).
std::vector<std::string> tool_version_differences(const VariantData& a, const VariantData& b);

// The libvirt hosts of both sides (VariantData::hosts), with their contributing cells counted;
// sorted by URI. Empty for single-host runs.
std::vector<HostSummary> host_summaries(const VariantData& a, const VariantData& b);

// One line per host when the hosts' fingerprints differ ("host URI (name): cpu VENDOR MODEL, N
// CPUs, libvirt V, HYPERVISOR V, fingerprint <12 hex>"), else empty: cells of such hosts are
// pooled only with --pool-hosts.
std::vector<std::string> host_fingerprint_differences(const std::vector<HostSummary>& hosts,
                                                      const VariantData& a, const VariantData& b);

// A calibration the spec names (s.calibration) applies only to runs made like the
// calibration's: the same accelerator, command line, guest size and workloads
// (comparison_key's accelerator, cmdline, vcpus, memory_mib, workloads_sha256). Otherwise sets
// s.calibration->applied to false and returns why ("calibration FILE not applied: made under
// another cmdline than these runs ..."); "" when it applies or there is none.
std::string check_calibration(CompareSettings& s, const results::RunFacts& run_a,
                              const results::RunFacts& run_b);

}  // namespace isolab
