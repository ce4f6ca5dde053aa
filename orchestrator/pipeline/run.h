// Executing a spec: build every variant's kernel, assemble the guest image, boot every cell
// under QEMU, check the isolation gate, parse the workloads, and write result.json after every
// cell (atomically, so a crash or kill -9 leaves the last complete state; --resume continues).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/run_options.h"
#include "spec/spec.h"
#include "sys/process.h"

namespace isolab {

struct RunSummary {
  std::filesystem::path run_dir;
  int cells_ok = 0, cells_invalid = 0, cells_failed = 0;
  std::string status;        // "complete" | "partial" | "failed" | "interrupted"
  int interrupt_signal = 0;  // status "interrupted": the signal (SIGINT, SIGTERM, SIGHUP)
  std::vector<std::string> build_failures;  // "variant: error" for each variant not built
};

// Runs the spec. Throws isolab::Error (bad spec, no kernel source, no usable accelerator, no
// reachable host, or, without hosts, a guest this machine cannot give dedicated CPUs without
// "overcommit": "host CPU plan: the guest needs 8 vCPUs (3 isolated) on dedicated host CPUs;
// this host has 2 online CPUs ...") before anything is built or measured; once cells run, a
// cell's failure is recorded, not thrown.
// Without hosts: cells run on the host plan's slots (pipeline/host_cpu_plan.h), several at once
// when it fits several guests; result.json gets "host_plan" and each cell its "slot",
// "overcommitted" and "host_cpus" (planned and read-back affinity).
// With hosts (RunOptions::hosts or the spec's): no local host plan; every host is connected
// first (one that cannot be reached is recorded in "hosts" with its "error" and gets no cells);
// the accelerator is KVM when every reachable host offers it (and --accel allows), else TCG;
// whole blocks (one repetition of every variant, pipeline/placement.h) go round robin to the
// hosts, and the hosts run their blocks at the same time (one slot per host, one guest at a time
// on each). Each cell records "host" (vm/libvirt_host.h to_json(HostFingerprint)), "block",
// "slot" (the host's index), "overcommitted": null and "host_cpus" with "pinning": "not
// applied" (the guest's CPUs are the remote host's, which isolab does not plan). A host whose
// connection is lost mid-block gets "lost" and "lost_at" in "hosts"; the cells of that block it
// had finished move to "superseded_cells" (with "superseded_reason") and its unfinished blocks
// are re-planned onto the remaining hosts (replan_blocks); when none is left, each remaining
// cell is recorded "failed" with failure_class "host_lost" (a --resume runs those again, and
// keeps a block with cells already recorded on a usable host there). "placement" lists
// {block, host}.
// With install_interrupt_handlers() (sys/process.h): after a signal, the step in progress (a
// make, a boot) is discarded, result.json gets "status": "interrupted", "interrupted_at" (UTC,
// ISO 8601) and "interrupted_by" ("SIGINT"), and the summary says "interrupted". A --resume of
// such a run moves those two fields into "interruptions": [{at, by}] and runs on.
RunSummary run_spec(const Spec& spec, const RunOptions& options, ProcessRunner& runner);

// The checks run_spec makes before anything is built that need neither a kernel nor its source:
// the guest's command line and its length, every workload's CPUs against the guest, the hosts
// given, without hosts the host CPU plan (its "host CPU plan: ..." error), and with --resume
// that its directory's result.json reads and was started with this spec. Throws SpecError
// (with the field's JSON pointer) or Error as run_spec would; prints nothing. For the caller
// to run before steps that may take a minute on an empty cache (the series apply check unpacks
// the kernel source); run_spec makes them again.
void check_spec_before_builds(const Spec& spec, const RunOptions& options);

}  // namespace isolab
