// How `isolab run` (and bisect and the vm tests) runs a spec: where results and the cache go,
// the accelerator, backend, guest tools' binaries, progress (pipeline/run.h run_spec). Header-only.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/progress.h"
#include "pipeline/baseline.h"
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
  // otherwise) and every boot counts guest instructions (workload/insn_cell.h).
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

}  // namespace isolab
