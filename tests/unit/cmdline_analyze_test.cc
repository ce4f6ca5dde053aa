// docs/sources.md [k2]-[k7]: deriving the guest and its expected isolation from a command line.
#include <gtest/gtest.h>

#include <algorithm>

#include "base/error.h"
#include "cmdline/analysis_output.h"
#include "cmdline/analyze.h"
#include "cmdline/nearest_name.h"

namespace isolab {
namespace {

const char* kK5 =
    "BOOT_IMAGE=(hd0,msdos1)/vmlinuz-tip root=/dev/mapper/<vg>-root ro "
    "resume=/dev/mapper/<vg>-swap rd.lvm.lv=<vg>/root rd.lvm.lv=<vg>/swap rhgb quiet skew_tick=1 "
    "isolcpus=managed_irq,domain,5,6,7 intel_pstate=disable nosoftlockup tsc=nowatchdog nohz=on "
    "nohz_full=5,6,7 rcu_nocbs=5,6,7 irqaffinity=0,1,2,3,4 console=ttyS0,115200 nomodeset";

bool has_warning(const Analysis& a, std::string_view needle) {
  return std::any_of(a.warnings.begin(), a.warnings.end(),
                     [&](const std::string& w) { return w.find(needle) != std::string::npos; });
}
bool has_message(const Analysis& a, std::string_view m) {
  return std::find(a.expected_kernel_messages.begin(), a.expected_kernel_messages.end(), m) !=
         a.expected_kernel_messages.end();
}
std::string reason_of(const std::vector<ParamVerdict>& v, std::string_view param) {
  for (const auto& x : v)
    if (x.param == param) return x.reason;
  return "";
}

void check_k5(const Analysis& a) {
  EXPECT_EQ(a.vcpus, 8u);
  EXPECT_EQ(a.isolated.to_list(), "5-7");
  EXPECT_EQ(a.housekeeping.to_list(), "0-4");
  EXPECT_EQ(a.nohz_full.to_list(), "5-7");
  EXPECT_EQ(a.rcu_nocbs.to_list(), "5-7");
  EXPECT_EQ(a.irqaffinity.to_list(), "0-4");
  EXPECT_EQ(a.isolcpus_flags, (std::vector<std::string>{"domain", "managed_irq"}));
  std::vector<std::string> dropped;
  for (const auto& d : a.dropped) {
    dropped.push_back(d.param);
    EXPECT_FALSE(d.reason.empty()) << d.param;
  }
  EXPECT_EQ(dropped,
            (std::vector<std::string>{
                "BOOT_IMAGE=(hd0,msdos1)/vmlinuz-tip", "root=/dev/mapper/<vg>-root", "ro",
                "resume=/dev/mapper/<vg>-swap", "rd.lvm.lv=<vg>/root", "rd.lvm.lv=<vg>/swap",
                "rhgb", "quiet", "intel_pstate=disable", "nomodeset"}));
  EXPECT_NE(reason_of(a.dropped, "quiet").find("panic detection"), std::string::npos);
  EXPECT_NE(reason_of(a.dropped, "intel_pstate=disable").find("emulated"), std::string::npos);
  ASSERT_EQ(a.replaced.size(), 1u);
  EXPECT_EQ(a.replaced[0].param, "console=ttyS0,115200");
  EXPECT_EQ(a.guest_cmdline(),
            "skew_tick=1 isolcpus=managed_irq,domain,5,6,7 nosoftlockup tsc=nowatchdog nohz=on "
            "nohz_full=5,6,7 rcu_nocbs=5,6,7 irqaffinity=0,1,2,3,4");
  EXPECT_TRUE(has_message(a, "NO_HZ: Full dynticks CPUs: 5-7."));
  EXPECT_TRUE(has_message(a, "rcu: \tOffload RCU callbacks from CPUs: 5-7."));
  EXPECT_FALSE(has_warning(a, "unknown parameter"));
  ExpectedIsolation e = expected_isolation(a);
  EXPECT_EQ(e.online.to_list(), "0-7");
  EXPECT_EQ(e.irq_default_affinity.to_mask(), "1f");
  EXPECT_EQ(e.irq_avoid.to_list(), "5-7");
  EXPECT_TRUE(e.managed_irq);
  EXPECT_EQ(e.managed_irq_avoid.to_list(), "5-7");
  EXPECT_EQ(e.workqueue_cpumask.to_list(), "0-4");
  EXPECT_TRUE(e.nohz_full_requested);
  EXPECT_EQ(e.rcu_offload->to_list(), "5-7");
}

TEST(CmdlineAnalyze, K5PlainLine) { check_k5(analyze(kK5)); }

TEST(CmdlineAnalyze, K5AsDmesgLine) {
  const std::string dmesg = std::string("[    0.000000] Linux version 6.1.0-tip\n") +
                            "[    0.000000] Command line: " + kK5 + "\n" +
                            "[    0.000000] x86/fpu: x87 FPU will use FXSAVE\n";
  Analysis a = analyze(dmesg);
  EXPECT_TRUE(a.from_dmesg);
  check_k5(a);
  Analysis b = analyze(std::string("[    0.041000] Kernel command line: ") + kK5 + "\n");
  check_k5(b);
}

TEST(CmdlineAnalyze, K5JsonAndText) {
  nlohmann::json j = to_json(analyze(kK5));
  EXPECT_EQ(j["vcpus"], 8);
  EXPECT_EQ(j["isolated"], "5-7");
  EXPECT_EQ(j["dropped"].size(), 10u);
  EXPECT_EQ(j["dropped"][0]["param"], "BOOT_IMAGE=(hd0,msdos1)/vmlinuz-tip");
  EXPECT_NE(to_text(analyze(kK5)).find("isolated:      5-7"), std::string::npos);
}

TEST(CmdlineAnalyze, K4GeneratedLine) {
  Analysis a = analyze(
      "isolcpus=nohz,domain,managed_irq,3 nohz_full=3 mitigations=off intel_pstate=disable "
      "intel_idle.max_cstate=0 processor.max_cstate=0 nosoftlockup mce=ignore_ce audit=0 "
      "tsc=nowatchdog");
  EXPECT_EQ(a.vcpus, 4u);
  EXPECT_EQ(a.housekeeping.to_list(), "0-2");
  EXPECT_EQ(a.isolated.to_list(), "3");
  EXPECT_EQ(a.nohz_full.to_list(), "3");
  for (const char* k : {"mitigations=off", "nosoftlockup", "tsc=nowatchdog", "audit=0"})
    EXPECT_NE(std::find(a.kept.begin(), a.kept.end(), k), a.kept.end()) << k;
  ASSERT_EQ(a.dropped.size(), 3u);
  EXPECT_EQ(a.dropped[0].param, "intel_pstate=disable");
  EXPECT_EQ(a.dropped[1].param, "intel_idle.max_cstate=0");
  EXPECT_EQ(a.dropped[2].param, "processor.max_cstate=0");
  for (const auto& d : a.dropped) EXPECT_NE(d.reason.find("emulated guest"), std::string::npos);
  // isolcpus=nohz then nohz_full= on the same CPUs: no "must match" complaint.
  EXPECT_FALSE(has_message(a, "Housekeeping: nohz_full= must match isolcpus="));
}

TEST(CmdlineAnalyze, K3SysfsSemantics) {
  Analysis a = analyze("isolcpus=managed_irq,domain,2-47");
  EXPECT_EQ(a.vcpus, 48u);
  EXPECT_EQ(a.isolated.to_list(), "2-47");
  EXPECT_EQ(analyze("isolcpus=2-47").isolated.to_list(), "2-47");
  Analysis n = analyze("nohz_full=2-47");
  EXPECT_EQ(n.isolated.to_list(), "");
  EXPECT_EQ(n.nohz_full.to_list(), "2-47");
  Analysis in = analyze("isolcpus=nohz,2-47");
  EXPECT_EQ(in.isolated.to_list(), "");
  EXPECT_EQ(in.nohz_full.to_list(), "2-47");
  EXPECT_EQ(in.isolcpus_flags, std::vector<std::string>{"nohz"});
}

TEST(CmdlineAnalyze, K3UnknownAndInvalidFlags) {
  Analysis a = analyze("isolcpus=foo,1-3");
  EXPECT_TRUE(has_message(a, "isolcpus: Skipped unknown flag foo"));
  EXPECT_EQ(a.isolated.to_list(), "1-3");
  Analysis b = analyze("isolcpus=fo0,1-3");
  EXPECT_TRUE(has_message(b, "isolcpus: Invalid flag fo0"));
  EXPECT_EQ(b.isolated.to_list(), "");
  EXPECT_TRUE(has_warning(b, "rejects the parameter"));
}

// Q2 of the public cases: a libvirt cpuset's '^' exclusion is not kernel cpulist grammar; the
// kernel rejects the whole isolcpus= (also with U+02C6 for '^', as a translated guide prints it).
TEST(CmdlineAnalyze, Q2LibvirtExclusionIsNotACpulist) {
  for (const char* line : {"isolcpus=1-4,^2",
                           "isolcpus=1-4,\xcb\x86"
                           "2"}) {
    SCOPED_TRACE(line);
    Analysis a = analyze(line);
    EXPECT_EQ(a.isolated.to_list(), "");
    EXPECT_TRUE(has_message(a, "Housekeeping: nohz_full= or isolcpus= incorrect CPU range"));
  }
}

TEST(CmdlineAnalyze, K2CpusThatDoNotExist61) {
  // 6.1 parses CPU lists with nr_cpu_ids bits: 2-15 on 6 possible CPUs is ERANGE and the
  // whole parameter is ignored (rcu_nocbs= then offloads all CPUs).
  AnalyzeOptions o;
  o.vcpus = 6;
  Analysis a = analyze("nohz_full=2-15 rcu_nocbs=2-15", o);
  EXPECT_EQ(a.nohz_full.to_list(), "");
  EXPECT_TRUE(has_message(a, "Housekeeping: nohz_full= or isolcpus= incorrect CPU range"));
  EXPECT_TRUE(has_message(a, "rcu_nocbs= bad CPU range, all CPUs set"));
  EXPECT_EQ(a.rcu_nocbs.to_list(), "0-5");
  EXPECT_TRUE(has_warning(a, "vCPU override 6 is smaller"));
  // `N` is the last possible CPU.
  Analysis n = analyze("nohz_full=2-N rcu_nocbs=2-N", o);
  EXPECT_EQ(n.nohz_full.to_list(), "2-5");
  EXPECT_EQ(n.rcu_nocbs.to_list(), "2-5");
  EXPECT_TRUE(has_message(n, "rcu: \tOffload RCU callbacks from CPUs: 2-5."));
}

TEST(CmdlineAnalyze, K2CpusThatDoNotExist515) {
  AnalyzeOptions o;
  o.vcpus = 6;
  o.kernel.nr_cpus_config = 64;  // the kernel of docs/sources.md [k2]
  o.kernel.major = 5;
  o.kernel.minor = 15;
  Analysis a = analyze("nohz_full=2-15 rcu_nocbs=2-15", o);
  EXPECT_EQ(a.nohz_full.to_list(), "2-5");
  EXPECT_EQ(a.rcu_nocbs.to_list(), "2-5");
  Analysis same = analyze("nohz_full=2-5 rcu_nocbs=2-5", o);
  EXPECT_EQ(same.nohz_full.to_list(), "2-5");
  EXPECT_TRUE(has_message(same, "NO_HZ: Full dynticks CPUs: 2-5."));
  // N is NR_CPUS-1 (63) at parse time on these kernels, trimmed to 2-5.
  EXPECT_EQ(analyze("nohz_full=2-N", o).nohz_full.to_list(), "2-5");
  o.kernel.minor = 10;
  Analysis old = analyze("nohz_full=2-15 rcu_nocbs=2-15", o);
  EXPECT_EQ(old.nohz_full.to_list(), "");
  EXPECT_TRUE(has_message(old, "Housekeeping: nohz_full= or isolcpus= incorrect CPU range"));
}

TEST(CmdlineAnalyze, O4KernelWithoutNoHzFull) {
  AnalyzeOptions o;
  o.kernel.no_hz_full = false;
  Analysis a = analyze("nohz_full=2-3", o);
  EXPECT_TRUE(has_message(a, "Housekeeping: nohz unsupported. Build with CONFIG_NO_HZ_FULL"));
  EXPECT_EQ(a.nohz_full.to_list(), "");
  EXPECT_EQ(a.vcpus, 4u);
}

TEST(CmdlineAnalyze, DeveloperWarnings) {
  EXPECT_TRUE(has_warning(analyze("nohz_full=0-3 rcu_nocbs=0-3 nr_cpus=8"), "boot CPU 0"));
  EXPECT_TRUE(has_warning(analyze("isolcpus=2-3 irqaffinity=0-2"), "overlap"));
  EXPECT_TRUE(has_warning(analyze("nohz_full=1-3"), "nohz_full without rcu_nocbs"));
  EXPECT_EQ(analyze("nohz_full=1-3").rcu_nocbs.to_list(), "1-3");
  EXPECT_TRUE(has_warning(analyze("nohz=off nohz_full=1-3 rcu_nocbs=1-3"), "nohz=off"));
  // All CPUs isolated: the kernel keeps the boot CPU as housekeeping.
  Analysis all = analyze("isolcpus=0-3");
  EXPECT_EQ(all.isolated.to_list(), "1-3");
  EXPECT_TRUE(has_message(all, "Housekeeping: must include one present CPU, using boot CPU:0"));
  // nr_cpus= below the CPUs the lists name.
  Analysis nr = analyze("isolcpus=4-7 nr_cpus=4");
  EXPECT_EQ(nr.possible, 4u);
  EXPECT_TRUE(has_message(nr, "Housekeeping: nohz_full= or isolcpus= incorrect CPU range"));
  Analysis mc = analyze("isolcpus=4-7 maxcpus=2");
  EXPECT_EQ(mc.online, 2u);
  EXPECT_TRUE(has_warning(mc, "only 2 of 8 vCPUs"));
  // irqaffinity always gets the boot CPU.
  EXPECT_EQ(analyze("isolcpus=0,4-7 irqaffinity=1-3").irqaffinity.to_list(), "0-3");
  // Mismatching second call is ignored by the kernel.
  Analysis mm = analyze("isolcpus=nohz,domain,2-3 nohz_full=1-3");
  EXPECT_TRUE(has_message(mm, "Housekeeping: nohz_full= must match isolcpus="));
  EXPECT_EQ(mm.nohz_full.to_list(), "2-3");
}

TEST(CmdlineAnalyze, UnknownKeptWithWarningAndDashesDropped) {
  Analysis a = analyze("frobnicate=1 isolcpus=1 -- single");
  EXPECT_EQ(a.kept, (std::vector<std::string>{"frobnicate=1", "isolcpus=1"}));
  EXPECT_TRUE(has_warning(a, "unknown parameter 'frobnicate=1'"));
  ASSERT_EQ(a.dropped.size(), 1u);
  EXPECT_EQ(a.dropped[0].param, "single");
  EXPECT_EQ(a.vcpus, 2u);
}

TEST(CmdlineAnalyze, TableLookup) {
  EXPECT_EQ(find_rule("rd.lvm.lv")->action, ParamAction::kDropped);
  EXPECT_EQ(find_rule("rcutree.kthread_prio")->action, ParamAction::kKept);
  EXPECT_EQ(find_rule("console")->action, ParamAction::kReplaced);
  EXPECT_EQ(find_rule("rd"), nullptr);
  EXPECT_EQ(find_rule("intel_idle.max_cstate")->action, ParamAction::kDropped);
}

TEST(CmdlineAnalyze, BadInputGetsClearMessages) {
  // Unbalanced quotes are tolerated, as by the kernel.
  Analysis q = analyze("isolcpus=\"1-3 nohz_full=1-3");
  EXPECT_EQ(q.isolated.to_list(), "");  // the value "1-3 nohz_full=1-3" is not a CPU list
  EXPECT_TRUE(has_warning(q, "EINVAL"));
  Analysis r = analyze("isolcpus=10-1");
  EXPECT_TRUE(has_warning(r, "'10-1'"));
  EXPECT_TRUE(has_warning(r, "EINVAL"));
  Analysis g = analyze("isolcpus=0-31:0/0");
  EXPECT_TRUE(has_warning(g, "'0-31:0/0'"));
  std::string longline;
  while (longline.size() < 10000) longline += "skew_tick=1 ";
  // Past byte 2047: the kernel never sees isolcpus=3 (docs/sources.md [k6]).
  Analysis l = analyze(longline + "isolcpus=3");
  EXPECT_EQ(l.isolated.to_list(), "");
  EXPECT_TRUE(has_warning(l, "COMMAND_LINE_SIZE"));
  EXPECT_NE(reason_of(l.dropped, "isolcpus=3").find("past the cut"), std::string::npos);
  try {
    analyze(std::string("isolcpus=1\x02\x03", 12));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("0x02"), std::string::npos);
  }
  EXPECT_THROW(analyze("[    0.000000] Linux version 6.1\n[    0.1] foo\n"), Error);
  AnalyzeOptions zero;
  zero.vcpus = 0;
  EXPECT_THROW(analyze("isolcpus=1", zero), Error);
}

// The derived guest is one on which every list the customer's kernel accepted still
// parses and means the same. Each expected set below is what Linux 6.1 computes for the line on
// a machine with that many possible CPUs (bitmap_parselist + housekeeping_setup).
TEST(CmdlineAnalyze, RangeEndBeyondTheLastMemberCounts) {
  Analysis a = analyze("isolcpus=0-15:2/4 nohz_full=0-15:2/4");
  EXPECT_EQ(a.vcpus, 16u);
  EXPECT_EQ(a.vcpus_needed, 16u);
  EXPECT_EQ(a.nr_cpus_required, 16u);
  EXPECT_EQ(a.possible, 16u);
  EXPECT_EQ(a.isolated.to_list(), "0-1,4-5,8-9,12-13");
  EXPECT_EQ(a.nohz_full.to_list(), "0-1,4-5,8-9,12-13");
  EXPECT_EQ(a.rcu_nocbs.to_list(), "0-1,4-5,8-9,12-13");
  EXPECT_EQ(a.housekeeping.to_list(), "2-3,6-7,10-11,14-15");
  EXPECT_FALSE(has_warning(a, "ERANGE"));
  EXPECT_TRUE(has_message(a, "NO_HZ: Full dynticks CPUs: 0-1,4-5,8-9,12-13."));
  EXPECT_NE(a.vcpus_reason.find("'isolcpus=0-15:2/4' has a range ending at CPU 15"),
            std::string::npos)
      << a.vcpus_reason;
  // The same line on 14 CPUs (what the old derivation chose) is rejected whole by the kernel.
  AnalyzeOptions o;
  o.vcpus = 14;
  Analysis small = analyze("isolcpus=0-15:2/4 nohz_full=0-15:2/4", o);
  EXPECT_EQ(small.isolated.to_list(), "");
  EXPECT_TRUE(has_message(small, "Housekeeping: nohz_full= or isolcpus= incorrect CPU range"));
}

TEST(CmdlineAnalyze, GroupPatterns) {
  Analysis a = analyze("isolcpus=2-23:2/4 nohz_full=2-23:2/4 rcu_nocbs=2-23:2/4");
  EXPECT_EQ(a.vcpus, 24u);
  EXPECT_EQ(a.isolated.to_list(), "2-3,6-7,10-11,14-15,18-19,22-23");
  EXPECT_EQ(a.housekeeping.to_list(), "0-1,4-5,8-9,12-13,16-17,20-21");
  EXPECT_EQ(a.rcu_nocbs.to_list(), "2-3,6-7,10-11,14-15,18-19,22-23");
  // kernel-parameters.rst's example: 0-1023:2/256 needs 1024 CPUs: capped, and then rejected.
  Analysis big = analyze("nohz_full=0-1023:2/256 rcu_nocbs=1-3");
  EXPECT_EQ(big.vcpus_needed, 1024u);
  EXPECT_EQ(big.vcpus, kMaxGuestVcpus);
  EXPECT_EQ(big.nohz_full.to_list(), "");
  EXPECT_TRUE(has_warning(big, "QEMU 7.2 boots at most 255 vCPUs"));
}

TEST(CmdlineAnalyze, NTakesTheCountFromTheOtherLists) {
  Analysis a = analyze("isolcpus=2-N nohz_full=2-N rcu_nocbs=4-7");
  EXPECT_EQ(a.vcpus, 8u);
  EXPECT_EQ(a.isolated.to_list(), "2-7");
  EXPECT_EQ(a.nohz_full.to_list(), "2-7");
  EXPECT_EQ(a.rcu_nocbs.to_list(), "2-7");  // rcu_nocbs= | nohz_full
  EXPECT_EQ(a.housekeeping.to_list(), "0-1");
  EXPECT_NE(a.vcpus_reason.find("N/all"), std::string::npos) << a.vcpus_reason;
  // 2-N alone needs N >= 2: three CPUs, the third isolated.
  Analysis alone = analyze("nohz_full=2-N");
  EXPECT_EQ(alone.vcpus, 3u);
  EXPECT_EQ(alone.nohz_full.to_list(), "2");
  // Only N: the line does not give the customer's CPU count.
  Analysis n = analyze("nohz_full=N isolcpus=N");
  EXPECT_TRUE(n.cpu_count_unknown);
  EXPECT_EQ(n.vcpus, 1u);
  EXPECT_TRUE(has_warning(n, "the line does not say how many"));
}

TEST(CmdlineAnalyze, AllWithAGroupPattern) {
  // all:1/2 = every even CPU of however many exist; irqaffinity names CPU 7, so 8 CPUs.
  Analysis a = analyze("nohz_full=all:1/2 rcu_nocbs=all:1/2 irqaffinity=1,3,5,7");
  EXPECT_EQ(a.vcpus, 8u);
  EXPECT_EQ(a.nohz_full.to_list(), "0,2,4,6");
  EXPECT_EQ(a.rcu_nocbs.to_list(), "0,2,4,6");
  EXPECT_EQ(a.isolated.to_list(), "");  // nohz_full= does not set domain isolation
  EXPECT_EQ(a.housekeeping.to_list(), "1,3,5,7");
  EXPECT_EQ(a.irqaffinity.to_list(), "0-1,3,5,7");  // the boot CPU is always added
  Analysis unknown = analyze("nohz_full=all:1/2");
  EXPECT_TRUE(unknown.cpu_count_unknown);
  AnalyzeOptions o;
  o.vcpus = 6;
  Analysis six = analyze("nohz_full=all:1/2", o);
  EXPECT_EQ(six.nohz_full.to_list(), "0,2,4");
  EXPECT_FALSE(six.cpu_count_unknown);
  // In isolcpus= a leading word is a flag (housekeeping_isolcpus_setup()): "all:1/2" has a
  // character other than letters and '_', so 6.1 rejects the parameter.
  Analysis iso = analyze("isolcpus=all:1/2 irqaffinity=1,3,5,7");
  EXPECT_EQ(iso.isolated.to_list(), "");
  EXPECT_TRUE(has_message(iso, "isolcpus: Invalid flag all:1/2"));
}

TEST(CmdlineAnalyze, ACpuNoMachineBootsIsCappedWithAMessage) {
  Analysis a = analyze("isolcpus=100-2000:2/25");
  EXPECT_EQ(a.vcpus_needed, 2001u);
  EXPECT_EQ(a.vcpus, 255u);
  EXPECT_TRUE(has_warning(a, "'isolcpus=100-2000:2/25' has a range ending at CPU 2000"));
  EXPECT_TRUE(has_warning(a, "ERANGE"));  // the 255-CPU guest's kernel rejects the list
  EXPECT_EQ(a.isolated.to_list(), "");
}

// A 96-CPU server's line needs a 96-CPU guest whose kernel has NR_CPUS >= 96.
TEST(CmdlineAnalyze, LargeMachine96Cpus) {
  const std::string l = "2-23,50-71,26-47,74-95";
  Analysis a = analyze("isolcpus=" + l + " nohz_full=" + l + " rcu_nocbs=" + l);
  EXPECT_EQ(a.vcpus, 96u);
  EXPECT_EQ(a.nr_cpus_required, 96u);
  EXPECT_EQ(a.nr_cpus_config, 96u);
  EXPECT_EQ(a.isolated.to_list(), "2-23,26-47,50-71,74-95");
  EXPECT_EQ(a.rcu_nocbs.to_list(), "2-23,26-47,50-71,74-95");
  EXPECT_EQ(a.housekeeping.to_list(), "0-1,24-25,48-49,72-73");
  EXPECT_TRUE(a.warnings.empty() || !has_warning(a, "ERANGE"));
}

// docs/sources.md [k7]: a 40-CPU server. Built for the guest the line means what it meant; with the
// kernel of base.config (NR_CPUS=16) it means something else.
TEST(CmdlineAnalyze, K7FortyCpus) {
  const char* k7 =
      "isolcpus=managed_irq,domain,4-19,24-39 nohz_full=4-19,24-39 rcu_nocbs=4-19,24-39 "
      "irqaffinity=0-3,20-23";
  Analysis a = analyze(k7);
  EXPECT_EQ(a.vcpus, 40u);
  EXPECT_EQ(a.nr_cpus_required, 40u);
  EXPECT_EQ(a.isolated.to_list(), "4-19,24-39");
  EXPECT_EQ(a.nohz_full.to_list(), "4-19,24-39");
  EXPECT_EQ(a.rcu_nocbs.to_list(), "4-19,24-39");
  EXPECT_EQ(a.housekeeping.to_list(), "0-3,20-23");
  EXPECT_EQ(a.irqaffinity.to_list(), "0-3,20-23");
  AnalyzeOptions o;
  o.kernel.nr_cpus_config = 16;
  Analysis k16 = analyze(k7, o);
  EXPECT_EQ(k16.possible, 16u);
  EXPECT_EQ(k16.isolated.to_list(), "");
  EXPECT_EQ(k16.nohz_full.to_list(), "");
  EXPECT_EQ(k16.rcu_nocbs.to_list(), "0-15");  // "rcu_nocbs= bad CPU range, all CPUs set"
  EXPECT_TRUE(has_warning(k16, "CONFIG_NR_CPUS"));
}

// possible_cpus= makes CPUs possible that are not present: the kernel needs NR_CPUS for them.
TEST(CmdlineAnalyze, PossibleCpusRaisesTheNrCpusTheGuestKernelNeeds) {
  Analysis a = analyze("isolcpus=2-7 possible_cpus=24");
  EXPECT_EQ(a.vcpus, 8u);
  EXPECT_EQ(a.nr_cpus_required, 24u);
  EXPECT_EQ(a.possible, 24u);
  // nr_cpus= only lowers nr_cpu_ids: it does not raise the vCPU count.
  Analysis nr = analyze("isolcpus=2-7 nr_cpus=32");
  EXPECT_EQ(nr.vcpus, 8u);
  EXPECT_EQ(nr.nr_cpus_required, 8u);
}

// docs/sources.md [k6]: the kernel keeps 2047 bytes; what lies past the cut is lost.
std::string k6_line(const std::string& tail) {
  std::string l = "BOOT_IMAGE=/vmlinuz-6.1 root=/dev/sda1 ro isolcpus=2-3";
  for (int i = 0; l.size() < 2040; ++i) l += " rd.driver.pre=module" + std::to_string(i);
  l.resize(2040);  // inside the last rd.driver.pre= token
  l += " " + tail;
  return l;
}

TEST(CmdlineAnalyze, K6ParametersPastByte2047AreDropped) {
  std::string l = k6_line("abcdefgh nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1");
  while (l.size() < 2100) l += " rd.x=y";
  ASSERT_GE(l.find("nohz_full=2-3"), 2047u);
  Analysis a = analyze(l);
  EXPECT_TRUE(a.truncated);
  EXPECT_EQ(a.cmdline_bytes, l.size());
  EXPECT_EQ(a.vcpus, 4u);
  EXPECT_EQ(a.isolated.to_list(), "2-3");
  EXPECT_EQ(a.nohz_full.to_list(), "");
  EXPECT_FALSE(a.rcu_offload_active);
  EXPECT_EQ(a.irqaffinity.to_list(), "0-3");
  for (const char* p : {"nohz_full=2-3", "rcu_nocbs=2-3", "irqaffinity=0-1", "rd.x=y"})
    EXPECT_NE(reason_of(a.dropped, p).find("past the cut"), std::string::npos) << p;
  EXPECT_EQ(a.guest_cmdline().find("nohz_full"), std::string::npos);
  EXPECT_TRUE(has_warning(a, "the kernel keeps the first 2047"));
  for (const auto& t : a.tokens) EXPECT_LE(t.offset + t.raw.size(), 2047u) << t.raw;
}

TEST(CmdlineAnalyze, K6ParameterCutInTheMiddleIsSeenAsTheKernelSeesIt) {
  // "nohz_full=2-3" cut after "nohz_full=2-": the kernel sees an invalid list.
  std::string l = "isolcpus=2-3";
  while (l.size() < 2047 - 13) l += " a";
  l.resize(2047 - 13);
  l += " nohz_full=2-3";
  ASSERT_EQ(l.find("nohz_full=2-3") + 12, 2047u);
  Analysis a = analyze(l);
  EXPECT_NE(reason_of(a.dropped, "nohz_full=2-3").find("sees only 'nohz_full=2-'"),
            std::string::npos);
  EXPECT_EQ(a.nohz_full.to_list(), "");
  EXPECT_TRUE(has_warning(a, "EINVAL"));
  // A line of exactly 2047 bytes is kept whole.
  std::string exact = "nohz_full=2-3";
  while (exact.size() < 2047) exact += " a";
  exact.resize(2047);
  EXPECT_FALSE(analyze(exact).truncated);
}

TEST(CmdlineAnalyze, CutMessageForOurOwnLines) {
  std::string l(2047, 'a');
  EXPECT_FALSE(cmdline_cut_message(l, "line").has_value());
  l += " trace_event=irq:irq_handler_entry";
  auto m = cmdline_cut_message(l, "the final guest command line");
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->find("is 2081 bytes"), std::string::npos) << *m;
  EXPECT_NE(m->find("'trace_event=irq:irq_handler_entry'"), std::string::npos) << *m;
}

TEST(CmdlineAnalyze, AMistypedIsolcpusFlagSaysWhatTheKernelDoesAndTheNearestFlag) {
  // 6.1 skips the flag, and with no known flag left isolates the CPUs for domain alone: the
  // managed interrupts asked for are not kept off them.
  const Analysis a = analyze("isolcpus=manged_irq,5-7");
  EXPECT_EQ(a.isolated.to_list(), "5-7");
  EXPECT_EQ(a.isolcpus_flags, std::vector<std::string>{"domain"});
  EXPECT_EQ(a.managed_irq_isolated.to_list(), "");
  EXPECT_TRUE(has_warning(a,
                          "isolcpus=manged_irq,5-7: unknown flag 'manged_irq' is skipped by "
                          "the kernel: the CPUs get only the known flags given, domain alone "
                          "when there is none; did you mean managed_irq?"));
  EXPECT_FALSE(has_warning(analyze("isolcpus=foo,1-3"), "did you mean"));
  EXPECT_EQ(edit_distance("manged_irq", "managed_irq"), 1u);
  EXPECT_EQ(edit_distance("", "nohz"), 4u);
  EXPECT_EQ(nearest_name("domian", {"nohz", "domain", "managed_irq"}), "domain");
}

TEST(CmdlineAnalyze, ALeadingUtf8ByteOrderMarkIsNotPartOfTheFirstParameter) {
  const Analysis a = analyze("\xEF\xBB\xBFisolcpus=5-7 nohz_full=5-7\n", [] {
    AnalyzeOptions o;
    o.vcpus = 8;
    return o;
  }());
  EXPECT_EQ(a.isolated.to_list(), "5-7");
  EXPECT_NE(std::find(a.kept.begin(), a.kept.end(), "isolcpus=5-7"), a.kept.end());
}

}  // namespace
}  // namespace isolab
