// A spec's workload in the guest and back: its guest step and the metrics of what the step
// sent, each through the definition of the workload's tool in the registry (workload/registry.h,
// one file per tool in workload/tools/) with the part every tool shares around it.
#pragma once

#include "guest/channel.h"
#include "guest/init_script.h"
#include "spec/spec.h"
#include "workload/workload.h"

namespace isolab {

// The guest step for a workload: its sh script (argv words quoted), its output files and its
// timeout (duration + margin). trace: also trace the isolated CPUs during the step.
GuestStep guest_step(const WorkloadSpec& w, const CpuPartition& p, const TimeoutSpec& t,
                     bool trace);

// Parses a step's records (from the result channel) into metrics. A latency_tracer adds
// "<workload>.<tracer>.max_latency_us" (us, lower is better, aggregate max); count_calls adds
// "<workload>.calls.<function>" (count, aggregate sum); a madvise-pressure load adds
// "<workload>.load.madvise_*" (parse/latency_trace.h). stress-ng (the tool or a cyclictest
// load) is judged by check_stressng_run (parse/stressng.h) on its exit status (the step's rc,
// or the load's load.rc) and its log: a failure sets failed, a requested stressor that did not
// run sets invalid, untrustworthy stressors get their metrics marked (Metric::untrustworthy).
// Never throws: parse errors
// become failed=true with the reason; records stay on disk as raw outputs.
WorkloadOutcome parse_workload(const WorkloadSpec& w, const ChannelContents& records);

}  // namespace isolab
