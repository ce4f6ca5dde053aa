// The isolation of the customer's machine, combined from everything a dump holds.
//
// Contract (derive_isolation(), after the readers):
//  - The command line is read as the kernel does (cmdline/analyze.h) on the machine's CPUs
//    (its `cpus` count; when unknown, the count the line itself implies), with the machine's
//    kernel release as the customer's kernel, so a parameter that kernel ignored counts for
//    nothing. When no file gives the kernel release, BOOT_IMAGE's image name does.
//  - isolated: the CPUs kept for isolated work by any means: isolcpus= with any flags
//    (domain, nohz, managed_irq), nohz_full=, the kernel's sys/devices/system/cpu/isolated and
//    nohz_full, TuneD's isolated_cores= and no_balance_cores=, a PerformanceProfile's
//    spec.cpu.isolated; each source that was read is an origin, also when it isolates nothing.
//  - nohz_full: sys/devices/system/cpu/nohz_full, else the line's (nohz_full=, isolcpus=nohz).
//  - rcu_nocbs: the line's RCU offload set (rcu_nocbs= and nohz_full=; only the kernel's log
//    says it otherwise).
//  - housekeeping: the online CPUs that are not isolated (without an online fact, the CPUs the
//    line implies, said so in the origin).
//  - irqs_on_isolated: the IRQs whose affinity includes an isolated CPU; [] when no CPU is
//    isolated.
//  - The line's machine hints (tuned.non_isolcpus=, systemd.cpu_affinity=) and its warnings
//    about isolation parameters become notes; so do PID 1's CPUs (a must-gather's
//    cpu_affinities.json), naming the isolated ones among them.
//  - Each fact still missing gets its not_read reason; a not_read entry of a fact that a later
//    source established is removed.
// Errors: a command line the analysis refuses (isolab::Error, prefixed with its file).
#pragma once

#include "machine/facts.h"

namespace isolab {

void derive_isolation(MachineFacts& m);

}  // namespace isolab
