// Where the tests find the source tree, their data and the programs they run. The paths live in
// one generated source file (build/tests/test_paths.cc, written by tests/CMakeLists.txt) rather
// than in each test's compile flags, so that no test's compile command holds an absolute path
// and a compiler cache serves the same test objects to every clone of the repository. Every test
// is compiled with `-include test_paths.h`, and the ISOLAB_* names below stand for these
// C strings (absolute paths).
#pragma once

namespace isolab::test_paths {
extern const char* const source_dir;       // the repository
extern const char* const test_data_dir;    // tests/data
extern const char* const isolab_binary;    // the isolab program
extern const char* const vmstat_overhead;  // guest-tools programs
extern const char* const page_fault_bench;
extern const char* const insn_plugin;         // the QEMU plugin (tcg-plugin/)
extern const char* const insn_plugin_inline;  // its floor-cost build
extern const char* const test_guest;          // the plugin's multiboot test guests
extern const char* const test_guest_unbalanced;
extern const char* const bad_plugin_version;  // plugins QEMU must refuse
extern const char* const bad_plugin_no_version;
}  // namespace isolab::test_paths

#define ISOLAB_SOURCE_DIR (::isolab::test_paths::source_dir)
#define ISOLAB_TEST_DATA_DIR (::isolab::test_paths::test_data_dir)
#define ISOLAB_BINARY (::isolab::test_paths::isolab_binary)
#define ISOLAB_VMSTAT_OVERHEAD (::isolab::test_paths::vmstat_overhead)
#define ISOLAB_PAGE_FAULT_BENCH (::isolab::test_paths::page_fault_bench)
#define ISOLAB_INSN_PLUGIN (::isolab::test_paths::insn_plugin)
#define ISOLAB_INSN_PLUGIN_INLINE (::isolab::test_paths::insn_plugin_inline)
#define ISOLAB_TEST_GUEST (::isolab::test_paths::test_guest)
#define ISOLAB_TEST_GUEST_UNBALANCED (::isolab::test_paths::test_guest_unbalanced)
#define ISOLAB_BAD_PLUGIN_VERSION (::isolab::test_paths::bad_plugin_version)
#define ISOLAB_BAD_PLUGIN_NO_VERSION (::isolab::test_paths::bad_plugin_no_version)
