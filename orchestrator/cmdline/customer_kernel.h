// What the customer's own kernel did with its command line: its version (from the dmesg's
// "Linux version" line or stated with --kernel-version) and its own messages about the
// isolation parameters. The guest boots another kernel (6.1); where the two treat a parameter
// differently, the customer's kernel decides what the reproduction boots (cmdline/analyze.h).
//
// isolcpus= flags by kernel version (kernel/sched/isolation.c housekeeping_isolcpus_setup()):
//   before 4.15  no flags: the value is a CPU list only, so a flag word fails the list
//                and the parameter is ignored
//   4.15         "nohz" and "domain"; any other word: "isolcpus: Error, unknown flag" and
//                the whole parameter is ignored
//   5.6          "managed_irq" added (commit "genirq, sched/isolation: Isolate from handling
//                managed interrupts")
//   5.7          an unknown all-letter flag is skipped ("isolcpus: Skipped unknown flag X"),
//                a flag with other characters rejects the parameter ("isolcpus: Invalid
//                flag X") (Peter Xu, "sched/isolation: Allow "isolcpus=" to skip unknown
//                sub-parameters", merged for 5.7-rc2, April 2020; AUTOSEL backport to 5.6)
// Stable kernels may carry a backport the version does not show: the kernel's own messages,
// when its dmesg is given, override the version rule.
// Without a dmesg "Linux version" line or --kernel-version, the line itself may name the kernel:
// BOOT_IMAGE=PATH, the boot loader's kernel image ("(hd0,msdos1)/vmlinuz-6.8.0-39-generic",
// "/vmlinuz-4.18.0-372.19.1.el8_6.x86_64"), whose file name after "vmlinuz-" is the release
// (boot_image_release).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmdline/tokenize.h"

namespace isolab {

struct CustomerKernel {
  std::string version;       // as written ("5.4.0-150-generic"); "" when unknown
  std::optional<int> major;  // parsed from version; nullopt when it does not start "N.N"
  std::optional<int> minor;
  // "dmesg", AnalyzeOptions::customer_kernel_version_source, or "BOOT_IMAGE" (the image name)
  std::string version_source;
  // The kernel's own lines about isolcpus=, nohz_full= and rcu_nocbs=, from the message on
  // ("isolcpus: Error, unknown flag", "NO_HZ: Full dynticks CPUs: 2-5.", "Offload RCU
  // callbacks from CPUs: 2-5."), in dmesg order; empty without a dmesg.
  std::vector<std::string> isolation_messages;

  bool known() const { return major.has_value() || !isolation_messages.empty(); }
};

// {major, minor} of a kernel release or version string ("5.4.0-150-generic", "6.12",
// "v5.10.0"); nullopt when it does not start with two dot-separated numbers.
std::optional<std::pair<int, int>> parse_kernel_version(std::string_view version);

// The version (the first "Linux version X " line) and the isolation messages of a dmesg text
// (any timestamp or syslog prefix), sanitized (files.h sanitize_excerpt: the version at most
// 64 bytes, a message 200); an empty CustomerKernel when it holds neither.
CustomerKernel customer_kernel_of_dmesg(std::string_view dmesg);

// An isolation parameter the customer's kernel ignored as a whole although the guest's kernel
// would apply it: the reproduction must boot without it.
struct CustomerRejection {
  const CmdlineToken* token = nullptr;
  std::string why;  // "kernel 5.4 (its dmesg) ... : 'isolcpus: Error, unknown flag' ..."
};

// The isolcpus= tokens (with a value) that kernel k ignored: by its own message when its
// dmesg has one ("isolcpus: Error, unknown flag": the tokens with a flag other than nohz and
// domain, or every token with a flag when none has another), else by the version rule above.
// Nothing when k is unknown or the rules agree with the guest's 6.1.
std::vector<CustomerRejection> customer_rejections(const std::vector<CmdlineToken>& tokens,
                                                   const CustomerKernel& k);

// The kernel release a BOOT_IMAGE= value names: the text after the last "vmlinuz-" of its file
// name, when it starts MAJOR.MINOR ("4.18.0-372.19.1.el8_6.x86_64"); nullopt otherwise
// ("vmlinuz-tip", "/vmlinuz", "(hd0)/boot/bzImage").
std::optional<std::string> boot_image_release(std::string_view boot_image);

struct Analysis;
struct AnalyzeOptions;

// The analysis steps of analyze() (cmdline/analyze.h) that follow the customer's kernel:
// customer_kernel_of: the kernel of a dmesg text and of options.customer_kernel_version (which
//   overrides the dmesg's version; isolab::Error when it is not MAJOR.MINOR...), recorded in
//   a.customer_kernel and a.customer_kernel_messages, with a warning when it is not the guest's.
CustomerKernel customer_kernel_of(std::string_view text, const AnalyzeOptions& opt, Analysis& a);
// drop_customer_rejections: the isolcpus= tokens k ignored leave `kept`, a.kept and
//   a.isolation_params for a.dropped, each with the reason and a warning.
void drop_customer_rejections(const CustomerKernel& k, const AnalyzeOptions& opt,
                              std::vector<const CmdlineToken*>& kept, Analysis& a);
// compare_customer_reports: a warning for each CPU set k reported that differs from a's, and
//   for an "incorrect CPU range" message a's expected kernel messages lack.
void compare_customer_reports(const CustomerKernel& k, Analysis& a);

// The CPU list a kernel message reports, for "NO_HZ: Full dynticks CPUs: 2-5." and
// "Offload RCU callbacks from CPUs: 2-5." (trailing '.' removed); nullopt for another line.
// Returns {"nohz_full" or "rcu_nocbs", list}.
std::optional<std::pair<std::string, std::string>> reported_cpu_list(std::string_view message);

}  // namespace isolab
