// A run on several libvirt hosts (RunOptions::hosts or the spec's "hosts"): the hosts connected
// and recorded in result.json "hosts", the accelerator they offer, and the cells run on them in
// whole blocks per host (pipeline/placement.h), the hosts at once; a block of a host that is
// lost moves to another host, and its finished cells to "superseded_cells".
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pipeline/run_doc.h"
#include "pipeline/run_options.h"
#include "pipeline/run_plan.h"
#include "pipeline/scheduler.h"
#include "spec/spec.h"
#include "vm/accel.h"
#include "vm/libvirt_host.h"

namespace isolab {

// One libvirt host of a multi-host run: its connection, the backend that boots cells there and
// its record in "hosts".
struct HostConn {
  HostSpec spec;
  std::unique_ptr<LibvirtHost> host;
  std::unique_ptr<LibvirtHostBackend> backend;
  nlohmann::json
      info;  // to_json(fingerprint) with "pool_dir", or {"uri", "error"}; "lost", "lost_at"
  bool usable = false;
};

// The hosts of the run: --host replaces the spec's list (keeping a listed URI's pool_dir).
// Throws SpecError for a bad --host list, as the spec's list would be refused.
std::vector<HostSpec> run_hosts(const Spec& spec, const RunOptions& opt);

// Connects every host (one that cannot be reached is recorded with its error, not thrown) and
// records them in the document's "hosts" (none: an empty list, nothing recorded). Throws
// isolab::Error when none can be reached.
std::vector<HostConn> record_hosts(const std::vector<HostSpec>& host_specs, const RunOptions& opt,
                                   RunDoc& doc);

// KVM when every usable host offers it and the request allows, else TCG (no local probe: the
// guests run elsewhere). Throws isolab::Error for --accel kvm when a host offers no KVM.
AccelChoice hosts_accelerator(const std::vector<HostConn>& hosts, AccelRequest req);

// What the cells of a multi-host run were measured on: sha256 (hex) of the sorted
// fingerprint_sha256 (vm/libvirt_host.h) of every reachable host, one per line, and the
// accelerator. This machine only orchestrates, so its own fingerprint does not enter.
std::string hosts_fingerprint_sha256(const std::vector<HostConn>& hosts, Accel accel);

// What the run does for each cell, whatever host it runs on.
struct HostCells {
  // The cell's result on the slot: its variant's build failure, or its boots (with retries).
  std::function<nlohmann::json(const Slot&, const CellPlan&)> measure;
  // Says that a cell ended (a progress line).
  std::function<void(const nlohmann::json&)> report;
  // Shows how many of the plan's cells are recorded so far (the meter).
  std::function<void()> show;
};

// The cells of the plan (plan_cells(spec, spec.boot_order_seed)) on the hosts, whole blocks
// per host, hosts at once; every cell recorded in `doc` as soon as it ends, with its "host" and
// "block". The cells of blocks no host can run any more are recorded as failed, host_lost.
// Returns early, leaving the rest, once interrupt_requested().
void run_on_hosts(const Spec& spec, const RunOptions& opt, std::vector<HostConn>& hosts,
                  RunDoc& doc, const HostCells& cells);

}  // namespace isolab
