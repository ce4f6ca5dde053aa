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

#include "base/progress.h"
#include "pipeline/baseline.h"
#include "spec/spec.h"
#include "sys/process.h"
#include "vm/insn_plugin.h"

namespace isolab {

enum class AccelRequest { automatic, kvm, tcg };

struct RunOptions {
  std::filesystem::path spec_path;
  std::filesystem::path results_dir = "results";
  std::filesystem::path cache_dir;   // empty: default_cache_dir()
  std::filesystem::path resume_dir;  // non-empty: continue this run directory
  AccelRequest accel = AccelRequest::automatic;
  std::string backend = "qemu";  // "qemu" | "libvirt"
  std::string libvirt_uri;  // backend libvirt; empty: default_libvirt_uri(cache) (vm/libvirt.h)
  // --host (repeatable): the libvirt hosts to place cells on, replacing the spec's "hosts" (a
  // URI the spec lists keeps its pool_dir). Non-empty (here or in the spec): every cell runs
  // on one of these hosts (LibvirtHostBackend) and backend, libvirt_uri and parallel are not
  // used (one guest at a time per host).
  std::vector<std::string> hosts;
  bool trace = true;  // trace the isolated CPUs during each workload
  int jobs = 0;       // make -j; 0 = host CPUs
  int parallel = -1;  // guests at once: -1 = the spec's "parallel", 0 = auto, N

  std::string source_dir;                 // isolab's own tree (for the git revision)
  std::filesystem::path vmstat_overhead;  // the guest tool binary
  // guest-tools/madvise-pressure.c binary; packed into the guest image only when a workload's
  // load uses it (so the image of other specs stays as it was)
  std::filesystem::path madvise_pressure;
  // The page-fault-bench binary; put in the guest image when a workload uses it.
  std::filesystem::path page_fault_bench;
  // guest-tools/isolab-mark.c: the step markers of the instruction-counting TCG plugin, put in
  // every guest image; "" = none (the /init's marker calls then fail silently, as on KVM).
  std::filesystem::path isolab_mark;
  // guest-tools/wake-marker.c: the LD_PRELOAD library that marks cyclictest's sleeps for the
  // plugin's wakeup paths, put in every guest image when it exists ("" or missing = none: then
  // cyclictest runs without it and gives no wakeup path lengths).
  std::filesystem::path wake_marker;
  // The instruction-counting TCG plugin and its test guest (vm/insn_plugin.h). When the plugin
  // path is set, insn_count is true and the guests run under TCG on this machine, the run first
  // proves QEMU loads the plugin (preflight_insn_plugin; an error before any build or boot
  // otherwise) and every boot counts guest instructions (workload/insn_metrics.h).
  InsnPluginFiles insn_plugin;
  bool insn_count = true;  // false: `isolab run --no-insn-count`
  // Variants that boot a stored baseline run's kernel (pipeline/baseline.h), by variant name:
  // their kernel is that bzImage (not built from the spec), their result.json record carries
  // "baseline_of" (to_json(BaselineKernel)).
  std::map<std::string, BaselineKernel> baseline_kernels;
  // Stages the caller ran before run_spec (the series apply check, which may unpack the
  // source), as (name, wall seconds): the first entries of result.json "timings" and part of
  // its total.
  std::vector<std::pair<std::string, double>> stages_before;
  std::function<void(const std::string&)> progress;  // status lines (stderr)
  // When set: kernel builds report their steps (KernelEnv::meter) and the cells loop reports
  // task "cells" as k/N after each cell, with an ETA from the cells this process ran.
  Progress* meter = nullptr;
};

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
// given, and without hosts the host CPU plan (its "host CPU plan: ..." error). Throws SpecError
// (with the field's JSON pointer) or Error as run_spec would; prints nothing. For the caller
// to run before steps that may take a minute on an empty cache (the series apply check unpacks
// the kernel source); run_spec makes them again.
void check_spec_before_builds(const Spec& spec, const RunOptions& options);

}  // namespace isolab
