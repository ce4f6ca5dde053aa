// CPU lists (lib/bitmap.c bitmap_parselist) and hex masks (bitmap_parse).
#include <gtest/gtest.h>

#include "cmdline/cpulist.h"

namespace isolab {
namespace {

std::string L(std::string_view s, unsigned nbits) { return parse_cpulist(s, nbits).to_list(); }

CpuListErrc errc_of(std::string_view s, unsigned nbits) {
  try {
    parse_cpulist(s, nbits);
  } catch (const CpuListError& e) {
    return e.errc();
  }
  ADD_FAILURE() << "no error for " << s;
  return CpuListErrc::kInvalid;
}

TEST(CmdlineCpulist, Basics) {
  EXPECT_EQ(L("5,6,7", 8), "5-7");
  EXPECT_EQ(L("0,1,2,3,4", 8), "0-4");
  EXPECT_EQ(L("2-23,26-47", 48), "2-23,26-47");
  EXPECT_EQ(L("", 8), "");
  EXPECT_EQ(L(" ,, 3 , ,5\n", 8), "3,5");
  EXPECT_EQ(L("7,1,3-4", 8), "1,3-4,7");
}

TEST(CmdlineCpulist, GroupsFromTheDocumentation) {
  // Documentation/admin-guide/kernel-parameters.rst: 100-2000:2/25 = 100,101,125,126,...
  CpuSet s = parse_cpulist("1,2,10-20,100-2000:2/25", 2048);
  EXPECT_TRUE(s.test(100) && s.test(101) && s.test(125) && s.test(126));
  EXPECT_FALSE(s.test(102) || s.test(124));
  // 77 groups start at 100..2000; the last (2000) is cut to 1 CPU by the end of the range.
  EXPECT_EQ(s.count(), 2u + 11u + 2u * 76u + 1u);
  EXPECT_EQ(L("0-1023:2/256", 1024), "0-1,256-257,512-513,768-769");
  EXPECT_EQ(L("0-7:0/4", 8), "");
}

TEST(CmdlineCpulist, NAndAll) {
  EXPECT_EQ(L("2-N", 6), "2-5");
  EXPECT_EQ(L("N", 8), "7");
  EXPECT_EQ(L("all", 4), "0-3");
  EXPECT_EQ(L("ALL:1/2", 8), "0,2,4,6");
  auto p = try_parse_cpulist("2-N", 64);
  EXPECT_TRUE(p.uses_last);
  EXPECT_EQ(p.min_nbits, 3u);  // 2-N parses only where N >= 2
  // kernel-parameters.rst: "16-N" on a 4 CPU system becomes 16-3 and is invalid.
  EXPECT_EQ(errc_of("16-N", 4), CpuListErrc::kInvalid);
}

// The narrowest bitmap in which bitmap_parselist() accepts a list is decided by the
// range ends, not by the members; N and all parse at any width.
TEST(CmdlineCpulist, MinNbitsIsTheLargestRangeEndPlusOne) {
  auto need = [](const char* l) { return try_parse_cpulist(l, kMaxCpus).min_nbits; };
  EXPECT_EQ(need("0-15:2/4"), 16u);  // members end at 13
  EXPECT_EQ(L("0-15:2/4", 16), "0-1,4-5,8-9,12-13");
  EXPECT_EQ(errc_of("0-15:2/4", 14), CpuListErrc::kRange);  // the kernel's answer on 14 CPUs
  EXPECT_EQ(need("7"), 8u);
  EXPECT_EQ(need("2-23,50-71,26-47,74-95"), 96u);
  EXPECT_EQ(need("100-2000:2/25"), 2001u);
  EXPECT_EQ(need("2-N"), 3u);
  EXPECT_EQ(need("N"), 0u);
  EXPECT_EQ(need("all:1/2"), 0u);
  EXPECT_EQ(need("all,5"), 6u);
  EXPECT_EQ(need(""), 0u);
  // Each minimum really is the narrowest width the kernel accepts.
  for (const char* l : {"0-15:2/4", "7", "2-N", "2-23,50-71,26-47,74-95"}) {
    const unsigned n = need(l);
    EXPECT_TRUE(try_parse_cpulist(l, n).ok()) << l;
    EXPECT_FALSE(try_parse_cpulist(l, n - 1).ok()) << l;  // ERANGE; EINVAL for 2-N (2 > N)
  }
}

TEST(CmdlineCpulist, KernelErrors) {
  EXPECT_EQ(errc_of("10-1", 32), CpuListErrc::kInvalid);
  EXPECT_EQ(errc_of("0-31:0/0", 32), CpuListErrc::kInvalid);
  EXPECT_EQ(errc_of("0-31:5/4", 32), CpuListErrc::kInvalid);
  EXPECT_EQ(errc_of("1x", 32), CpuListErrc::kInvalid);
  EXPECT_EQ(errc_of("-1", 32), CpuListErrc::kInvalid);
  EXPECT_EQ(errc_of("0-7:1/2x", 32), CpuListErrc::kInvalid);
  EXPECT_EQ(errc_of("2-15", 6), CpuListErrc::kRange);
  EXPECT_EQ(errc_of("4294967296", 32), CpuListErrc::kOverflow);
  EXPECT_EQ(errc_of("99999999999999999999999", 32), CpuListErrc::kOverflow);
}

TEST(CmdlineCpulist, ErrorNamesTheToken) {
  try {
    parse_cpulist("1,2,10-1,5", 32);
    FAIL();
  } catch (const CpuListError& e) {
    EXPECT_EQ(e.token(), "10-1");
    EXPECT_NE(std::string(e.what()).find("EINVAL"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("'10-1'"), std::string::npos);
  }
  auto p = try_parse_cpulist("1,2,9,3", 8);  // partial mask kept (irqaffinity semantics)
  EXPECT_EQ(*p.errc, CpuListErrc::kRange);
  EXPECT_EQ(p.set.to_list(), "1-2");
  EXPECT_EQ(p.bad_token, "9");
}

TEST(CmdlineCpulist, HexMasks) {
  EXPECT_EQ(parse_cpumask_hex("ff", 8).to_list(), "0-7");
  EXPECT_EQ(parse_cpumask_hex("00000000,000000ff\n", 64).to_list(), "0-7");
  EXPECT_EQ(parse_cpumask_hex("1f", 8).to_list(), "0-4");
  EXPECT_EQ(parse_cpumask_hex("1,00000001", 64).to_list(), "0,32");
  EXPECT_THROW(parse_cpumask_hex("fg", 8), CpuListError);
  EXPECT_THROW(parse_cpumask_hex("100", 8), CpuListError);         // bit 8 of 8
  EXPECT_THROW(parse_cpumask_hex("123456789", 64), CpuListError);  // 9 digits in a chunk
  EXPECT_EQ(parse_cpumask_hex("", 8).to_list(), "");
}

TEST(CmdlineCpulist, MaskPrintingLikeKernel) {
  EXPECT_EQ(CpuSet::all(8).to_mask(), "ff");
  EXPECT_EQ(CpuSet::all(6).to_mask(), "3f");
  EXPECT_EQ(parse_cpulist("0-4", 8).to_mask(), "1f");
  EXPECT_EQ(CpuSet::all(40).to_mask(), "ff,ffffffff");
  EXPECT_EQ(parse_cpulist("0", 64).to_mask(), "00000000,00000001");
}

TEST(CmdlineCpulist, SetOps) {
  CpuSet a = parse_cpulist("0-7", 8), b = parse_cpulist("5-7", 16);
  EXPECT_EQ((a - b).to_list(), "0-4");
  EXPECT_EQ((a & b).to_list(), "5-7");
  EXPECT_TRUE(b.subset_of(a));
  EXPECT_TRUE(parse_cpulist("5-7", 8) == b);
  EXPECT_THROW(CpuSet(kMaxCpus + 1), Error);
}

}  // namespace
}  // namespace isolab
