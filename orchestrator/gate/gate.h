// The in-guest isolation gate: did the guest kernel really apply the requested isolation?
//
// Contract:
//  evaluate_gate() is pure. Its rows, one per check in this order (a check with nothing to
//  say adds no row): guest records (only with problems), cmdline, online CPUs, "isolated
//  (isolcpus domain)" (/sys/devices/system/cpu/isolated: the CPUs isolcpus= took out of the
//  scheduler domains, not nohz_full's; the fidelity table's "isolated (any means)" counts both),
//  nohz_full, CONFIG_NO_HZ_FULL (only after "Housekeeping: nohz unsupported"), RCU offload,
//  irq default affinity, irq effective affinity, workqueue cpumask, dmesg isolation messages,
//  tick stopped, clock. GateReport::reason names the first three failed rows. The tick check: for
//  each nohz_full CPU the LOC ("Local timer interrupts") delta over the busy window, in interrupts
//  per second; the tick counts as stopped when the rate is <= kTickStoppedMaxPerSecond (10/s: a
//  tenth of the lowest CONFIG_HZ, 100, so it holds whatever HZ the guest has; the housekeeping
//  CPUs' rate is reported beside it as the reference for the running tick). Under TCG the tick
//  stops although the TSC is marked unstable (docs/sources.md [o6]), so a clock message (TSC
//  unstable, sched_clock unstable) is recorded but fails the gate only when the tick did not stop.
//  IRQs whose effective affinity lands on an isolated CPU give a warning row (they may be managed
//  or per-CPU queue IRQs, which the kernel places there on purpose), not a failure.
//  With the customer's runtime settings asked (ExpectedRuntime, gate/runtime_check.h), their rows
//  follow the clock row: each sysctl, the workqueue cpumask, the IRQ default affinity, the IRQs'
//  and the kernel threads' affinity, as read back after /init set them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmdline/analyze.h"
#include "gate/gate_row.h"
#include "gate/guest_facts.h"
#include "gate/interrupts.h"
#include "gate/runtime_check.h"

namespace isolab {

inline constexpr double kTickStoppedMaxPerSecond = 10.0;
inline constexpr double kMinBusyWindowS = 1.0;

struct GateReport {
  std::vector<GateRow> rows;
  bool pass = false;
  std::string reason;  // "PASS" or "FAIL: <check>: <detail>; ..." naming the first failures
};

GateReport evaluate_gate(const ExpectedIsolation& expected, const GuestFacts& facts,
                         const ExpectedRuntime& runtime = {});

nlohmann::json to_json(const GateReport& r);
std::string to_text(const GateReport& r);  // fixed-width table, one row per check

}  // namespace isolab
