// A machine folder's facts other than its CPUs (those are machine/cpu_files.h's): the command
// line, the kernel release, the kernel's isolation files, TuneD, the sysctls and the IRQs.
//
// Files read (paths relative to the folder; a sos report keeps the machine's paths and adds
// sos_commands/):
//  - cmdline: proc/cmdline (one line).
//  - kernel_release: sos_commands/kernel/uname_-a (its third word; a sos report's top-level
//    `uname` is a link to it), then proc/version ("Linux version <release> ...").
//  - sys/devices/system/cpu/isolated and nohz_full: the kernel's own isolated (domain) and
//    nohz_full CPUs, for machine/isolation.h.
//  - TuneD: the active profile from etc/tuned/active_profile or sos_commands/tuned/
//    tuned-adm_active; its variables from etc/tuned/<profile>-variables.conf, or, when no
//    profile is named or it has none, from every etc/tuned/*-variables.conf (a note says so).
//    isolated_cores= and no_balance_cores= are CPUs TuneD keeps for isolated work.
//  - sysctls of machine/sysctls.h: sos_commands/kernel/sysctl_-a, then proc/sys/<name> files.
//  - IRQs: proc/irq/N/smp_affinity_list (and effective_affinity_list), named from
//    proc/interrupts.
// Every fact is offered (facts.h offer()) after what `m` already holds. Errors: a file of one
// of these formats that does not parse (isolab::Error naming the file and line).
#pragma once

#include "machine/facts.h"
#include "machine/machine_root.h"

namespace isolab {

void read_machine_root(const MachineRoot& root, MachineFacts& m);

// The command line of a /proc/cmdline file: its one line without the newline. isolab::Error
// naming `file` when it holds more than one non-empty line.
std::string proc_cmdline_line(std::string_view text, const std::string& file);

// TuneD's state from a profile name and the variables of a file: the tuned fact, and the
// isolated_cores= / no_balance_cores= CPUs in m.evidence.
void add_tuned_variables(std::string_view text, const std::string& file, MachineFacts& m);

}  // namespace isolab
