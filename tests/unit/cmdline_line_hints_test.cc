// cmdline/line_hints.h: what a line says of the machine beyond what the kernel reads
// (tuned.non_isolcpus=, systemd.cpu_affinity=, BOOT_IMAGE=), and how analyze() uses it.
#include <gtest/gtest.h>

#include <algorithm>

#include "cmdline/analysis_output.h"
#include "cmdline/analyze.h"
#include "cmdline/customer_kernel.h"
#include "cmdline/line_hints.h"

namespace isolab {
namespace {

bool has_warning(const Analysis& a, std::string_view needle) {
  return std::any_of(a.warnings.begin(), a.warnings.end(),
                     [&](const std::string& w) { return w.find(needle) != std::string::npos; });
}
std::string reason_of(const std::vector<ParamVerdict>& v, std::string_view param) {
  for (const auto& x : v)
    if (x.param == param) return x.reason;
  return "";
}

// TuneD's cpu-partitioning on a 24-CPU VM: the mask's CPUs 20-23 lie beyond nohz_full=4-19.
// Before the hints were read this gave 20 vCPUs and lost housekeeping CPUs 20-23.
TEST(CmdlineLineHints, MaskBeyondTheListsGivesTheCpuCountAndKeepsItsHousekeepingCpus) {
  Analysis a = analyze(
      "skew_tick=1 nohz=on nohz_full=4-19 rcu_nocbs=4-19 "
      "tuned.non_isolcpus=00f0000f intel_pstate=disable nosoftlockup");
  EXPECT_EQ(a.vcpus, 24u);
  EXPECT_EQ(a.vcpus_needed, 24u);
  EXPECT_EQ(a.nohz_full.to_list(), "4-19");
  EXPECT_EQ(a.housekeeping.to_list(), "0-3,20-23");
  EXPECT_NE(a.vcpus_reason.find("'tuned.non_isolcpus=00f0000f' names housekeeping CPU 23"),
            std::string::npos)
      << a.vcpus_reason;
  EXPECT_NE(a.vcpus_reason.find("housekeeping CPUs 20-23 kept"), std::string::npos)
      << a.vcpus_reason;
  ASSERT_EQ(a.hints.size(), 1u);
  EXPECT_EQ(a.hints[0].housekeeping.to_list(), "0-3,20-23");
  EXPECT_EQ(a.hints[0].min_cpus, 24u);
  EXPECT_NE(a.hints[0].meaning.find("at least 24 CPUs"), std::string::npos);
  // The hint is TuneD's, not the kernel's: the guest does not boot it.
  EXPECT_NE(reason_of(a.dropped, "tuned.non_isolcpus=00f0000f").find("TuneD"), std::string::npos);
  EXPECT_FALSE(has_warning(a, "unknown parameter"));
  EXPECT_NE(to_text(a).find("hint: tuned.non_isolcpus=00f0000f: housekeeping CPUs 0-3,20-23"),
            std::string::npos);
  EXPECT_EQ(to_json(a)["hints"][0]["housekeeping"], "0-3,20-23");
}

// A mask of 80 CPUs is three 32-bit words, most significant first (bitmap_parse()).
TEST(CmdlineLineHints, ThreeWordMaskNamesEightyCpus) {
  Analysis a = analyze(
      "isolcpus=managed_irq,2-77 nohz_full=2-77 rcu_nocbs=2-77 "
      "tuned.non_isolcpus=0000c000,00000000,00000003");
  EXPECT_EQ(a.vcpus, 80u);
  EXPECT_EQ(a.housekeeping.to_list(), "0-1,78-79");
  EXPECT_NE(a.vcpus_reason.find("housekeeping CPUs 78-79 kept"), std::string::npos)
      << a.vcpus_reason;
}

TEST(CmdlineLineHints, TunedMaskGrammar) {
  EXPECT_EQ(parse_tuned_cpumask("00030000,00000003").to_list(), "0-1,48-49");
  EXPECT_EQ(parse_tuned_cpumask("03000003").to_list(), "0-1,24-25");
  EXPECT_EQ(parse_tuned_cpumask("00000001").to_list(), "0");
  EXPECT_EQ(parse_tuned_cpumask("0x00000003").to_list(), "0-1");  // older TuneD
  try {
    parse_tuned_cpumask("00f0000g");
    FAIL() << "a non-hex digit must be refused";
  } catch (const CpuListError& e) {
    EXPECT_EQ(e.errc(), CpuListErrc::kInvalid);
    EXPECT_NE(std::string(e.what()).find("'g' at offset 7 is not a hex digit"), std::string::npos)
        << e.what();
  }
  // Words are 32 bits: nine digits between commas is not TuneD's output.
  EXPECT_THROW(parse_tuned_cpumask("f00000000"), CpuListError);
}

TEST(CmdlineLineHints, SystemdCpuListGrammar) {
  EXPECT_EQ(parse_systemd_cpu_set("0,1,24,25").to_list(), "0-1,24-25");
  EXPECT_EQ(parse_systemd_cpu_set("0-3 20-23").to_list(), "0-3,20-23");
  EXPECT_EQ(parse_systemd_cpu_set("5-3").to_list(), "");  // systemd warns and adds nothing
  try {
    parse_systemd_cpu_set("4..79");
    FAIL() << "'..' is not systemd's range syntax";
  } catch (const CpuListError& e) {
    EXPECT_EQ(e.errc(), CpuListErrc::kInvalid);
    EXPECT_EQ(e.token(), "4..79");
  }
  EXPECT_THROW(parse_systemd_cpu_set("0,8192"), CpuListError);
}

TEST(CmdlineLineHints, SystemdAffinityGivesTheCountToo) {
  Analysis a = analyze("nohz_full=4-19 systemd.cpu_affinity=0-3,20-23");
  EXPECT_EQ(a.vcpus, 24u);
  EXPECT_EQ(a.housekeeping.to_list(), "0-3,20-23");
  EXPECT_NE(a.vcpus_reason.find("systemd.cpu_affinity=0-3,20-23"), std::string::npos);
}

TEST(CmdlineLineHints, UnreadableHintIsReportedAndNotUsed) {
  Analysis a = analyze("nohz_full=4-19 systemd.cpu_affinity=4..79");
  EXPECT_EQ(a.vcpus, 20u);
  ASSERT_EQ(a.hints.size(), 1u);
  EXPECT_NE(a.hints[0].error.find("'4..79'"), std::string::npos) << a.hints[0].error;
  EXPECT_TRUE(has_warning(a, "systemd ignores the whole value"));
}

TEST(CmdlineLineHints, HousekeepingHintThatTheLineIsolatesIsAWarning) {
  Analysis a = analyze("nohz_full=2-5 tuned.non_isolcpus=0000000f");
  EXPECT_EQ(a.vcpus, 6u);
  EXPECT_TRUE(has_warning(a, "names CPUs 2-3 as housekeeping, but the line isolates them"));
}

TEST(CmdlineLineHints, BootImageNamesTheCustomerKernel) {
  EXPECT_EQ(boot_image_release("(hd0,msdos1)/vmlinuz-6.8.0-39-generic"), "6.8.0-39-generic");
  EXPECT_EQ(boot_image_release("(hd0,gpt3)/ostree/rhcos-0b81/vmlinuz-4.18.0-348.23.1.el8_5.x86_64"),
            "4.18.0-348.23.1.el8_5.x86_64");
  EXPECT_EQ(boot_image_release("/vmlinuz-4.18.0-372.19.1.el8_6.x86_64"),
            "4.18.0-372.19.1.el8_6.x86_64");
  EXPECT_EQ(boot_image_release("(hd0,msdos1)/vmlinuz-tip"), std::nullopt);
  EXPECT_EQ(boot_image_release("/boot/bzImage"), std::nullopt);

  Analysis a = analyze("BOOT_IMAGE=/vmlinuz-4.18.0-372.19.1.el8_6.x86_64 isolcpus=2-3");
  EXPECT_EQ(a.customer_kernel, "4.18.0-372.19.1.el8_6.x86_64 (BOOT_IMAGE)");
  // Given the version, the option wins over the image name.
  AnalyzeOptions o;
  o.customer_kernel_version = "5.4.0-150-generic";
  EXPECT_EQ(
      analyze("BOOT_IMAGE=/vmlinuz-4.18.0-372.19.1.el8_6.x86_64 isolcpus=2-3", o).customer_kernel,
      "5.4.0-150-generic (--kernel-version)");
  // 3.10 knows no isolcpus= flags: the image name alone decides that the flag list is dropped.
  Analysis old = analyze("BOOT_IMAGE=/vmlinuz-3.10.0-1062.el7.x86_64 isolcpus=nohz,1");
  EXPECT_NE(reason_of(old.dropped, "isolcpus=nohz,1").find("3.10.0-1062.el7.x86_64 (BOOT_IMAGE)"),
            std::string::npos);
}

// CM1 and CM4 (docs/sources.md [cm1], [cm4]): the profile's empty extra argument leaves a lone
// '+'; CM5: LANG= is for init. Neither is a kernel parameter, and neither reaches the guest.
TEST(CmdlineLineHints, LonePlusAndLangAreNotKernelParameters) {
  Analysis a = analyze(
      "skew_tick=1 isolcpus=managed_irq,2-23,26-47 systemd.cpu_affinity=0,1,24,25 + "
      "nmi_watchdog=0 LANG=en_US.UTF-8 rcu_nocbs=2-23,26-47 tuned.non_isolcpus=03000003");
  EXPECT_NE(reason_of(a.dropped, "+").find("append marker"), std::string::npos);
  EXPECT_NE(reason_of(a.dropped, "LANG=en_US.UTF-8").find("not a kernel parameter"),
            std::string::npos);
  EXPECT_FALSE(has_warning(a, "unknown parameter"));
  EXPECT_EQ(a.guest_cmdline(),
            "skew_tick=1 isolcpus=managed_irq,2-23,26-47 nmi_watchdog=0 rcu_nocbs=2-23,26-47");
  EXPECT_EQ(a.vcpus, 48u);
  EXPECT_EQ(a.managed_irq_isolated.to_list(), "2-23,26-47");
}

}  // namespace
}  // namespace isolab
