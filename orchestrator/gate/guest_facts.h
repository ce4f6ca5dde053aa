// What the guest says about its isolation: the records its init sends, read into facts for the
// isolation gate (gate/gate.h).
//
// Contract:
//  parse_guest_facts() reads the raw records the guest init sends (values are raw file
//  contents, untrusted). It never throws for bad content: every record that is missing where
//  required, too large (> kMaxRecordBytes) or unparsable is listed in GuestFacts::problems as
//  "<key>: <what>", and the gate fails on it. Keys:
//    cmdline (/proc/cmdline), uname_r, cpu_online, cpu_possible (/sys/devices/system/cpu/...),
//    isolated, nohz_full (absent when the sysfs file does not exist), dmesg, irq_affinity
//    (lines "<irq> <effective_affinity_list>"), default_smp_affinity (hex mask),
//    workqueue_cpumask (hex mask, may be absent), interrupts_before / interrupts_after
//    (/proc/interrupts around the busy window), busy_window_s (decimal seconds), runtime (kept as
//    sent).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmdline/analyze.h"
#include "cmdline/cpulist.h"
#include "gate/interrupts.h"

namespace isolab {

inline constexpr size_t kMaxRecordBytes = size_t{32} << 20;

struct IrqEffective {
  std::string irq;
  CpuSet cpus;
};

struct ClockState {
  bool tsc_unstable = false;  // "tsc: Marking TSC unstable" / "clocksource 'tsc' as unstable"
  bool sched_clock_unstable = false;  // "sched_clock: Marking unstable"
  bool sched_clock_stable = false;    // "sched_clock: Marking stable"
  std::string clocksource;            // last "clocksource: Switched to clocksource X"
  std::vector<std::string> lines;     // the dmesg lines this was read from
  std::string summary() const;        // "clocksource hpet; TSC unstable"
};

struct GuestFacts {
  std::string cmdline;
  std::vector<CmdlineToken> cmdline_tokens;
  std::string uname_r;
  std::optional<CpuSet> cpu_online, cpu_possible, isolated, nohz_full;
  std::vector<std::string> dmesg_lines;  // timestamps stripped
  bool has_dmesg = false;
  std::optional<CpuSet> rcu_offload;  // from "Offload RCU callbacks from CPUs:"; empty = (none)
  std::vector<IrqEffective> irq_affinity;
  bool has_irq_affinity = false;
  std::optional<CpuSet> default_smp_affinity, workqueue_cpumask;
  std::optional<InterruptsSnapshot> interrupts_before, interrupts_after;
  std::optional<double> busy_window_s;
  ClockState clock;
  // Record "runtime" as sent (guest/runtime_script.h), read by the gate's runtime rows
  // (gate/runtime_check.h); nullopt when the guest sent none.
  std::optional<std::string> runtime_record;
  std::vector<std::string> problems;  // "<key>: <what>"
};

GuestFacts parse_guest_facts(const std::map<std::string, std::string>& records);

}  // namespace isolab
