// The run spec: what to build, how to boot it and what to measure.
//
// Format: JSON, documented with a full example in docs/spec.md. Relative paths inside
// a spec (patches, config fragments, prebuilt images, dmesg files) are resolved against the
// directory of the spec file. Unknown fields are errors (a typo must not silently change a
// run). Every error is an isolab::SpecError carrying the RFC 6901 JSON pointer of the bad
// field, e.g. "/variants/1/patches/0: file not found: ../patches/x.patch".
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "spec/budgets.h"
#include "spec/customer.h"
#include "spec/guest_spec.h"
#include "spec/kernel_source.h"
#include "spec/workload_spec.h"

namespace isolab {

struct VariantSpec {
  std::string name;                                     // [A-Za-z0-9_.-]{1,40}
  std::vector<std::filesystem::path> patches;           // resolved, in order
  std::vector<std::filesystem::path> config_fragments;  // after the kernel-wide ones
  std::string extra_cmdline;                            // appended to the guest cmdline
  // sysctl name (dotted, "vm.numa_stat") -> value, written by the guest init to /proc/sys/...
  // before the workloads and read back (guest/init_script.h GuestPlan::sysctls). A JSON integer
  // value is kept as its decimal text. Variants that differ only here share their kernel.
  std::map<std::string, std::string> sysctls;
  // How each mailed series among `patches` was read (pipeline/mailed_series.h
  // mailed_series_json): filled when the mbox is expanded, empty for a spec as loaded.
  nlohmann::json mailed_series = nlohmann::json::array();
};

struct TimeoutSpec {
  // Per logged kernel command (each config step, make bzImage): 3 hours, room for a cold
  // PREEMPT_RT build on a small loaded host (docs/measurements.md has one).
  int build_s = 10800;
  int boot_s = 180;     // boot to the guest's first result record
  int silence_s = 120;  // no console and no result-channel output
  int shutdown_s = 60;
  int workload_margin_s = 60;  // added to each workload's own duration
};

// A measurement host reached through libvirt (vm/libvirt_host.h).
struct HostSpec {
  std::string uri;       // qemu+ssh://host/system, qemu+tcp://..., qemu:///system, ...
  std::string pool_dir;  // "" = the host's pool "isolab", else /var/lib/libvirt/isolab (system)
};

// Parses "hosts": an array of URI strings or {"uri": "...", "pool_dir": "/abs/dir"} objects.
// Throws SpecError with the pointer of a bad entry (not a string/object, empty or duplicate
// URI, URI with a control character or without "://", relative pool_dir, unknown field).
std::vector<HostSpec> parse_hosts(const nlohmann::json& hosts, const std::string& pointer);

// The largest boot order seed: 2^53 - 1, so that every JSON reader keeps it exactly.
inline constexpr long kMaxBootOrderSeed = (1L << 53) - 1;

struct Spec {
  std::filesystem::path spec_path;  // the file it came from ("" for an embedded spec)
  std::string name;
  std::string description;
  KernelSourceSpec source;
  std::string base_config = "tinyconfig";
  std::vector<std::filesystem::path> config_fragments;
  // /kernel/robot_checks: true (default), false, or {"checkpatch", "includecheck", "w1",
  // "sparse"} each a boolean (default true): which robot checks run on B's patches.
  RobotChecks robot_checks;
  std::vector<VariantSpec> variants;  // at least one; A = first, B = second
  // Guest. cmdline is the isolation part; customer_cmdline (text or a dmesg file) is reduced
  // by the cmdline analyzer into cmdline + vcpus when given.
  std::string cmdline;
  std::string customer_cmdline;
  std::filesystem::path customer_dmesg;
  // /guest/customer_kernel_version: the release of the customer's kernel ("5.15.0-91-generic"),
  // for a customer_cmdline (or over a customer_dmesg's "Linux version" line): the analysis
  // follows that kernel's rules (cmdline/customer_kernel.h). "" when not given.
  std::string customer_kernel_version;
  int vcpus = 0;  // 0: derived from the command line
  int memory_mib = 512;
  // The guest's NUMA layout; empty: no NUMA topology (one node). When given, guest.vcpus must
  // be given too, every vCPU is on exactly one node, and the nodes' memory adds up to
  // memory_mib (which defaults to that sum).
  std::vector<NumaNodeSpec> numa_nodes;
  GuestTopologySpec topology;  // /guest/topology {sockets, cores, threads}
  // /customer: the customer's machine (spec/customer.h), which sets customer_cmdline,
  // customer_kernel_version, vcpus, topology and numa_nodes above; nullopt when not given.
  std::optional<CustomerSpec> customer;
  // /overcommit: a guest that cannot get dedicated host CPUs (pipeline/host_cpu_plan.h) still runs,
  // with its vCPUs sharing host CPUs; false: such a run is refused before any build.
  bool overcommit = false;
  // /parallel: guests booted at once, each on its own host CPUs; 0 = "auto" (as many as the
  // host plan fits, at least 1). `isolab run --parallel` overrides it.
  int parallel = 1;
  std::vector<WorkloadSpec> workloads;
  int repetitions = 3;
  int warmup_repetitions = 0;
  // /boot_order_seed: the seed of the variants' order within each block of cells
  // (pipeline/run_plan.h plan_cells); absent: a seed drawn when the run starts. Either way the
  // run records it in result.json "boot_order".
  std::optional<std::uint64_t> boot_order_seed;
  TimeoutSpec timeouts;
  // Gate checks that are allowed to fail because the mismatch is the point of the test.
  std::vector<std::string> gate_expect_fail;
  // The compare section as given, read by settings_from_json (spec/compare_settings.h) when
  // the spec is loaded and again by compare. Loading also refuses a thresholds_pct key or a
  // primary metric that no metric of the workloads (workload/registry.h) can match.
  nlohmann::json compare;
  // /budgets (spec/budgets.h): absolute limits judged per cell and CPU after the run
  // (budgets/judge.h). Loading also refuses a workload no workload of the spec is named, and a
  // named metric that the budget's workload (or, without one, every workload) cannot give.
  std::vector<BudgetSpec> budgets;
  // Several libvirt hosts: cells are placed on them in whole A/B blocks (pipeline/placement.h).
  // Empty: one host, the --backend of the command line.
  std::vector<HostSpec> hosts;
  // Nightly mode: after the run, compare baseline_variant of this run against the same
  // variant of a stored run (baseline_run) or of the last good run of this spec in the
  // results directory's history (baseline_last_good); the exit status is compare's.
  std::filesystem::path baseline_run;
  bool baseline_last_good = false;
  std::string baseline_variant;  // default: the last variant
  nlohmann::json raw;            // the document as given
};

// Parses and validates a spec document. base_dir resolves relative paths. Throws SpecError.
Spec parse_spec(const nlohmann::json& doc, const std::filesystem::path& base_dir);

// Reads and parses a spec file of at most 4 MiB. Throws isolab::Error "spec " followed by one of
// base/json_document.h's read_json_document refusals (a directory, a file over the limit, JSON
// syntax by line and column, nesting deeper than kMaxJsonDepth), or a SpecError ending with
// " (in <path>)".
Spec load_spec_file(const std::filesystem::path& path);

// The same error with " (in <path>)" after its message: for SpecErrors found after parsing
// (the guest derivation, the workloads' CPUs), so that they name the file as parse errors do.
SpecError spec_error_in_file(const SpecError& e, const std::filesystem::path& path);

// Whether some metric the workloads give is `name` (prefix: starts with it), by the patterns of
// workload/registry.h workload_metric_patterns.
bool workloads_give(const std::vector<WorkloadSpec>& ws, const std::string& name, bool prefix);

// "<wl>.*" for each workload, comma-separated: what an error about a metric name offers.
std::string workload_prefixes(const std::vector<WorkloadSpec>& ws);

// Canonical JSON for the workloads (hashing them decides comparability of runs).
nlohmann::json workloads_to_json(const std::vector<WorkloadSpec>& w);

}  // namespace isolab
