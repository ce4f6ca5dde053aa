// Where a machine's IRQs may run, from the files a dump holds.
//
// Formats:
//  - /proc/interrupts (kernel/irq/proc.c show_interrupts()): a header of "CPUn" columns, then
//    per numbered IRQ "N:", one count per CPU, the chip name, the hardware IRQ with its trigger
//    ("49153-edge"), and the actions' names (", "-joined). Only the names are read here.
//  - /proc/irq/N/smp_affinity_list and effective_affinity_list: a cpulist each.
//  - irq_affinities.json (an OpenShift must-gather's nodes/<node>/): a JSON array of
//    {"irq": N, "source": "<name>", "affinity": [cpu, ...]}.
// Errors (isolab::Error naming the file, and the line or element): a line or element that is
// not one of these forms.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "machine/facts.h"

namespace isolab {

// IRQ number -> the actions' names.
std::map<unsigned, std::string> parse_interrupt_names(std::string_view text,
                                                      const std::string& file);

std::vector<IsolationEvidence::Irq> parse_irq_affinities_json(std::string_view text,
                                                              const std::string& file);

}  // namespace isolab
