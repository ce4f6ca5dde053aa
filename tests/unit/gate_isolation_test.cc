// The in-guest isolation gate: docs/sources.md [o4], [o5], [o6] and [k5].
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "gate/gate.h"

namespace isolab {
namespace {

const GateRow* row(const GateReport& r, std::string_view check) {
  for (const auto& x : r.rows)
    if (x.check == check) return &x;
  return nullptr;
}

std::string interrupts(uint64_t loc0, uint64_t loc1) {
  return "           CPU0       CPU1       \n"
         "  0:         41          0   IO-APIC   2-edge      timer\n"
         "  4:          0        512   IO-APIC   4-edge      ttyS0\n"
         "NMI:          0          0   Non-maskable interrupts\n"
         "LOC:     " +
         std::to_string(loc0) + "     " + std::to_string(loc1) +
         "   Local timer interrupts\n"
         "ERR:          0\n"
         "MIS:          0\n";
}

// [o6]: 2 vCPUs, nohz_full=1 isolcpus=1 under TCG; TSC unstable, tick stops on CPU 1.
std::map<std::string, std::string> o6_records(uint64_t cpu1_after) {
  return {
      {"cmdline", "console=ttyS0 panic=-1 nohz_full=1 isolcpus=1\n"},
      {"uname_r", "6.1.0\n"},
      {"cpu_online", "0-1\n"},
      {"cpu_possible", "0-1\n"},
      {"isolated", "1\n"},
      {"nohz_full", "1\n"},
      {"dmesg",
       "[    0.000000] Command line: console=ttyS0 panic=-1 nohz_full=1 isolcpus=1\n"
       "[    0.010000] NO_HZ: Full dynticks CPUs: 1.\n"
       "[    0.011000] rcu: \tOffload RCU callbacks from CPUs: 1.\n"
       "[    0.500000] tsc: Marking TSC unstable due to TSCs unsynchronized\n"
       "[    1.200000] clocksource: Switched to clocksource hpet\n"},
      {"irq_affinity", "0 0\n4 0\n"},
      {"default_smp_affinity", "3\n"},
      {"workqueue_cpumask", "1\n"},
      {"interrupts_before", interrupts(1000, 200)},
      {"interrupts_after", interrupts(1750, cpu1_after)},
      {"busy_window_s", "3\n"},
  };
}

ExpectedIsolation o6_expected() { return expected_isolation(analyze("nohz_full=1 isolcpus=1")); }

TEST(CmdlineGate, O6ClockUnstableButTickStoppedPasses) {
  GuestFacts f = parse_guest_facts(o6_records(201));
  EXPECT_TRUE(f.problems.empty()) << f.problems.front();
  EXPECT_TRUE(f.clock.tsc_unstable);
  EXPECT_EQ(f.clock.clocksource, "hpet");
  GateReport r = evaluate_gate(o6_expected(), f);
  EXPECT_TRUE(r.pass) << to_text(r);
  EXPECT_EQ(r.reason, "PASS");
  const GateRow* tick = row(r, "tick stopped");
  ASSERT_NE(tick, nullptr);
  EXPECT_TRUE(tick->pass);
  EXPECT_EQ(tick->effective, "CPU1 0.3/s");
  EXPECT_NE(tick->detail.find("housekeeping reference 250.0/s"), std::string::npos);
  EXPECT_NE(tick->detail.find("TSC unstable"), std::string::npos);
  const GateRow* clock = row(r, "clock");
  EXPECT_TRUE(clock->pass);
  EXPECT_TRUE(clock->warning);
}

TEST(CmdlineGate, O6TickNotStoppedFailsOnClockGrounds) {
  GateReport r = evaluate_gate(o6_expected(), parse_guest_facts(o6_records(200 + 750)));
  EXPECT_FALSE(r.pass);
  EXPECT_FALSE(row(r, "tick stopped")->pass);
  EXPECT_EQ(row(r, "tick stopped")->effective, "CPU1 250.0/s");
  EXPECT_FALSE(row(r, "clock")->pass);
  EXPECT_NE(r.reason.find("tick did not stop on CPU1"), std::string::npos) << r.reason;
}

TEST(CmdlineGate, O5OneCpuOnlineOfEightFails) {
  const char* line = "isolcpus=managed_irq,domain,5,6,7 nohz_full=5,6,7 rcu_nocbs=5,6,7";
  ExpectedIsolation e = expected_isolation(analyze(line));
  GuestFacts f = parse_guest_facts({{"cmdline", line},
                                    {"cpu_online", "0\n"},
                                    {"isolated", "\n"},
                                    {"nohz_full", "\n"},
                                    {"dmesg", "[    0.000000] Command line: x\n"}});
  GateReport r = evaluate_gate(e, f);
  EXPECT_FALSE(r.pass);
  const GateRow* online = row(r, "online CPUs");
  EXPECT_FALSE(online->pass);
  EXPECT_EQ(online->expected, "0-7 (8)");
  EXPECT_EQ(online->effective, "0 (1)");
  EXPECT_EQ(r.reason.rfind("FAIL: online CPUs: the guest saw 1 CPUs online of 8", 0), 0u)
      << r.reason;
  EXPECT_FALSE(row(r, "nohz_full")->pass);
  EXPECT_FALSE(row(r, "isolated (isolcpus domain)")->pass);
}

TEST(CmdlineGate, O4NoHzFullMissing) {
  const char* line = "nohz_full=2-3";
  ExpectedIsolation e = expected_isolation(analyze(line));
  GuestFacts f = parse_guest_facts(
      {{"cmdline", line},
       {"cpu_online", "0-3"},
       {"isolated", ""},
       {"dmesg", "[    0.020000] Housekeeping: nohz unsupported. Build with CONFIG_NO_HZ_FULL\n"}});
  GateReport r = evaluate_gate(e, f);
  EXPECT_FALSE(r.pass);
  EXPECT_NE(row(r, "nohz_full")->detail.find("CONFIG_NO_HZ_FULL"), std::string::npos);
  ASSERT_NE(row(r, "CONFIG_NO_HZ_FULL"), nullptr);
  EXPECT_FALSE(row(r, "CONFIG_NO_HZ_FULL")->pass);
  EXPECT_NE(r.reason.find("CONFIG_NO_HZ_FULL"), std::string::npos);
}

TEST(CmdlineGate, MissingParamAndIrqWarning) {
  ExpectedIsolation e = o6_expected();
  auto rec = o6_records(201);
  rec["cmdline"] = "console=ttyS0 nohz_full=1";
  rec["irq_affinity"] = "0 0\n24 1\n";
  GateReport r = evaluate_gate(e, parse_guest_facts(rec));
  EXPECT_FALSE(r.pass);
  EXPECT_NE(row(r, "cmdline")->detail.find("isolcpus=1"), std::string::npos);
  const GateRow* irq = row(r, "irq effective affinity");
  EXPECT_TRUE(irq->pass);
  EXPECT_TRUE(irq->warning);
  EXPECT_EQ(irq->effective, "24->1");
}

TEST(CmdlineGate, UntrustedRecordsBecomeProblemsNotCrashes) {
  auto rec = o6_records(201);
  rec["cpu_online"] = std::string("\x01\xff garbage", 10);
  rec["interrupts_after"] = "no header here\n";
  rec["busy_window_s"] = "nan";
  rec["default_smp_affinity"] = "zz";
  GuestFacts f = parse_guest_facts(rec);
  EXPECT_EQ(f.problems.size(), 4u);
  GateReport r = evaluate_gate(o6_expected(), f);
  EXPECT_FALSE(r.pass);
  EXPECT_FALSE(row(r, "guest records")->pass);
  EXPECT_NE(row(r, "guest records")->detail.find("busy_window_s"), std::string::npos);
  nlohmann::json j = to_json(r);
  EXPECT_EQ(j["pass"], false);
}

// The rows come in the documented order (gate.h), one per check.
TEST(CmdlineGate, RowsInCheckOrder) {
  GateReport r = evaluate_gate(o6_expected(), parse_guest_facts(o6_records(201)));
  std::vector<std::string> checks;
  for (const auto& x : r.rows) checks.push_back(x.check);
  EXPECT_EQ(checks, (std::vector<std::string>{
                        "cmdline", "online CPUs", "isolated (isolcpus domain)", "nohz_full",
                        "RCU offload", "irq default affinity", "irq effective affinity",
                        "workqueue cpumask", "dmesg isolation messages", "tick stopped", "clock"}));
}

// The reason names the first three failed rows only, in row order.
TEST(CmdlineGate, ReasonNamesFirstThreeFailures) {
  auto rec = o6_records(950);
  rec.erase("cpu_online");  // guest records, online CPUs
  rec["isolated"] = "0\n";
  GateReport r = evaluate_gate(o6_expected(), parse_guest_facts(rec));
  EXPECT_EQ(r.reason,
            "FAIL: guest records: cpu_online: missing; online CPUs: no "
            "/sys/devices/system/cpu/online record; isolated (isolcpus domain): "
            "/sys/devices/system/cpu/isolated differs");
  EXPECT_FALSE(row(r, "tick stopped")->pass);  // a fourth failure, not named
}

// The dmesg lines the clock and RCU facts come from, in the forms the kernel prints them:
// kernel/time/clocksource.c (watchdog), kernel/sched/clock.c (sched_clock), rcu "(none)".
TEST(CmdlineGate, DmesgClockAndRcuLines) {
  const std::string watchdog =
      "clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because "
      "the skew is too large:";
  GuestFacts f = parse_guest_facts(
      {{"dmesg",
        "[    0.000000] rcu: \tOffload RCU callbacks from CPUs: (none).\n"
        "[    0.300000] sched_clock: Marking stable (300000000, 0)->(300100000, -100000)\n"
        "[    2.100000] " +
            watchdog +
            "\n"
            "[    2.200000] sched_clock: Marking unstable (2200000000, 1)<-(2200000001, 0)\n"
            "[    2.300000] clocksource: Switched to clocksource hpet\n"}});
  EXPECT_EQ(f.problems, (std::vector<std::string>{"cmdline: missing", "cpu_online: missing",
                                                  "isolated: missing"}));
  ASSERT_TRUE(f.rcu_offload.has_value());
  EXPECT_TRUE(f.rcu_offload->empty());
  EXPECT_EQ(f.clock.summary(),
            "clocksource hpet; TSC unstable; sched_clock unstable; sched_clock stable");
  ASSERT_EQ(f.clock.lines.size(), 4u);  // the clock lines, timestamps stripped, in dmesg order
  EXPECT_EQ(f.clock.lines[1], watchdog);
  EXPECT_EQ(f.clock.lines[3], "clocksource: Switched to clocksource hpet");

  GuestFacts bad = parse_guest_facts({{"dmesg", "rcu: Offload RCU callbacks from CPUs: 1-x.\n"}});
  EXPECT_FALSE(bad.rcu_offload.has_value());
  ASSERT_EQ(bad.problems.size(), 4u);
  EXPECT_EQ(bad.problems[3].rfind("dmesg: RCU offload line: cpulist '1-x'", 0), 0u)
      << bad.problems[3];
}

TEST(CmdlineGate, ProcInterruptsWithOfflineColumns) {
  InterruptsSnapshot s = parse_proc_interrupts(
      "           CPU0       CPU2\n"
      " 24:          1          2   PCI-MSI 65536-edge      virtio0-config\n"
      "LOC:        100        3   Local timer interrupts\n"
      "ERR:          0\n");
  EXPECT_EQ(s.cpus, (std::vector<unsigned>{0, 2}));
  const InterruptRow* loc = s.find("LOC");
  ASSERT_NE(loc, nullptr);
  EXPECT_EQ(loc->counts.at(2), 3u);
  EXPECT_EQ(loc->description, "Local timer interrupts");
  EXPECT_TRUE(s.find("ERR")->counts.empty());  // system-wide, not CPU 0's
  EXPECT_EQ(s.find("ERR")->total, 0u);
  EXPECT_EQ(s.find("24")->description, "PCI-MSI 65536-edge      virtio0-config");
}

std::string interrupts_file(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/interrupts/" + name);
}

// [n2] (tests/data/interrupts/README.md): arm64 labels without a space, device names with
// colons and spaces, a one-value Err row, no LOC row.
TEST(CmdlineGate, ProcInterruptsArm64Layout) {
  InterruptsSnapshot s = parse_proc_interrupts(interrupts_file("arm64-ipi-no-loc.txt"));
  EXPECT_EQ(s.cpus, (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_EQ(s.malformed_rows, 0u);
  EXPECT_EQ(s.rows.size(), 7u);
  const InterruptRow* ipi0 = s.find("IPI0");
  ASSERT_NE(ipi0, nullptr);
  EXPECT_EQ(ipi0->counts.at(0), 2768808080u);
  EXPECT_EQ(ipi0->counts.at(1), 2844211768u);
  EXPECT_EQ(ipi0->counts.at(3), 123456u);
  EXPECT_EQ(ipi0->description, "Rescheduling interrupts");
  EXPECT_EQ(s.find("47")->description, "GICv3  78 Edge      ehci_hcd:usb1, mmc0");
  EXPECT_EQ(s.find("52")->description, "ITS-MSI 524288 Edge      ena-mgmnt@pci:0000:00:05.0");
  EXPECT_EQ(s.find("52")->counts.at(0), 5u);
  EXPECT_EQ(s.find("Err")->total, 0u);
  EXPECT_TRUE(s.find("Err")->counts.empty());
  EXPECT_EQ(s.find("LOC"), nullptr);
  EXPECT_EQ(s.find("11")->counts.at(2), 87654u);  // arch_timer: the arm64 local timer
}

// [n2]: offline CPUs leave gaps in the header; counts beyond 2^32-1 are kept as 64 bits.
TEST(CmdlineGate, ProcInterruptsOfflineCpusAndBigCounters) {
  InterruptsSnapshot s = parse_proc_interrupts(interrupts_file("x86-offline-cpus.txt"));
  EXPECT_EQ(s.cpus, (std::vector<unsigned>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 20, 21}));
  const InterruptRow* loc = s.find("LOC");
  ASSERT_NE(loc, nullptr);
  EXPECT_EQ(loc->counts.at(9), 501u);
  EXPECT_EQ(loc->counts.at(20), 3600000000u);
  EXPECT_EQ(loc->counts.at(21), 5000000000u);
  EXPECT_EQ(loc->counts.count(10), 0u);
  EXPECT_EQ(s.find("24")->counts.at(20), 7u);
  EXPECT_EQ(s.find("25")->description, "PCI-MSI 65537-edge      nvme0q1:queue, admin");
  EXPECT_EQ(s.find("ERR")->total, 3u);
  EXPECT_EQ(s.find("MIS")->total, 0u);
  EXPECT_EQ(s.malformed_rows, 0u);
}

TEST(CmdlineGate, ProcInterruptsMalformedRowsAndHeaders) {
  InterruptsSnapshot s = parse_proc_interrupts(
      "\n           CPU0       CPU1       CPU2\n"
      "LOC:          1          2   Local timer interrupts\n"  // two of three counts
      "no colon here\n"
      "bad name:     1          2          3\n"
      "RES:          1          2          3   Rescheduling interrupts\n"
      "ERR:          7\n");
  EXPECT_EQ(s.malformed_rows, 3u);
  EXPECT_EQ(s.find("LOC"), nullptr);
  EXPECT_EQ(s.find("RES")->counts.at(2), 3u);
  EXPECT_EQ(s.find("ERR")->total, 7u);
  // One online CPU: a single value is that CPU's count, except for the system-wide rows.
  InterruptsSnapshot one = parse_proc_interrupts("   CPU0\nLOC: 55 Local\nERR: 1\n");
  EXPECT_EQ(one.find("LOC")->counts.at(0), 55u);
  EXPECT_EQ(one.find("ERR")->total, 1u);
  auto throws_with = [](const char* text, const char* part) {
    try {
      parse_proc_interrupts(text);
      ADD_FAILURE() << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  throws_with("", "no header");
  throws_with("LOC: 1 2\n", "line 1: expected a header");
  throws_with("\n  CPU0 CPU0\n", "line 2: CPU column 'CPU0' repeated");
  throws_with("  CPU0 CPU9000\n", "bad CPU column 'CPU9000'");
}

// A real guest capture (tests/data/guest/README.md).
TEST(CmdlineGate, RealGuestDmesg) {
  const std::filesystem::path p =
      std::filesystem::path(ISOLAB_TEST_DATA_DIR) / "guest" / "dmesg-isolation-6.1.txt";
  ASSERT_TRUE(std::filesystem::exists(p)) << p;
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  Analysis a = analyze(ss.str());
  EXPECT_TRUE(a.from_dmesg);
  GuestFacts f = parse_guest_facts({{"dmesg", ss.str()}});
  if (a.rcu_offload_active) {
    ASSERT_TRUE(f.rcu_offload.has_value());
    EXPECT_EQ(*f.rcu_offload, a.rcu_nocbs);
  }
}

}  // namespace
}  // namespace isolab

namespace isolab {
namespace {

// Real capture (tests/data/guest/irq-affinity.txt, 6.1 guest under TCG): IRQ 2 (the cascade)
// has an empty effective_affinity_list; that is a fact, not a malformed record.
TEST(CmdlineGate, RealIrqAffinityWithEmptyListParses) {
  std::map<std::string, std::string> rec = {
      {"irq_affinity", read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/guest/irq-affinity.txt")}};
  GuestFacts f = parse_guest_facts(rec);
  for (const auto& p : f.problems) EXPECT_EQ(p.find("irq_affinity"), std::string::npos) << p;
  ASSERT_GT(f.irq_affinity.size(), 3u);
}

}  // namespace
}  // namespace isolab
