// System.map reading and the function of a kernel address.
#include <gtest/gtest.h>

#include "base/error.h"
#include "parse/system_map.h"

namespace isolab {
namespace {

// Lines in the form scripts/mksysmap writes (`nm -n vmlinux`), with data and absolute symbols
// between the text ones.
constexpr const char* kMap =
    "0000000000000000 D __per_cpu_start\n"
    "ffffffff81000000 T _stext\n"
    "ffffffff81000000 T _text\n"
    "ffffffff81001000 t refresh_cpu_vm_stats\n"
    "ffffffff81001400 T vmstat_update\n"
    "ffffffff81001480 W arch_cpu_idle\n"
    "ffffffff81001500 T quiet_vmstat\n"
    "ffffffff81002000 T _etext\n"
    "ffffffff82000000 D init_task\n"
    "ffffffff8200";  // a cut last line

TEST(SystemMap, TextSymbolsOnlyInAddressOrder) {
  const SystemMap m = parse_system_map(kMap);
  ASSERT_EQ(m.text.size(), 7u);
  EXPECT_EQ(m.text.front().address, 0xffffffff81000000ull);
  EXPECT_EQ(m.text.back().name, "_etext");
  EXPECT_EQ(m.text_end, 0xffffffff81002000ull);
}

TEST(SystemMap, AnAddressBelongsToTheLastSymbolAtOrBelowIt) {
  const SystemMap m = parse_system_map(kMap);
  EXPECT_EQ(kernel_function_at(m, 0xffffffff81001000ull), "refresh_cpu_vm_stats");
  EXPECT_EQ(kernel_function_at(m, 0xffffffff810013ffull), "refresh_cpu_vm_stats");
  EXPECT_EQ(kernel_function_at(m, 0xffffffff81001404ull), "vmstat_update");
  EXPECT_EQ(kernel_function_at(m, 0xffffffff81001490ull), "arch_cpu_idle");
  EXPECT_EQ(kernel_function_at(m, 0xffffffff81001fffull), "quiet_vmstat");
}

TEST(SystemMap, AddressesOutsideTheTextAreNobodys) {
  const SystemMap m = parse_system_map(kMap);
  EXPECT_EQ(kernel_function_at(m, 0xffffffff80000000ull), std::nullopt);  // below _stext
  EXPECT_EQ(kernel_function_at(m, 0xffffffff81002000ull), std::nullopt);  // _etext
  EXPECT_EQ(kernel_function_at(m, 0xffffffffa0000000ull), std::nullopt);  // a module
}

TEST(SystemMap, TextWithoutSymbolsIsNotAMap) {
  EXPECT_THROW(parse_system_map(""), Error);
  EXPECT_THROW(parse_system_map("ffffffff82000000 D init_task\nnot a map at all\n"), Error);
}

// The KASLR check at collection: the guest's /proc/kallsyms _stext against the map's.
TEST(SystemMap, KallsymsStextMustEqualTheMaps) {
  const SystemMap m = parse_system_map(kMap);
  ASSERT_EQ(m.stext, 0xffffffff81000000ull);
  EXPECT_EQ(kernel_relocation_problem(m, "ffffffff81000000 T _stext\n"), "");
  // KASLR moves the kernel by a multiple of 2 MiB (CONFIG_PHYSICAL_ALIGN).
  EXPECT_EQ(kernel_relocation_problem(m, "ffffffff9a200000 T _stext\n"),
            "the kernel runs at 0xffffffff9a200000 (/proc/kallsyms _stext), its System.map has "
            "it at 0xffffffff81000000: relocated by +0x19200000, as KASLR does");
  EXPECT_NE(kernel_relocation_problem(m, "ffffffff80e00000 T _stext"), "");
  EXPECT_EQ(kernel_relocation_problem(m, "0000000000000000 T _stext\n"),
            "the guest's /proc/kallsyms shows _stext at 0 (kptr_restrict hides addresses), so it "
            "cannot be checked against System.map");
  EXPECT_NE(kernel_relocation_problem(m, "").find("sent no _stext line"), std::string::npos);
  EXPECT_NE(kernel_relocation_problem(m, "ffffffff81000000 T _text\n").find("is not"),
            std::string::npos);
  EXPECT_NE(kernel_relocation_problem(m, "zz T _stext\n").find("is not"), std::string::npos);
  // Guest output is untrusted: a hostile line is quoted sanitized and cut.
  const std::string hostile = kernel_relocation_problem(m, std::string(500, '\x1b'));
  EXPECT_LT(hostile.size(), 200u);
  EXPECT_EQ(hostile.find('\x1b'), std::string::npos);
  const SystemMap no_stext = parse_system_map("ffffffff81001000 t f\n");
  EXPECT_EQ(kernel_relocation_problem(no_stext, "ffffffff81000000 T _stext\n"),
            "System.map has no _stext, so the guest's kernel cannot be checked");
}

}  // namespace
}  // namespace isolab
