// How a cell ends: the rows that turn what a boot left (how the VM ended, the console, what the
// guest sent) into the cell's "status", "failure_class" and "reason" (result.json cells[]).
//
// Two tables, each applied in order; the first row whose predicate holds decides:
//   boot rows (classify_boot), before any workload record is read:
//     stale_int3          TCG ran an int3 that memory does not hold  -> failed, infrastructure
//     host_starved_guest  RCU stall, gp kthread starved, TCG or an
//                         overcommitted slot                          -> failed, infrastructure
//     qemu_topology       QEMU refused the -smp topology              -> failed, configuration
//     host_cpu_placement  QEMU or libvirt could not pin the guest's
//                         threads (vm/qemu.h host_cpu_placement_error) -> failed, configuration
//     accelerator         QEMU's output shows the accelerator could not
//                         run the vCPUs (vm/qemu.h accelerator_failure:
//                         KVM MSR abort, KVM entry failure, ...)        -> failed, infrastructure
//     qemu_failed         QEMU failed otherwise                       -> failed, infrastructure
//     no_init             the guest never sent its facts              -> failed, boot
//     console_fatal       a fatal console finding (parse/console.h)   -> failed, its class
//                         ("panic", "oops", "warning", "rcu_stall", "lockup")
//     kernel_release      the guest runs another kernel than built    -> failed, infrastructure
//   run rows (classify_run), after the workloads were parsed:
//     powered_off_early   no DONE marker, the guest powered off       -> failed, workload
//     timeout             no DONE marker, a timeout stopped the VM    -> failed, timeout
//     gate                the isolation gate failed                   -> invalid
//     precheck            the guest's precheck skipped the workloads  -> invalid
//     guest_setup         sysctls or NUMA nodes differ from the spec  -> invalid
//     workload_failed     a workload failed                           -> failed, workload
//     workload_invalid    a workload did not measure what was asked   -> invalid
//     ok                  otherwise                                   -> ok
// The console decides before anything the guest sent (docs/sources.md [o3]: QEMU exits 0 after a
// panic with -no-reboot, so the console is the only witness). "infrastructure" is the class the
// cell's retries boot again (pipeline/cell.h run_cell_retrying). Pure apart from
// RunFacts::guest_setup_mismatch.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "parse/console.h"
#include "vm/vm.h"

namespace isolab {

// The outcome of one cell.
struct CellVerdict {
  std::string rule;           // the deciding row's name (above); not written to result.json
  std::string status;         // "ok" | "invalid" | "failed"
  std::string failure_class;  // "failed" only: the row's class (above); "" otherwise
  std::string reason;         // one line for humans; "" for "ok"
};

// What the boot rows look at.
struct BootFacts {
  std::string accelerator = "?";        // the cell's "accelerator": "tcg" | "kvm"; "?" when unset
  std::optional<bool> overcommitted;    // the slot's host CPUs are overcommitted; nullopt: remote
  VmOutcome outcome;                    // how the VM ended (end, detail, qemu_stderr_excerpt)
  std::optional<ConsoleFinding> fatal;  // the console's first fatal finding (ConsoleReport)
  // int3_trap_byte() of the console (parse/console.h); boot_facts reads it under TCG only.
  std::optional<std::string> int3_byte;
  bool reached_init = false;         // the guest sent its facts (record uname_r)
  bool kernel_release_match = true;  // the guest's `uname -r` is the built kernel's
  std::string guest_uname_r;         // sanitized, at most 100 bytes
  std::string expected_release;      // the variant's "kernel_release"
};

// What the run rows look at.
struct RunFacts {
  bool done = false;             // the guest sent the DONE marker (guest/channel.h)
  VmOutcome outcome;             // how the VM ended
  std::string workload_failure;  // the first failed workload, "workload NAME: why"; "" if none
  std::string workload_invalid;  // the first workload that did not measure what was asked
  bool gate_pass = false;        // the cell's "gate_pass" (expected failures accepted)
  std::string gate_reason = "failed";  // the cell's "gate_reason"
  bool precheck_skipped = false;       // record "precheck" rc != 0 and the plan skips on a mismatch
  // "" when the guest has the spec's sysctls and NUMA nodes, else why not
  // (pipeline/guest_setup.h check_guest_setup, which records what it read in the cell: so it is
  // called at most once, and only when no row before guest_setup decided). Unset: "".
  std::function<std::string()> guest_setup_mismatch;
};

// The first boot row that holds; nullopt when none does (the run rows decide).
std::optional<CellVerdict> classify_boot(const BootFacts& f);

// The first run row that holds (the last row, ok, always does).
CellVerdict classify_run(const RunFacts& f);

// The boot facts of a cell: c is the cell's JSON so far ("accelerator", "overcommitted",
// "kernel_release_match", "guest"."uname_r"; read only), expected_release the release the
// variant's kernel was built as ("" when unknown), console the console text whose
// classification is cons.
BootFacts boot_facts(const nlohmann::json& c, const VmOutcome& out, const ConsoleReport& cons,
                     const std::string& console, bool reached_init,
                     const std::string& expected_release);

// c with the verdict written: "failed" sets "status", "failure_class" and "reason"; "invalid"
// sets "status" and "reason"; "ok" sets "status" only (the header's "failure_class" null and
// "reason" "" stay).
nlohmann::json apply_verdict(nlohmann::json c, const CellVerdict& v);

// Whether the cell's first fatal console finding is an RCU stall whose grace-period kthread was
// runnable but starved (ConsoleFinding::gp_kthread_starved, parse/console.h) in a guest whose
// vCPUs compete for host CPUs: `c`'s "accelerator" is "tcg" or its "overcommitted" is true.
// The cell then fails as "infrastructure" (the host did not run the guest) instead of
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

}  // namespace isolab
