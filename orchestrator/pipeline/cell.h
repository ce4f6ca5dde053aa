// One cell (one boot of one variant) as named stages: prepare the image, boot, collect what
// the guest sent, classify. run_cell() runs them in order; the scheduler (pipeline/scheduler.h)
// runs cells on slots.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "guest/channel.h"
#include "guest/init_script.h"
#include "parse/console.h"
#include "pipeline/cell_classify.h"
#include "pipeline/run_options.h"
#include "pipeline/run_plan.h"
#include "pipeline/scheduler.h"
#include "results/variant_facts.h"
#include "vm/accel.h"
#include "vm/vm.h"

namespace isolab {

// What every cell of a run shares (read-only while cells run, so slots may share it).
struct CellContext {
  const Spec& spec;
  const RunOptions& opt;
  const AccelChoice& accel;
  const GuestDerivation& guest;
  std::filesystem::path base_image;  // the cached guest image (guest/initramfs.h)
  std::filesystem::path run_dir;
};

// The guest plan of a cell of `variant` (guest/init_script.h): the given nonce, the expected
// CPUs and isolation, the variant's sysctls, one step per workload (workload/step.h
// guest_step) and ISOLAB_TEST_GUEST_INJECT's fragment (test-only) before the steps. Pure but
// for that variable.
GuestPlan cell_guest_plan(const CellContext& cx, const VariantSpec& variant,
                          const std::string& nonce);

// Stage 1: the cell directory, the guest plan (fresh nonce, the variant's sysctls) and its
// initramfs (base image + plan.cpio). Throws isolab::Error when a file cannot be written.
struct PreparedCell {
  std::filesystem::path dir;             // run_dir/cells/<id>
  const VariantSpec* variant = nullptr;  // the cell's variant (outlives the cell)
  GuestPlan plan;
  int steps_s = 0;  // the sum of the steps' timeouts
  int longest = 0;  // the longest step's timeout
};
PreparedCell prepare_image(const CellContext& cx, const CellPlan& cell, const VariantSpec& variant);

// Stage 2: the VM for the cell on the slot (pinned to the slot's host CPUs, with the guest
// topology), booted on the slot's backend; the initramfs is removed afterwards.
VmConfig cell_vm_config(const CellContext& cx, const CellPlan& cell, const Slot& slot,
                        const PreparedCell& p, const VariantSpec& variant,
                        const results::RecordedKernel& kernel);
VmOutcome boot(const Slot& slot, const VmConfig& vm);

// Stage 3: what the guest left: the console text and the parsed result channel (both capped;
// missing files read as empty).
struct CellEvidence {
  std::string console;
  ChannelContents channel;
  // The instruction-counting TCG plugin's file (VmConfig::insn_plugin); nullopt when the boot
  // had no plugin or the file is missing.
  std::optional<std::string> insn_counts;
};
CellEvidence collect(const VmConfig& vm, const GuestPlan& plan);

// Stage 4: the cell's JSON ("status" ok / invalid / failed with "failure_class" and "reason"),
// decided by the rows of pipeline/cell_classify.h: the boot rows first, then, after the
// workloads' records were parsed into c (metrics, notes, raw records beside the result), the
// run rows. Never throws for what the guest sent.
nlohmann::json classify(const CellContext& cx, const PreparedCell& p, const VmOutcome& out,
                        const CellEvidence& ev, const results::RecordedKernel& kernel,
                        nlohmann::json c);

// The four stages. `c` starts as cell_header(). Never throws for what the guest does; the
// slot's backend may throw (LibvirtHostLost when a remote host goes away, vm/libvirt_host.h).
// "overcommitted" is null on a remote slot. The boot is bracketed by "started_at" and
// "ended_at" (UTC) and, on a local slot, by "host_load" (pipeline/host_sample.h
// host_load_json: this machine's load averages, CPU pressure and steal time over the boot);
// on a remote slot "host_load" is null and "host_load_note" says why.
nlohmann::json run_cell(const CellContext& cx, const CellPlan& cell, const Slot& slot,
                        const VariantSpec& variant, const results::RecordedKernel& kernel,
                        int attempt);

// run_cell with its bounded retries: at most 3 boots, booting again while the cell fails as
// "infrastructure" (QEMU did not start, host CPU model problems, pinning, a guest the host
// starved, TCG's stale int3, the wrong kernel: cell_classify.h), which is never counted against
// the kernel. Returns the last boot's cell with, when there were earlier boots,
// "earlier_attempts": [{"attempt", "failure_class", "reason"}] in boot order. after_boot (may be
// empty) runs after each boot; whatever it throws ends the loop (run.cc: the interrupt check,
// so a boot ended by a signal is not recorded).
nlohmann::json run_cell_retrying(const CellContext& cx, const CellPlan& cell, const Slot& slot,
                                 const VariantSpec& variant, const results::RecordedKernel& kernel,
                                 const std::function<void()>& after_boot = {});

// {"index", "host", "overcommitted", "vcpus": [CPU lists], "emulator"} of a slot.
nlohmann::json slot_to_json(const Slot& slot);

// The cell's "host_cpus": the slot's plan, the affinity read back per QEMU thread and
// "pinned_as_planned" (every thread's Cpus_allowed_list equals its planned list). A remote slot
// (Slot::local() false): {"index", "host" (URI), "pinning": "not applied", "reason"}.
nlohmann::json host_cpus_json(const Slot& slot, const VmOutcome& out);

// The guest's view of its CPU topology from the cpu_topology record (lines "<cpu> <package>
// <core> <thread_siblings_list>", untrusted): {"sockets", "cores" (per socket), "threads"
// (per core), "cpus"}; null when the record is missing or unparsable.
nlohmann::json guest_topology_view(const std::string& record);

}  // namespace isolab
