// What one boot does inside the guest, and the /init script that does it: the plan archive's
// /init and step scripts, rendered from a GuestPlan.
//
// The init (busybox sh) mounts the pseudo file systems, sends the isolation facts over the
// result channel (guest/channel.h) before any workload, optionally skips the workloads when
// the guest plainly did not get the CPUs or isolation asked for, runs each step under a
// timeout with its output captured to files, sends those files as records, sends DONE and
// powers off. Record names sent before the steps are the fact names read by
// gate/gate.h parse_guest_facts(): cmdline, uname_r, cpu_online, cpu_possible, isolated,
// nohz_full (only if the sysfs file exists), dmesg, irq_affinity ("<irq> <list>" lines),
// cpu_topology ("<cpu> <package> <core> <thread_siblings_list>" lines, from sysfs topology/),
// default_smp_affinity, workqueue_cpumask, interrupts_before, interrupts_after, busy_window_s,
// clocksource, trace_events (tracefs set_event), node_online (/sys/devices/system/node/online,
// only with CONFIG_NUMA), numa_nodes (one line per node: "node<N> <cpulist> <MemTotal kB>"),
// runtime (after the precheck: GuestPlan::runtime), sysctls (after the precheck: see
// GuestPlan::sysctls), lock_contention_trigger (the trigger
// file of lock:contention_begin after lock_contention_arm_script(), only when a step traces and
// the kernel has the event); and at the end dmesg_end. A traced step also sends
// "<name>.lock_contention": the contention_begin/end lines of every CPU, each begin followed by
// its "<stack trace>" line and " => " frames.
//
// tests/data/guest/init-{full,minimal}-plan.sh are the /init of two fixed plans
// (unit_guest_init_script_test compares them byte for byte; ISOLAB_UPDATE_GOLDEN=1 rewrites them).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "guest/runtime_script.h"

namespace isolab {

struct GuestStep {
  std::string name;    // [A-Za-z0-9_.-]+, unique; records are "<name>.<suffix>"
  std::string script;  // sh script run as /isolab/steps/<name>.sh with cwd /tmp/out
  // Files the step leaves in /tmp/out, sent as records "<name>.<suffix>" -> file name.
  // "<name>.stdout" and "<name>.stderr" are always sent.
  std::vector<std::pair<std::string, std::string>> outputs;
  int timeout_s = 60;
  std::string trace_cpus;  // cpulist to trace irq/timer/workqueue events on; "" = no trace
};

struct GuestPlan {
  std::string nonce;             // [A-Za-z0-9]+
  int vcpus = 1;                 // expected online CPUs
  std::string expect_isolated;   // canonical cpulist sysfs should show ("" = none)
  std::string expect_nohz_full;  // canonical cpulist ("" = none expected)
  bool skip_on_mismatch = true;  // skip the steps when CPU count / isolation differ
  std::string busy_cpus;         // cpulist for the tick check busy window ("" = none)
  int busy_window_s = 3;
  std::string before_steps;  // extra sh run before the steps (tests inject faults here)
  // sysctl name ("vm.numa_stat") -> value, written to /proc/sys/<name with '.' -> '/'> before
  // the steps, then read back. Record "sysctls": one line per entry,
  // "<name>\t<write exit status>\t<value read back, tabs as spaces>" (guest/sysctl.h parses it).
  // Names [a-z0-9_]+(.[A-Za-z0-9_-]+)+; values [A-Za-z0-9 _.,:+=-]*.
  std::vector<std::pair<std::string, std::string>> sysctls;
  // The customer's runtime settings (guest/runtime_script.h), set after the precheck and before
  // `sysctls` (so that a variant's sysctl overrides the customer's): record "runtime".
  GuestRuntime runtime;
  std::vector<GuestStep> steps;
};

// Renders the plan archive's files: "/init" and "/isolab/steps/<name>.sh". Pure.
// Throws isolab::Error if a name or nonce has characters outside its allowed set.
std::vector<std::pair<std::string, std::string>> render_plan_files(const GuestPlan& plan);

// The kernel parameter that enables, at boot, the trace events a traced step reads: entry and
// exit of device IRQs, softirqs, workqueue items, the local timer and the IPIs (durations of
// interruptions), workqueue_queue_work (who queued vmstat_update where), lock:contention_begin/end
// (zone and pcp lock contention; filtered and given a stack trace by lock_contention_arm_script(),
// which the init runs before the steps), timer callbacks, and timer:tick_stop (why a nohz_full tick
// did or did not stop); followed by " trace_clock=global", so that a queue event on a housekeeping
// CPU and the run it caused on an isolated CPU are ordered on one clock (the default "local" clock
// is per CPU). Enabling events at run time patches kernel text on every CPU, which crashed 6.1
// guests under multi-threaded TCG here (int3 in __schedule); at boot the patching happens before
// the secondary CPUs start.
std::string trace_event_boot_param();

// sh that sets up lock contention tracing on an already enabled lock:contention_begin (a
// trigger and a filter change patch no kernel text, unlike enabling an event at run time): the
// event filter keeps spin locks only ("flags == 1 || flags == 8": LCB_F_SPIN, and LCB_F_RT for
// PREEMPT_RT's sleeping spinlock_t; include/trace/events/lock.h, 6.1), dropping mutexes, rwsems
// and rwlocks, and a "stacktrace" trigger with the same condition (CONFIG_STACKTRACE) writes
// the kernel stack after each kept event: the event prints only a hashed lock address, the
// stack tells which lock it was (parse/lock_contention.h classify_lock_stack()). Leaves $L set to
// the event's directory; does nothing unless the event is enabled (at boot: a trigger on a disabled
// event would enable it, patching kernel text at run time).
std::string lock_contention_arm_script();
// sh that removes that trigger (the latency tracer steps, which must not get stack traces in
// their buffer); lock_contention_arm_script() sets it again.
std::string lock_contention_disarm_script();

// Quotes a word for POSIX sh with single quotes.
std::string sh_quote(const std::string& word);

}  // namespace isolab
