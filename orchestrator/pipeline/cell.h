// One cell (one boot of one variant) as named stages: prepare the image, boot, collect what
// the guest sent, classify. run_cell() runs them in order; the scheduler (pipeline/scheduler.h)
// runs cells on slots.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "guest/channel.h"
#include "guest/plan.h"
#include "parse/console.h"
#include "pipeline/run.h"
#include "pipeline/run_plan.h"
#include "pipeline/scheduler.h"
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
                        const nlohmann::json& vdoc);
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

// Stage 4: the cell's JSON ("status" ok / invalid / failed with "failure_class" and "reason";
// invalid also when the guest's NUMA nodes or sysctls differ from the spec, guest_setup.h).
// Never throws for what the guest sent.
nlohmann::json classify(const CellContext& cx, const PreparedCell& p, const VmOutcome& out,
                        const CellEvidence& ev, const nlohmann::json& vdoc, nlohmann::json c);

// Whether the cell's first fatal console finding is an RCU stall whose grace-period kthread was
// runnable but starved (ConsoleFinding::gp_kthread_starved, parse/console.h) in a guest whose
// vCPUs compete for host CPUs: `c`'s "accelerator" is "tcg" or its "overcommitted" is true.
// classify() then fails the cell as "infrastructure" (the host did not run the guest) instead of
// "rcu_stall", and run_cell_retrying boots it again. Seen here: a 4-vCPU TCG guest on 2 host CPUs
// at load 8 printed "rcu_preempt kthread starved for 5254 jiffies! ... ->state=0x0 ->cpu=1" with
// both stalled CPUs idle and marked "(false positive?)" by the kernel
// (tests/data/console/rcu-stall-gp-kthread-starved-tcg-6.1.log). With dedicated KVM CPUs the
// same report stays a kernel failure.
bool host_starved_guest(const nlohmann::json& c, const ConsoleReport& cons);

// Under TCG (c's "accelerator"), an oops on an int3 that memory does not hold (parse/console.h
// int3_trap_byte): the byte memory held, e.g. "e8". The vCPU ran a stale translation of kernel
// text the kernel had patched (text_poke_bp puts an int3 on a site, then restores it; seen with
// rtla's tracers arming on live CPUs). No kernel can handle that trap, so the boot is an
// infrastructure failure. nullopt otherwise (KVM, no such oops, or a real int3 there).
std::optional<std::string> emulator_stale_int3(const nlohmann::json& c, const std::string& console);

// The four stages. `c` starts as cell_header(). Never throws for what the guest does; the
// slot's backend may throw (LibvirtHostLost when a remote host goes away, vm/libvirt_host.h).
// "overcommitted" is null on a remote slot. The boot is bracketed by "started_at" and
// "ended_at" (UTC) and, on a local slot, by "host_load" (pipeline/host_sample.h
// host_load_json: this machine's load averages, CPU pressure and steal time over the boot);
// on a remote slot "host_load" is null and "host_load_note" says why.
nlohmann::json run_cell(const CellContext& cx, const CellPlan& cell, const Slot& slot,
                        const VariantSpec& variant, const nlohmann::json& vdoc, int attempt);

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
