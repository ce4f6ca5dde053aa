// One workload of the spec (/workloads/<i>, spec/workloads.h reads it; docs/spec.md).
// Header-only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace isolab {

// One workload. `cpus` selects guest CPUs: "isolated", "housekeeping", "all" or a cpulist.
struct WorkloadSpec {
  std::string name;  // metric prefix; [A-Za-z0-9_.-]{1,40}, unique
  // Where it stands in the spec, for errors found after parsing: "/workloads/0",
  // "/workloads/2/load"; "" for a workload not read from a spec (isolab import).
  std::string pointer;
  // A tool of the workload registry (workload/registry.h: cyclictest, stress-ng,
  // vmstat-overhead, rtla-osnoise, rtla-timerlat, page-fault-bench, oslat; a cyclictest load:
  // stress-ng or madvise-pressure), which reads its fields and checks them.
  std::string tool;
  std::string cpus = "isolated";
  // cyclictest, rtla-*, oslat
  int duration_s = 10;
  int interval_us = 1000;   // cyclictest -i; rtla-timerlat -p (the timerlat period)
  int priority = 95;        // oslat: 0 (SCHED_OTHER, no --rtprio) unless the spec gives one
  int histogram_us = 1000;  // -h bucket count (1 µs buckets); 0 disables; oslat -b (5-1024)
  // oslat: its --workload between two reads of the counter, "no" or "memmove".
  std::string oslat_workload = "no";
  // cyclictest: "wakeup_rt" arms that latency tracer for the run (tracing_max_latency reset
  // before, read after; the max-latency trace is kept); "" = none.
  std::string latency_tracer;
  // cyclictest: kernel functions ([A-Za-z0-9_.]+) whose calls during the run are counted with
  // the function profiler (set_ftrace_filter + function_profile_enabled); metric
  // "<name>.calls.<function>".
  std::vector<std::string> count_calls;
  // stress-ng: stressor -> instances (0 = one per selected CPU)
  std::map<std::string, int> stressors;
  std::vector<std::string> extra_args;  // passed to the tool verbatim (argv words)
  // page-fault-bench: duration_s per phase (>= 1, default 2), warmup_iterations = untimed batches
  // per worker (default 20), cpus default "all".
  // vmstat-overhead. With duration_s > 0 it runs for that many seconds instead of `iterations`.
  std::string mode;  // "syscall" | "idle" | "spin"
  long iterations = 0;
  long warmup_iterations = 0;
  bool touch_pages = false;  // each iteration also faults in a fresh page (vmstat-overhead --touch)
  int sleep_us = 10;         // idle mode: the usleep() of one iteration, µs
  int rate_hz = 10;          // spin mode: events per second
  std::string event;  // spin mode: "fault" | "fault+cputimer" | "cputimer+fault" | "fault+mlock"
  // A stress-ng load run on other CPUs for the duration of this workload (cyclictest).
  std::optional<std::vector<WorkloadSpec>> load;  // at most one element
  int timeout_s = 0;                              // 0: derived from the duration plus a margin
};

}  // namespace isolab
