// What a kernel command line says about the customer's machine beyond what the kernel reads:
// parameters the kernel ignores but the customer's tools wrote from the machine they ran on.
//
// Contract:
//  - tuned.non_isolcpus=MASK: the CPUs TuneD's cpu-partitioning profile leaves for housekeeping
//    (its not_isolated_cpumask, tuned/profiles/cpu-partitioning/tuned.conf in
//    redhat-performance/tuned), written by TuneD's cpulist2hex (tuned/utils/commands.py): the
//    mask in hex, zero-padded to whole 32-bit words, the words comma-separated, most
//    significant first ("00f0000f" = CPUs 0-3,20-23; "00030000,00000003" = 0,1,48,49). That is
//    the kernel's bitmap_parse() / cpumask_parse() grammar (lib/bitmap.c), which
//    parse_tuned_cpumask() follows; older TuneD wrote one "0x%08x" word, so a leading "0x"
//    is accepted. The housekeeping CPUs it names are the online CPUs TuneD did not isolate, so
//    its highest CPU proves the machine had at least that many CPUs + 1.
//  - systemd.cpu_affinity=LIST: PID 1's CPU affinity (systemd src/core/main.c
//    parse_proc_cmdline_item()), parsed by parse_cpu_set_full() (src/shared/cpu-set-util.c):
//    words separated by whitespace or ',', quotes removed, each a CPU `N` or a range `A-B`
//    (parse_range(), src/basic/parse-util.c); a reversed range adds nothing (systemd warns
//    "Range ... is invalid ... ignoring"), a CPU >= 8192 (ERANGE) or a word that is not a
//    number or range (EINVAL) makes systemd ignore the whole value ("Failed to parse CPU
//    affinity mask"). OpenShift's PerformanceProfile writes the housekeeping CPUs there.
// A hint the tools wrote wrongly is not an error of the line: it is reported with why it was
// not used (LineHint::error), and the analysis goes on without it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmdline/cpulist.h"
#include "cmdline/tokenize.h"

namespace isolab {

struct LineHint {
  std::string param;      // the token as written ("tuned.non_isolcpus=00f0000f")
  CpuSet housekeeping;    // the housekeeping CPUs it names (kMaxCpus bits); empty on error
  unsigned min_cpus = 0;  // the machine had at least this many CPUs (its highest CPU + 1)
  std::string meaning;    // what it says ("housekeeping CPUs 0-3,20-23 (TuneD's ...)")
  std::string error;      // why it is not used; "" when it was read
};

// TuneD's hex mask of non-isolated CPUs (see the contract). Throws CpuListError (the kernel's
// EINVAL for a non-hex character, EOVERFLOW for a word of more than 8 digits).
CpuSet parse_tuned_cpumask(std::string_view value);

// systemd's CPU list (see the contract). Throws CpuListError (EINVAL: a word that is neither
// N nor A-B; ERANGE: a CPU >= 8192) naming the word.
CpuSet parse_systemd_cpu_set(std::string_view value);

// The CPU hints of a tokenized line (tuned.non_isolcpus=, systemd.cpu_affinity=; tokens after
// `--` excluded), in line order, each read or with its error.
std::vector<LineHint> cpu_hints(const std::vector<CmdlineToken>& tokens);

}  // namespace isolab
