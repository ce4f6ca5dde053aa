// parse/insn_count.h on real output of tcg-plugin/insn-count.c (tests/data/insn-count/, made
// from tcg-plugin/test-guest.S, whose comment derives every count asserted here) and on
// hostile, truncated and overflowing input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "base/files.h"
#include "parse/insn_count.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::string data(const std::string& name) {
  return read_file(std::string(ISOLAB_TEST_DATA_DIR) + "/insn-count/" + name);
}

const InsnStep& step(const InsnCountFile& f, std::uint64_t seq) {
  const InsnStep* s = find_insn_step(f, seq);
  EXPECT_NE(s, nullptr) << "step " << seq;
  static const InsnStep none;
  return s ? *s : none;
}

// -smp 2 (vCPU 1 halted), profile_cpus=0-1.
TEST(InsnCount, RealTestGuestOutputOnTwoVcpus) {
  InsnCountFile f = parse_insn_count(data("test-guest-smp2.txt"));
  EXPECT_EQ(f.version, 1);
  EXPECT_EQ(f.plugin_api, 1);
  EXPECT_LE(f.qemu_api_min, 1);
  EXPECT_GE(f.qemu_api_max, 1);
  EXPECT_EQ(f.vcpus, 2u);
  EXPECT_EQ(f.profile_cpus, "0-1");
  EXPECT_EQ(f.profile_top, 2000u);
  EXPECT_TRUE(f.complete);
  EXPECT_EQ(f.truncation, "");
  EXPECT_TRUE(f.exited);
  EXPECT_EQ(f.stray_step_ends, 0u);
  ASSERT_EQ(f.steps.size(), 2u);
  ASSERT_EQ(f.exit_counts.size(), 2u);

  // Step 1, 32-bit: 3005 instructions on vCPU 0, none on the halted vCPU 1.
  EXPECT_EQ(insn_step_deltas(step(f, 1)), (std::vector<InsnCounts>{{3005, 0}, {0, 0}}));
  InsnPerOperation op1 = insn_per_operation(step(f, 1), 0, 1);
  EXPECT_TRUE(op1.valid) << op1.reason;
  EXPECT_EQ(op1.regions, 1u);
  EXPECT_EQ(op1.user, 3003);
  EXPECT_EQ(op1.kernel, 0);
  EXPECT_EQ(op1.total, 3003);
  EXPECT_TRUE(insn_step_profile(step(f, 1), 0).empty());

  // Step 2, long mode with a call into the kernel alias.
  EXPECT_EQ(insn_step_deltas(step(f, 2)), (std::vector<InsnCounts>{{8, 1502}, {0, 0}}));
  InsnPerOperation op2 = insn_per_operation(step(f, 2), 0);
  EXPECT_TRUE(op2.valid) << op2.reason;
  EXPECT_EQ(op2.user, 6);
  EXPECT_EQ(op2.kernel, 1502);
  EXPECT_EQ(op2.total, 1508);
  std::vector<InsnProfileEntry> p = insn_step_profile(step(f, 2), 0);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].insns, 1497u);                         // the loop's block
  EXPECT_EQ(p[1].insns, 4u);                            // the function's first block
  EXPECT_EQ(p[2].insns, 1u);                            // the ret
  EXPECT_EQ(p[1].pc, 0xffffffff80000000u + 0x100140u);  // KBASE + kernel_loop (linked at 1 MiB)
  EXPECT_EQ(p[0].pc, p[1].pc + 5);                      // after the 5-byte mov
  EXPECT_TRUE(insn_step_profile(step(f, 2), 1).empty());
}

// Format 2 from the three-step guest: step 3's region classes, derived in test-guest.S.
TEST(InsnCount, RealFormat2OutputWithRegionClasses) {
  InsnCountFile f = parse_insn_count(data("test-guest-v2-smp2.txt"));
  EXPECT_EQ(f.version, 2);
  EXPECT_TRUE(f.complete);
  ASSERT_EQ(f.steps.size(), 3u);
  EXPECT_TRUE(insn_per_operation(step(f, 1), 0, 1).valid);
  EXPECT_EQ(insn_step_deltas(step(f, 3)), (std::vector<InsnCounts>{{635, 0}, {0, 0}}));
  const InsnPerOperation c0 = insn_per_operation(step(f, 3), 0, 1);
  ASSERT_TRUE(c0.valid) << c0.reason;
  EXPECT_EQ(c0.total, 203);
  const InsnPerOperation c1 = insn_per_operation(step(f, 3), 0, 2, 1);
  ASSERT_TRUE(c1.valid) << c1.reason;
  EXPECT_EQ(c1.user, 213);
  EXPECT_EQ(c1.median_total, 23);
  EXPECT_EQ(insn_per_operation(step(f, 3), 0, 1, 2).total, 631);
  EXPECT_EQ(insn_per_operation(step(f, 3), 0, 1, 3).total, 2);
  EXPECT_EQ(insn_per_operation(step(f, 3), 1, {}, 1).reason,
            "2 class-1 regions and 0 unbalanced class-1 markers on vCPU 0, expected vCPU 1 only; "
            "no class-1 regions on vCPU 1");
}

TEST(InsnCount, RealUnbalancedMarkersAreInvalid) {
  InsnCountFile f = parse_insn_count(data("test-guest-unbalanced.txt"));
  ASSERT_EQ(f.steps.size(), 2u);
  ASSERT_EQ(step(f, 1).regions.size(), 1u);
  EXPECT_EQ(step(f, 1).regions[0].regions, 1u);
  EXPECT_EQ(step(f, 1).regions[0].unbalanced, 2u);
  EXPECT_EQ(step(f, 1).regions[0].user, 3003u);  // the second begin restarted the region
  EXPECT_EQ(insn_step_deltas(step(f, 1))[0], (InsnCounts{3007, 0}));
  InsnPerOperation op = insn_per_operation(step(f, 1), 0, 1);
  EXPECT_FALSE(op.valid);
  EXPECT_EQ(op.reason, "2 unbalanced markers on vCPU 0");
  EXPECT_EQ(op.user, 0);
  EXPECT_TRUE(insn_per_operation(step(f, 2), 0, 1).valid);
}

const char* kHeader =
    "isolab-insn-count 1 plugin_api=1 qemu_api=0-1 vcpus=4 profile_cpus= profile_top=2000\n";

std::string with_step(const std::string& records) {
  return std::string(kHeader) + "step 1 begin vcpu=2 counts=0:0,0:0,10:20,0:0\n" +
         "step 1 end vcpu=2 counts=0:0,5:5,110:220,0:0\n" + records + "exit stray_step_ends=0 " +
         "counts=0:0,5:5,111:221,0:0\nend\n";
}

TEST(InsnCount, RegionsOnAnotherVcpuAreInvalid) {
  InsnCountFile f =
      parse_insn_count(with_step("region 1 vcpu=1 n=10 user=50 kernel=100 unbalanced=0\n"
                                 "region 1 vcpu=2 n=10 user=500 kernel=1000 unbalanced=0\n"));
  InsnPerOperation op = insn_per_operation(f.steps[0], 2, 10);
  EXPECT_FALSE(op.valid);
  EXPECT_EQ(op.reason, "10 regions and 0 unbalanced markers on vCPU 1, expected vCPU 2 only");
  // The same step read for vCPU 1 names vCPU 2; a vCPU without regions says so too.
  EXPECT_THAT(insn_per_operation(f.steps[0], 1).reason, HasSubstr("on vCPU 2, expected vCPU 1"));
  EXPECT_THAT(insn_per_operation(f.steps[0], 3).reason, HasSubstr("no regions on vCPU 3"));
}

TEST(InsnCount, RegionMediansAreReadBesideTheSums) {
  InsnCountFile f = parse_insn_count(with_step(
      "region 1 vcpu=2 n=10 user=500 kernel=1000 unbalanced=0 median=140 kernel_median=95\n"));
  InsnPerOperation op = insn_per_operation(f.steps[0], 2, 10);
  ASSERT_TRUE(op.valid);
  EXPECT_DOUBLE_EQ(op.total, 150);
  EXPECT_EQ(op.median_total, 140);
  EXPECT_EQ(op.median_kernel, 95);
  EXPECT_THROW(parse_insn_count(with_step(
                   "region 1 vcpu=2 n=10 user=500 kernel=1000 unbalanced=0 median=140\n")),
               Error);
  EXPECT_THROW(parse_insn_count(with_step("region 1 vcpu=2 n=10 user=500 kernel=1000 "
                                          "unbalanced=0 median=90 kernel_median=95\n")),
               Error);
}

TEST(InsnCount, RegionCountMustMatchTheToolsIterations) {
  InsnCountFile f =
      parse_insn_count(with_step("region 1 vcpu=2 n=999 user=999 kernel=1998 unbalanced=0\n"));
  InsnPerOperation op = insn_per_operation(f.steps[0], 2, 1000);
  EXPECT_FALSE(op.valid);
  EXPECT_EQ(op.reason, "999 regions on vCPU 2, expected 1000");
  InsnPerOperation ok = insn_per_operation(f.steps[0], 2, 999);
  EXPECT_TRUE(ok.valid);
  EXPECT_EQ(ok.user, 1);
  EXPECT_EQ(ok.kernel, 2);
  EXPECT_EQ(ok.total, 3);
  InsnPerOperation unknown = insn_per_operation(f.steps[0], 2);  // count not known: any n
  EXPECT_TRUE(unknown.valid);
}

TEST(InsnCount, NoRegionsAtAll) {
  InsnCountFile f = parse_insn_count(with_step(""));
  EXPECT_EQ(insn_per_operation(f.steps[0], 2, 5).reason, "no regions on vCPU 2");
  EXPECT_EQ(insn_step_deltas(f.steps[0])[2], (InsnCounts{100, 200}));
}

TEST(InsnCount, EveryFindingIsListed) {
  InsnCountFile f =
      parse_insn_count(with_step("region 1 vcpu=0 n=0 user=0 kernel=0 unbalanced=1\n"
                                 "region 1 vcpu=2 n=3 user=3 kernel=3 unbalanced=2\n"));
  EXPECT_EQ(insn_per_operation(f.steps[0], 2, 4).reason,
            "0 regions and 1 unbalanced markers on vCPU 0, expected vCPU 2 only; "
            "2 unbalanced markers on vCPU 2; 3 regions on vCPU 2, expected 4");
}

// A guest or QEMU that died: whole steps are kept, the rest is reported, nothing throws.
TEST(InsnCount, TruncatedFileKeepsWholeSteps) {
  const std::string full = data("test-guest-smp2.txt");
  const std::size_t step2 = full.find("step 2 begin");
  ASSERT_NE(step2, std::string::npos);
  const std::size_t cut = full.find('\n', step2) + 1 + 10;  // into the step 2 end line
  InsnCountFile f = parse_insn_count(full.substr(0, cut));
  EXPECT_FALSE(f.complete);
  EXPECT_EQ(f.truncation,
            "the last line is cut; step 2 has no end; no exit record (QEMU did not exit "
            "normally)");
  ASSERT_EQ(f.steps.size(), 2u);
  EXPECT_TRUE(insn_per_operation(step(f, 1), 0, 1).valid);
  InsnPerOperation op = insn_per_operation(step(f, 2), 0, 1);
  EXPECT_FALSE(op.valid);
  EXPECT_EQ(op.reason, "step 2 has a begin but no end (the output stops during the step)");
  EXPECT_THAT([&] { insn_step_deltas(step(f, 2)); },
              ThrowsMessage<Error>(HasSubstr("step 2 has no end")));
  // Without the end record only.
  InsnCountFile e = parse_insn_count(full.substr(0, full.rfind("end\n")));
  EXPECT_FALSE(e.complete);
  EXPECT_EQ(e.truncation, "no end record");
}

// Every prefix of a real file either parses (partially) or throws isolab::Error.
TEST(InsnCount, EveryPrefixParsesOrFailsCleanly) {
  const std::string full = data("test-guest-smp2.txt");
  for (std::size_t n = 0; n <= full.size(); ++n) {
    try {
      InsnCountFile f = parse_insn_count(full.substr(0, n));
      EXPECT_EQ(f.complete, n == full.size()) << n;
    } catch (const Error& e) {
      EXPECT_LT(n, full.find('\n') + 1) << "only a missing header may throw: " << e.what();
    }
  }
}

TEST(InsnCount, GarbageLinesNameTheLine) {
  auto fails = [](const std::string& text, const std::string& what) {
    EXPECT_THAT([&] { parse_insn_count(text); }, ThrowsMessage<Error>(HasSubstr(what))) << text;
  };
  const std::string h = kHeader;
  const std::string b = "step 1 begin vcpu=0 counts=1:1,1:1,1:1,1:1\n";
  fails("", "empty file");
  fails("hello\n", "insn-count line 1: not an isolab-insn-count file");
  fails("isolab-insn-count 4 vcpus=1\n", "format version \"4\" (this reader knows 1, 2 and 3)");
  fails("isolab-insn-count 1 plugin_api=1 qemu_api=0-1 vcpus=0 profile_cpus= profile_top=1\n",
        "vcpus: 0 not in 1..4096");
  fails("isolab-insn-count 1 plugin_api=1 qemu_api=0-1 vcpus=5000 profile_cpus= profile_top=1\n",
        "not in 1..4096");
  fails("isolab-insn-count 1 plugin_api=1 vcpus=1 profile_cpus= profile_top=1\n",
        "missing qemu_api=");
  fails(h + "bogus 1\n", "insn-count line 2: unknown record \"bogus\"");
  fails(h + "\x01\xff\n", "line 2");
  fails(h + "\n", "line 2: empty field");
  fails(h + "step 1  begin vcpu=0 counts=1:1,1:1,1:1,1:1\n", "empty field");
  fails(h + "step 1 begin vcpu=0\n", "missing counts=");
  fails(h + "step 1 begin vcpu=0 counts=1:1,1:1,1:1\n", "counts: 3 entries for 4 vCPUs");
  fails(h + "step 1 begin vcpu=0 counts=1:1,1:1,1:1,1:1,1:1\n", "more than 4 entries");
  fails(h + "step 1 begin vcpu=0 counts=1:1,1:1,1-1,1:1\n", "not u:k");
  fails(h + "step 1 begin vcpu=0 counts=1:1,1:1,1:1,1:1,\n", "counts");
  fails(h + "step 1 begin vcpu=4 counts=1:1,1:1,1:1,1:1\n", "vcpu=4 but the file has 4 vCPUs");
  fails(h + "step 1 begin vcpu=0 vcpu=1 counts=1:1,1:1,1:1,1:1\n", "duplicate key vcpu");
  fails(h + "step 1 begin vcpu counts=1:1,1:1,1:1,1:1\n", "is not key=value");
  fails(h + "step 1 middle vcpu=0\n", "without begin/end");
  fails(h + b + "region 1 vcpu=0 n=1 user=1 kernel=1 unbalanced=0\n", "before the end of its step");
  fails(h + b + "step 2 end vcpu=0 counts=1:1,1:1,1:1,1:1\n", "not the last begun");
  fails(h + b +
            "step 1 end vcpu=0 counts=1:1,1:1,1:1,1:1\nstep 1 end vcpu=0 "
            "counts=1:1,1:1,1:1,1:1\n",
        "second end of step 1");
  fails(h + b + b, "step 1 does not follow step 1");
  fails(h + b + "step 1 end vcpu=0 counts=1:1,1:1,1:1,1:1\n" +
            "region 1 vcpu=0 n=1 user=1 kernel=1 unbalanced=0\n" +
            "region 1 vcpu=0 n=1 user=1 kernel=1 unbalanced=0\n",
        "second region record of vCPU 0");
  fails(h + b + "step 1 end vcpu=0 counts=1:1,1:1,1:1,1:1\nprof 1 vcpu=0 pc=ffff insns=1\n",
        "pc: not 0x<hex>");
  fails(h + "end\nend\n", "record after the end record");
  fails(h + "exit stray_step_ends=0 counts=1:1,1:1,1:1,1:1\nexit stray_step_ends=0 "
            "counts=1:1,1:1,1:1,1:1\n",
        "second exit record");
}

// Format 2: region classes 1-3 beside class 0 on the same vCPU.
const char* kHeader2 =
    "isolab-insn-count 2 plugin_api=1 qemu_api=0-1 vcpus=4 profile_cpus= profile_top=2000\n";

std::string with_step2(const std::string& records) {
  return std::string(kHeader2) + "step 1 begin vcpu=2 counts=0:0,0:0,10:20,0:0\n" +
         "step 1 end vcpu=2 counts=0:0,5:5,110:220,0:0\n" + records + "exit stray_step_ends=0 " +
         "counts=0:0,5:5,111:221,0:0\nend\n";
}

TEST(InsnCount, RegionClassesAreToldApart) {
  InsnCountFile f = parse_insn_count(with_step2(
      "region 1 vcpu=2 n=10 user=500 kernel=1000 unbalanced=0 median=140 kernel_median=95\n"
      "region 1 vcpu=2 class=1 n=10 user=50 kernel=300 unbalanced=0 median=33 "
      "kernel_median=29\n"
      "region 1 vcpu=3 class=3 n=4 user=4 kernel=4 unbalanced=1\n"));
  EXPECT_EQ(f.version, 2);
  ASSERT_EQ(f.steps[0].regions.size(), 3u);
  EXPECT_EQ(f.steps[0].regions[1].region_class, 1u);
  InsnPerOperation c0 = insn_per_operation(f.steps[0], 2, 10);  // class 0 by default
  ASSERT_TRUE(c0.valid) << c0.reason;
  EXPECT_EQ(c0.median_total, 140);
  InsnPerOperation c1 = insn_per_operation(f.steps[0], 2, 10, 1);
  ASSERT_TRUE(c1.valid) << c1.reason;
  EXPECT_DOUBLE_EQ(c1.total, 35);
  EXPECT_EQ(c1.median_total, 33);
  EXPECT_EQ(c1.median_kernel, 29);
  // Class 2 has no region anywhere; class 3's are on another vCPU, with an unbalanced marker.
  EXPECT_EQ(insn_per_operation(f.steps[0], 2, 10, 2).reason, "no class-2 regions on vCPU 2");
  EXPECT_EQ(insn_per_operation(f.steps[0], 2, 10, 3).reason,
            "4 class-3 regions and 1 unbalanced class-3 markers on vCPU 3, expected vCPU 2 only; "
            "no class-3 regions on vCPU 2");
  EXPECT_EQ(insn_per_operation(f.steps[0], 3, 4, 3).reason,
            "1 unbalanced class-3 markers on vCPU 3");
  EXPECT_EQ(insn_per_operation(f.steps[0], 2, 11, 1).reason,
            "10 class-1 regions on vCPU 2, expected 11");
}

TEST(InsnCount, Format1FilesStillParseAndKnowNoClasses) {
  InsnCountFile f = parse_insn_count(data("test-guest-smp2.txt"));
  EXPECT_EQ(f.version, 1);
  for (const InsnStep& s : f.steps)
    for (const InsnRegionTotals& r : s.regions) EXPECT_EQ(r.region_class, 0u);
  EXPECT_THAT(
      [&] {
        parse_insn_count(with_step("region 1 vcpu=2 class=1 n=1 user=1 kernel=1 unbalanced=0\n"));
      },
      ThrowsMessage<Error>(HasSubstr("class= in a format-1 file")));
}

TEST(InsnCount, BadRegionClassesAreRejected) {
  auto fails = [](const std::string& records, const std::string& what) {
    EXPECT_THAT([&] { parse_insn_count(with_step2(records)); },
                ThrowsMessage<Error>(HasSubstr(what)))
        << records;
  };
  fails("region 1 vcpu=2 class=0 n=1 user=1 kernel=1 unbalanced=0\n", "class=0 not in 1..3");
  fails("region 1 vcpu=2 class=4 n=1 user=1 kernel=1 unbalanced=0\n", "class=4 not in 1..3");
  fails("region 1 vcpu=2 class=x n=1 user=1 kernel=1 unbalanced=0\n", "class: not a number");
  fails(
      "region 1 vcpu=2 class=1 n=1 user=1 kernel=1 unbalanced=0\n"
      "region 1 vcpu=2 class=1 n=1 user=1 kernel=1 unbalanced=0\n",
      "second region record of vCPU 2, class 1");
  fails(
      "region 1 vcpu=2 n=1 user=1 kernel=1 unbalanced=0\n"
      "region 1 vcpu=2 n=1 user=1 kernel=1 unbalanced=0\n",
      "second region record of vCPU 2: ");
}

// One worker per vCPU at once (page-fault-bench's per_cpu phase).
TEST(InsnCount, PerOperationOnSeveralVcpus) {
  const std::string c2 =
      "region 1 vcpu=1 class=2 n=5 user=50 kernel=500 unbalanced=0 median=100 kernel_median=90\n"
      "region 1 vcpu=2 class=2 n=7 user=70 kernel=1400 unbalanced=0 median=200 "
      "kernel_median=190\n";
  InsnCountFile f = parse_insn_count(with_step2(c2));
  InsnPerOperationByVcpu ok = insn_per_operation_by_vcpu(f.steps[0], {{1, 5}, {2, 7}}, 2);
  ASSERT_TRUE(ok.valid) << ok.reason;
  ASSERT_EQ(ok.per_vcpu.size(), 2u);
  EXPECT_EQ(ok.per_vcpu.at(1).median_total, 100);
  EXPECT_EQ(ok.per_vcpu.at(2).median_kernel, 190);
  EXPECT_DOUBLE_EQ(ok.per_vcpu.at(2).total, 210);
  // A count off, a vCPU without a worker, unbalanced markers: every finding, nothing valid.
  InsnPerOperationByVcpu bad = insn_per_operation_by_vcpu(f.steps[0], {{1, 5}, {2, 8}}, 2);
  EXPECT_FALSE(bad.valid);
  EXPECT_TRUE(bad.per_vcpu.empty());
  EXPECT_EQ(bad.reason, "7 class-2 regions on vCPU 2, expected 8");
  EXPECT_EQ(insn_per_operation_by_vcpu(f.steps[0], {{2, 7}, {3, 1}}, 2).reason,
            "5 class-2 regions and 0 unbalanced class-2 markers on vCPU 1, expected vCPUs 2-3 "
            "only; no class-2 regions on vCPU 3");
  InsnCountFile u = parse_insn_count(
      with_step2(c2 + "region 1 vcpu=3 class=2 n=0 user=0 kernel=0 unbalanced=1\n"));
  EXPECT_EQ(insn_per_operation_by_vcpu(u.steps[0], {{1, 5}, {2, 7}}, 2).reason,
            "0 class-2 regions and 1 unbalanced class-2 markers on vCPU 3, expected vCPUs 1-2 "
            "only");
  EXPECT_EQ(insn_per_operation_by_vcpu(u.steps[0], {{0, 1}, {1, 5}, {3, 0}}, 2).reason,
            "7 class-2 regions and 0 unbalanced class-2 markers on vCPU 2, expected vCPUs 0-1,3 "
            "only; no class-2 regions on vCPU 0; 1 unbalanced class-2 markers on vCPU 3; "
            "no class-2 regions on vCPU 3");
  EXPECT_EQ(insn_per_operation_by_vcpu(f.steps[0], {}, 2).reason, "no vCPU was expected");
  // Other classes do not count: class 0 has no region at all.
  EXPECT_EQ(insn_per_operation_by_vcpu(f.steps[0], {{1, 5}}, 0).reason, "no regions on vCPU 1");
}

TEST(InsnCount, NumbersAreOverflowChecked) {
  const std::string h = kHeader;
  auto begin = [&](const std::string& c) {
    return h + "step 1 begin vcpu=0 counts=" + c + ",0:0,0:0,0:0\n";
  };
  InsnCountFile max = parse_insn_count(begin("18446744073709551615:0"));
  EXPECT_EQ(max.steps[0].begin[0].user, 18446744073709551615u);
  EXPECT_THAT([&] { parse_insn_count(begin("18446744073709551616:0")); },
              ThrowsMessage<Error>(HasSubstr("counts: overflows 64 bits")));
  EXPECT_THAT([&] { parse_insn_count(begin("-1:0")); },
              ThrowsMessage<Error>(HasSubstr("counts: not a number")));
  EXPECT_THAT([&] { parse_insn_count(begin("+1:0")); },
              ThrowsMessage<Error>(HasSubstr("counts: not a number")));
  EXPECT_THAT([&] { parse_insn_count(begin("1x:0")); },
              ThrowsMessage<Error>(HasSubstr("counts: not a number")));
  EXPECT_THAT([&] { parse_insn_count(begin(":0")); },
              ThrowsMessage<Error>(HasSubstr("counts: not a number")));
  EXPECT_THAT([&] { parse_insn_count(h + "step 99999999999999999999 begin vcpu=0\n"); },
              ThrowsMessage<Error>(HasSubstr("seq: overflows 64 bits")));
  const std::string ended = begin("0:0") + "step 1 end vcpu=0 counts=1:1,1:1,1:1,1:1\n";
  EXPECT_THAT([&] { parse_insn_count(ended + "prof 1 vcpu=0 pc=0x1ffffffffffffffff insns=1\n"); },
              ThrowsMessage<Error>(HasSubstr("pc: overflows 64 bits")));
  EXPECT_THAT(
      [&] {
        parse_insn_count(ended +
                         "region 1 vcpu=0 n=1 user=99999999999999999999 kernel=0 "
                         "unbalanced=0\n");
      },
      ThrowsMessage<Error>(HasSubstr("user: overflows 64 bits")));
}

TEST(InsnCount, CountsGoingDownAreRejectedByTheDeltas) {
  InsnCountFile f = parse_insn_count(std::string(kHeader) +
                                     "step 1 begin vcpu=0 counts=5:5,0:0,0:0,0:0\n"
                                     "step 1 end vcpu=0 counts=4:6,0:0,0:0,0:0\n");
  EXPECT_THAT([&] { insn_step_deltas(f.steps[0]); },
              ThrowsMessage<Error>(HasSubstr("vCPU 0's count went down")));
}

TEST(InsnCount, UnknownKeysAreIgnoredAndProfileIsSorted) {
  InsnCountFile f = parse_insn_count(std::string(kHeader) +
                                     "step 3 begin vcpu=0 counts=0:0,0:0,0:0,0:0 future=1\n"
                                     "step 3 end vcpu=1 counts=0:0,0:0,0:0,0:9\n"
                                     "prof 3 vcpu=3 pc=0xffffffff81000010 insns=2\n"
                                     "prof 3 vcpu=3 pc=0xffffffff81000000 insns=2\n"
                                     "prof 3 vcpu=2 pc=0xffffffff81000020 insns=1\n"
                                     "prof 3 vcpu=3 pc=0xFFFFFFFF81000030 insns=5\n");
  EXPECT_FALSE(f.complete);
  EXPECT_EQ(f.steps[0].end_vcpu, 1u);
  std::vector<InsnProfileEntry> p = insn_step_profile(f.steps[0], 3);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].pc, 0xffffffff81000030u);
  EXPECT_EQ(p[1].pc, 0xffffffff81000000u);
  EXPECT_EQ(p[2].pc, 0xffffffff81000010u);
  EXPECT_EQ(insn_step_profile(f.steps[0], 2).size(), 1u);
  EXPECT_EQ(find_insn_step(f, 1), nullptr);
}

// Format 3 from the six-step guest (tcg-plugin/test-guest.S derives every number), -smp 2 with
// vCPU 1 halted, profile_cpus=0-1, symbols=test-guest.map.
TEST(InsnCount, RealFormat3OutputWithRepFaultsWakeupsAndFunctions) {
  InsnCountFile f = parse_insn_count(data("test-guest-v3-smp2.txt"));
  EXPECT_EQ(f.version, 3);
  EXPECT_EQ(f.mode, "exact");
  EXPECT_EQ(f.symbols, 8u);
  EXPECT_EQ(f.profile_top, 0u);
  ASSERT_TRUE(f.complete);
  ASSERT_EQ(f.steps.size(), 6u);
  EXPECT_EQ(f.early_markers, 0u);
  ASSERT_EQ(f.exit_boot.size(), 2u);
  EXPECT_GT(f.exit_boot[0], 0u);
  // Step 2: kernel_loop (the map's first function, 0xffffffff80101000) holds all 1502.
  const std::vector<InsnProfileEntry> p2 = insn_step_profile(step(f, 2), 0);
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(p2[0].pc, 0xffffffff80101000u);
  EXPECT_TRUE(p2[0].in_function);
  EXPECT_EQ(p2[0].insns, 1502u);
  EXPECT_EQ(insn_profile_sum_problem(step(f, 2), 0), "");
  // Step 4: rep-string executions apart.
  EXPECT_EQ(insn_step_rep_deltas(step(f, 4)), (std::vector<InsnCounts>{{101, 51}, {0, 0}}));
  const InsnPerOperation op4 = insn_per_operation(step(f, 4), 0, 1);
  ASSERT_TRUE(op4.valid) << op4.reason;
  EXPECT_EQ(op4.total, 165);
  EXPECT_EQ(op4.rep, 152);
  EXPECT_EQ(op4.median_norep, 13);
  EXPECT_EQ(insn_step_profile(step(f, 4), 0).at(0).rep, 51u);
  // Step 5: one fault fixed, the region exact.
  EXPECT_EQ(step(f, 5).end_faults[0], (InsnFaults{1, 0, 0}));
  EXPECT_EQ(step(f, 5).begin_faults[0], (InsnFaults{0, 0, 0}));
  EXPECT_EQ(insn_per_operation(step(f, 5), 0, 1).total, 9);
  // Step 6: the wakeup paths and the longest one's functions.
  const InsnWakeups* w = insn_step_wakeups(step(f, 6), 0);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->lengths, (std::vector<std::uint64_t>{6, 7}));
  EXPECT_EQ(w->nowake, 1u);
  EXPECT_EQ(w->timer, 2u);
  EXPECT_EQ(w->irq, 0u);
  ASSERT_EQ(w->longest.size(), 3u);
  EXPECT_EQ(w->longest[0].pc, 0xffffffff80101180u);
  EXPECT_EQ(w->longest[0].insns, 4u);
  EXPECT_EQ(w->longest[1].pc, 0xffffffff80101200u);
  EXPECT_EQ(w->longest[2].where, InsnWakeFunction::user);
  EXPECT_EQ(w->longest[2].insns, 1u);
  EXPECT_EQ(insn_step_wakeups(step(f, 6), 1), nullptr);
}

// The floor-cost inline build: the same format, mode=inline, no profile lines.
TEST(InsnCount, RealInlineOutput) {
  InsnCountFile f = parse_insn_count(data("test-guest-v3-inline.txt"));
  EXPECT_EQ(f.mode, "inline");
  EXPECT_EQ(f.symbols, 0u);
  ASSERT_EQ(f.steps.size(), 6u);
  EXPECT_EQ(insn_step_deltas(step(f, 4))[0], (InsnCounts{112, 55}));
  EXPECT_TRUE(step(f, 2).profile.empty());
}

const char* kHeader3 =
    "isolab-insn-count 3 plugin_api=1 qemu_api=0-1 vcpus=2 profile_cpus=1 symbols=10 mode=exact\n";

std::string with_step3(const std::string& records, const std::string& end_kernel = "7") {
  return std::string(kHeader3) +
         "step 1 begin vcpu=0 counts=0:0,0:0 rep=0:0,0:0 faults=0:0:0,0:0:0\n" +
         "step 1 end vcpu=0 counts=5:5,3:" + end_kernel + " rep=0:0,0:2 faults=0:0:0,0:0:0\n" +
         records;
}

TEST(InsnCount, Format3ProfileSumIsChecked) {
  const std::string prof =
      "prof 1 vcpu=1 fn=0xffffffff81000000 insns=5 rep=2\nprof 1 vcpu=1 fn=none insns=2 rep=0\n";
  InsnCountFile ok = parse_insn_count(with_step3(prof));
  EXPECT_EQ(insn_profile_sum_problem(ok.steps[0], 1), "");
  EXPECT_FALSE(insn_step_profile(ok.steps[0], 1)[1].in_function);
  InsnCountFile bad = parse_insn_count(with_step3(prof, "9"));
  EXPECT_EQ(insn_profile_sum_problem(bad.steps[0], 1),
            "the profile of vCPU 1 in step 1 sums to 7 instructions, its kernel count is 9");
}

// count=steps (the plugin counts only inside steps) in the header; a step whose counting window
// opened at its own begin marker says late=1. Without count=, the plugin counted everything.
TEST(InsnCount, Format3CountingWindowAndALateStep) {
  EXPECT_FALSE(parse_insn_count(with_step3("")).steps_only);
  std::string text = with_step3("");
  text.replace(text.find(" mode=exact"), 11, " mode=exact count=steps");
  EXPECT_TRUE(parse_insn_count(text).steps_only);
  EXPECT_FALSE(parse_insn_count(text).steps[0].late);
  text.replace(text.find("faults=0:0:0,0:0:0\n"), 19, "faults=0:0:0,0:0:0 late=1\n");
  const InsnCountFile f = parse_insn_count(text);
  ASSERT_EQ(f.steps.size(), 1u);
  EXPECT_TRUE(f.steps[0].late);
}

TEST(InsnCount, Format3GarbageLinesNameTheLine) {
  auto fails = [](const std::string& text, const std::string& what) {
    EXPECT_THAT([&] { parse_insn_count(text); }, ThrowsMessage<Error>(HasSubstr(what))) << text;
  };
  const std::string h = kHeader3;
  fails("isolab-insn-count 3 plugin_api=1 qemu_api=0-1 vcpus=2 profile_cpus= symbols=1\n",
        "missing mode=");
  fails("isolab-insn-count 3 plugin_api=1 qemu_api=0-1 vcpus=2 profile_cpus= symbols=1 mode=x\n",
        "mode: \"x\" (exact or inline)");
  fails(
      "isolab-insn-count 3 plugin_api=1 qemu_api=0-1 vcpus=2 profile_cpus= symbols=1 "
      "mode=exact count=some\n",
      "count: \"some\" (all or steps)");
  fails(h + "step 1 begin vcpu=0 counts=0:0,0:0 rep=0:0,0:0 faults=0:0:0,0:0:0 late=2\n",
        "late: 2 (only late=1)");
  fails(h + "step 1 begin vcpu=0 counts=0:0,0:0\n", "missing rep=");
  fails(h + "step 1 begin vcpu=0 counts=0:0,0:0 rep=0:0,0:0 faults=0:0,0:0\n",
        "not fixed:unmatched:kernel");
  fails(h + "step 1 begin vcpu=0 counts=0:0,0:0 rep=0:0,0:0 faults=0:0:0\n",
        "faults: 1 entries for 2 vCPUs");
  fails(with_step3("prof 1 vcpu=1 fn=ffff insns=1 rep=0\n"), "fn: not 0x<hex>");
  fails(with_step3("prof 1 vcpu=1 pc=0x10 insns=1\n"), "missing fn=");
  fails(with_step3("region 1 vcpu=0 n=1 user=1 kernel=1 unbalanced=0 median=2 kernel_median=1\n"),
        "missing rep=");
  fails(with_step3("region 1 vcpu=0 n=1 user=1 kernel=1 rep=0 unbalanced=0 median=2 "
                   "kernel_median=1\n"),
        "median= and norep_median= come together");
  fails(with_step3("wake 1 vcpu=0 n=2 nowake=0 timer=2 irq=0 noentry=0 insns=5\n"),
        "insns= holds 1 lengths, n=2");
  fails(with_step3("wake 1 vcpu=1 n=0 nowake=1 timer=0 irq=0 noentry=0\n"
                   "wake 1 vcpu=0 n=0 nowake=1 timer=0 irq=0 noentry=0\n"),
        "wake record of vCPU 0 out of order");
  fails(with_step3("wakefn 1 vcpu=0 fn=user insns=1\n"), "without its vCPU's wake record");
  fails(std::string(kHeader) + "step 1 begin vcpu=0 counts=1:1,1:1,1:1,1:1\n" +
            "step 1 end vcpu=0 counts=1:1,1:1,1:1,1:1\nwake 1 vcpu=0 n=0\n",
        "wake record before format 3");
  fails(with_step3("exit stray_step_ends=0 counts=1:1,1:1\n"), "missing early_markers=");
  fails(with_step3("exit stray_step_ends=0 early_markers=0 counts=1:1,1:1 rep=0:0,0:0 "
                   "faults=0:0:0,0:0:0 boot=1\n"),
        "boot: 1 entries for 2 vCPUs");
}

}  // namespace
}  // namespace isolab
