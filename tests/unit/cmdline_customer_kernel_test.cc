// The customer's own kernel decides (cmdline/customer_kernel.h): its version's isolcpus= rules
// and its own dmesg messages, against the 6.1 guest.
#include <gtest/gtest.h>

#include <algorithm>

#include "base/error.h"
#include "base/files.h"
#include "cmdline/analyze.h"
#include "cmdline/customer_kernel.h"

namespace isolab {
namespace {

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/cmdline/" + name);
}
bool has_warning(const Analysis& a, std::string_view needle) {
  return std::any_of(a.warnings.begin(), a.warnings.end(),
                     [&](const std::string& w) { return w.find(needle) != std::string::npos; });
}
std::string reason_of(const Analysis& a, std::string_view param) {
  for (const auto& x : a.dropped)
    if (x.param == param) return x.reason;
  return "";
}
Analysis for_kernel(const std::string& line, const std::string& version) {
  AnalyzeOptions o;
  o.customer_kernel_version = version;
  return analyze(line, o);
}

TEST(KernelVersion, MajorAndMinorOfReleaseStrings) {
  EXPECT_EQ(parse_kernel_version("5.4.0-150-generic"), std::make_pair(5, 4));
  EXPECT_EQ(parse_kernel_version("v6.12"), std::make_pair(6, 12));
  EXPECT_EQ(parse_kernel_version("4.18.0-553.el8_10.x86_64"), std::make_pair(4, 18));
  EXPECT_EQ(parse_kernel_version("6"), std::nullopt);
  EXPECT_EQ(parse_kernel_version("six.one"), std::nullopt);
  EXPECT_EQ(parse_kernel_version(""), std::nullopt);
}

TEST(CustomerKernelDmesg, VersionAndIsolationMessages) {
  const CustomerKernel k = customer_kernel_of_dmesg(data("dmesg-5.4-isolcpus-unknown-flag.txt"));
  EXPECT_EQ(k.version, "5.4.0-150-generic");
  EXPECT_EQ(k.major, 5);
  EXPECT_EQ(k.minor, 4);
  EXPECT_EQ(k.version_source, "dmesg");
  EXPECT_EQ(
      k.isolation_messages,
      (std::vector<std::string>{"isolcpus: Error, unknown flag", "NO_HZ: Full dynticks CPUs: 2-3.",
                                "Offload RCU callbacks from CPUs: 2-3."}));
  EXPECT_EQ(reported_cpu_list(k.isolation_messages[1]),
            std::make_pair(std::string("nohz_full"), std::string("2-3")));
  EXPECT_EQ(reported_cpu_list(k.isolation_messages[2]),
            std::make_pair(std::string("rcu_nocbs"), std::string("2-3")));
  EXPECT_EQ(reported_cpu_list(k.isolation_messages[0]), std::nullopt);
  // A dmesg is untrusted text: what is kept of it carries no control bytes.
  const CustomerKernel odd = customer_kernel_of_dmesg(
      "[    0.0] Linux version 5.4.0\x1b[2J (x)\n[    0.0] isolcpus: Error, unknown "
      "flag\x1b]0;t\a\n");
  EXPECT_EQ(odd.version.find('\x1b'), std::string::npos) << odd.version;
  ASSERT_EQ(odd.isolation_messages.size(), 1u);
  EXPECT_EQ(odd.isolation_messages[0].find('\x1b'), std::string::npos);
  EXPECT_EQ(odd.isolation_messages[0].find('\a'), std::string::npos);
}

// The wrong answer the issue reports: the customer's 5.4 kernel said it rejected isolcpus=, and
// the 6.1 rules applied it anyway. Now its own message decides: managed IRQs were not kept off
// CPUs 2-3 on that machine, the guest boots without isolcpus=, and nohz_full and rcu_nocbs
// (which it did apply) stay.
TEST(CustomerKernelDecides, ItsDmesgSaysItRejectedIsolcpus) {
  const Analysis a = analyze(data("dmesg-5.4-isolcpus-unknown-flag.txt"));
  EXPECT_EQ(a.customer_kernel, "5.4.0-150-generic (dmesg)");
  EXPECT_TRUE(a.managed_irq_isolated.empty()) << a.managed_irq_isolated.to_list();
  EXPECT_TRUE(a.isolcpus_flags.empty());
  EXPECT_EQ(a.nohz_full.to_list(), "2-3");
  EXPECT_EQ(a.rcu_nocbs.to_list(), "2-3");
  EXPECT_EQ(a.guest_cmdline().find("isolcpus"), std::string::npos) << a.guest_cmdline();
  EXPECT_NE(a.guest_cmdline().find("nohz_full=2-3"), std::string::npos);
  EXPECT_NE(
      reason_of(a, "isolcpus=managed_irq,2-3").find("printed 'isolcpus: Error, unknown flag'"),
      std::string::npos);
  EXPECT_TRUE(has_warning(a, "the guest's 6.1 kernel would apply it"));
  EXPECT_TRUE(has_warning(a, "written for kernel 5.4.0-150-generic (dmesg); the guest boots 6.1"));
  // Its reported sets agree with the analysis: no warning about them.
  EXPECT_FALSE(has_warning(a, "the customer's kernel reported"));
  const ExpectedIsolation e = expected_isolation(a);
  EXPECT_FALSE(e.managed_irq);
  // The line as 6.1 reads it keeps managed IRQs off CPUs 2-3: a configuration the customer
  // never had.
  const std::string line = *find_cmdline_in_dmesg(data("dmesg-5.4-isolcpus-unknown-flag.txt"));
  AnalyzeOptions as_61;
  as_61.customer_kernel_version = "6.1";
  const Analysis read_by_61 = analyze(line, as_61);
  EXPECT_EQ(read_by_61.managed_irq_isolated.to_list(), "2-3");
  EXPECT_EQ(read_by_61.isolcpus_flags, std::vector<std::string>{"managed_irq"});
  // The line alone names its kernel in BOOT_IMAGE (vmlinuz-5.4.0-150-generic): 5.4's rule
  // drops the parameter as the dmesg does.
  const Analysis line_only = analyze(line);
  EXPECT_EQ(line_only.customer_kernel, "5.4.0-150-generic (BOOT_IMAGE)");
  EXPECT_TRUE(line_only.managed_irq_isolated.empty());
}

// Without a dmesg, the version's rule: 4.15 to 5.5 know nohz and domain only.
TEST(CustomerKernelDecides, VersionRulesForIsolcpusFlags) {
  const std::string line = "isolcpus=managed_irq,domain,2-3 nohz_full=2-3";
  const Analysis v54 = for_kernel(line, "5.4.0-150-generic");
  EXPECT_TRUE(v54.isolated.empty());
  EXPECT_NE(reason_of(v54, "isolcpus=managed_irq,domain,2-3").find("flag 'managed_irq'"),
            std::string::npos);
  EXPECT_NE(reason_of(v54, "isolcpus=managed_irq,domain,2-3").find("(--kernel-version)"),
            std::string::npos);
  // 5.6 added managed_irq, 5.7 skips unknown flags: both apply the parameter, as 6.1 does.
  for (const char* v : {"5.6.19", "5.10.0-23-amd64", "6.1.0"}) {
    const Analysis a = for_kernel(line, v);
    EXPECT_EQ(a.isolated.to_list(), "2-3") << v;
    EXPECT_EQ(reason_of(a, "isolcpus=managed_irq,domain,2-3"), "") << v;
  }
  const Analysis v56 = for_kernel("isolcpus=foo,domain,2-3", "5.6");
  EXPECT_TRUE(v56.isolated.empty());
  const Analysis v57 = for_kernel("isolcpus=foo,domain,2-3", "5.7");
  EXPECT_EQ(v57.isolated.to_list(), "2-3");  // "isolcpus: Skipped unknown flag foo"
  // 4.15 to 5.5 know nohz and domain; before 4.15 there are no flags at all.
  EXPECT_EQ(for_kernel("isolcpus=nohz,domain,2-3", "4.19.0").isolated.to_list(), "2-3");
  EXPECT_TRUE(for_kernel("isolcpus=domain,2-3", "4.14.300").isolated.empty());
  EXPECT_EQ(for_kernel("isolcpus=2-3", "4.14.300").isolated.to_list(), "2-3");
  // A version that is not one is an error naming it.
  EXPECT_THROW(for_kernel(line, "latest"), Error);
}

// The kernel's message wins over the version: a stable 5.4 that carries the skip-unknown
// backport says nothing, and a kernel whose version allows the flag but printed the error
// still loses the parameter.
TEST(CustomerKernelDecides, ItsOwnMessageOverridesTheVersionRule) {
  const std::string dmesg =
      "[    0.000000] Linux version 5.10.0-23-amd64 (debian-kernel@lists.debian.org)\n"
      "[    0.000000] Command line: isolcpus=managed_irq,domain,2-3 nohz_full=2-3\n"
      "[    0.000000] isolcpus: Error, unknown flag\n";
  const Analysis a = analyze(dmesg);
  EXPECT_TRUE(a.isolated.empty());
  EXPECT_NE(reason_of(a, "isolcpus=managed_irq,domain,2-3").find("printed"), std::string::npos);
  // --kernel-version overrides the dmesg's version, not its messages.
  AnalyzeOptions o;
  o.customer_kernel_version = "6.1";
  EXPECT_TRUE(analyze(dmesg, o).isolated.empty());
}

// [k2]: the customer's kernel trimmed nohz_full=2-15 to its 6 CPUs and said so; the line alone
// makes a 16-vCPU guest. The analysis warns with the kernel's own words.
TEST(CustomerKernelDecides, ReportedSetsThatDifferAreQuoted) {
  const std::string dmesg =
      "[    0.000000] Linux version 5.15.0-91-generic (buildd@host)\n"
      "[    0.000000] Command line: nohz_full=2-15 rcu_nocbs=2-15\n"
      "[    0.000000] NO_HZ: Full dynticks CPUs: 2-5.\n"
      "[    0.000000] rcu: \tOffload RCU callbacks from CPUs: 2-5.\n";
  const Analysis a = analyze(dmesg);
  EXPECT_EQ(a.nohz_full.to_list(), "2-15");
  EXPECT_TRUE(has_warning(a,
                          "reported nohz_full CPUs '2-5' ('NO_HZ: Full dynticks CPUs: 2-5.'); "
                          "the reproduction gives '2-15'"));
  EXPECT_TRUE(has_warning(a, "reported rcu_nocbs CPUs '2-5'"));
  AnalyzeOptions o;
  o.vcpus = 6;
  const Analysis six = analyze(dmesg, o);  // 6.1 rejects the list on 6 CPUs (ERANGE)
  EXPECT_TRUE(has_warning(six, "reported nohz_full CPUs '2-5'"));
  // A plain line has no customer kernel.
  EXPECT_EQ(analyze("nohz_full=2-3").customer_kernel, "");
}

}  // namespace
}  // namespace isolab
