// The instruction-counting QEMU plugin (tcg-plugin/insn-count.c) from the orchestrator's side:
// where its files are, and the preflight that proves this host's QEMU loads it and counts
// exactly, run before any boot that uses it (and by `isolab doctor`, scripts/setup.sh).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "sys/process.h"

namespace isolab {

// The plugin and its test guest (tcg-plugin/test-guest.S, with its symbols test-guest.map), all
// built by CMake beside the isolab binary.
struct InsnPluginFiles {
  std::filesystem::path plugin;      // libisolab-insn-count.so
  std::filesystem::path test_guest;  // isolab-test-guest.elf (32-bit multiboot ELF)
  // The test guest's System.map; "" = test_guest with the extension .map.
  std::filesystem::path test_guest_symbols;
};

// $ISOLAB_INSN_PLUGIN and $ISOLAB_TEST_GUEST when set and non-empty, else the two files in
// binary_dir (the directory of the isolab executable), and the .map beside the test guest.
// Does not check that they exist.
InsnPluginFiles find_insn_plugin_files(const std::filesystem::path& binary_dir);

// The test guest's exit status through isa-debug-exit: (0x31 << 1) | 1.
constexpr int kTestGuestExit = 99;

// The QEMU argv of one preflight boot (pure): qemu-system-x86_64 -accel tcg -machine q35
// -smp <vcpus> -m 64 -display none -nodefaults -no-user-config -no-reboot
// -device isa-debug-exit,iobase=0xf4,iosize=0x04 -kernel <test_guest>
// -plugin file=<plugin>,out=<output>,profile_cpus=0-<vcpus-1>,symbols=<test_guest_symbols>.
std::vector<std::string> insn_preflight_argv(const InsnPluginFiles& files,
                                             const std::filesystem::path& output, int vcpus);

// What the test guest must have produced, per tcg-plugin/test-guest.S (derivations there), on
// vCPU 0 with every other vCPU's step deltas 0: step 1 region 3003 user instructions, step 2
// region 6 user + 1502 kernel, each n = 1 with no unbalanced marker; step 3, all user, region
// class 0 one region of 203, class 1 two regions summing to 426 with median 23, class 2 one of
// 631, class 3 one of 2; step 4 a region of 110 user (101 rep) + 55 kernel (51 rep), norep
// median 13; step 5 a region of 5 user + 4 kernel after the fault correction, one fault fixed;
// step 6 wakeup paths 6 and 7, one WAKE without wakeup, the longest path 4 in
// asm_sysvec_apic_timer_interrupt, 2 in hrtimer_wakeup, 1 user; step deltas 3005, 8 + 1502,
// 635, 112 (rep 101) + 55 (rep 51), 7 + 4, 12 + 13; each profile summing to the step's kernel
// count, in the functions of test-guest.map (kernel_loop 1502; k_rep 55; asm_exc_page_fault 4;
// asm_sysvec_apic_timer_interrupt 8, hrtimer_wakeup 4, asm_common_interrupt 1); vCPU 0 ran
// boot code (> 0) and no marker in it. An "inline" plugin (the floor-cost build) is held to
// the counts, regions and rep counts only, without step 5 (it has no fault correction).
// Returns "" when the file says exactly that, else what differs (one line). Pure.
// symbols_text is test-guest.map, which names the profile's functions.
std::string check_test_guest_counts(std::string_view plugin_output, std::string_view symbols_text);

struct InsnPluginPreflight {
  bool ok = false;
  // When not ok, one paragraph naming the plugin path: QEMU's own message (its output,
  // sanitized) when QEMU refused the plugin or the guest, an API range that excludes the
  // plugin's version, or the count that differs.
  std::string error;
  double seconds = 0;    // wall time of the QEMU run
  int plugin_api = 0;    // the API version the plugin was built for (from its output)
  int qemu_api_min = 0;  // the range QEMU offered it (from its output; 0 when it never ran)
  int qemu_api_max = 0;
  std::string mode;         // the plugin's counting mode ("exact"; "inline": floor-cost build)
  std::string qemu_output;  // QEMU's stdout+stderr (sanitized, at most 2000 bytes)
};

// Boots files.test_guest under TCG with the plugin (vcpus vCPUs, the others halted), writing
// under work_dir (created; the plugin output insn-count.txt stays there), with a 60 s limit.
// ok when QEMU exits kTestGuestExit, the output is complete, its plugin_api lies within the
// qemu_api range, and check_test_guest_counts finds nothing. A missing plugin or test guest
// file is an error result too (not an exception). Throws isolab::Error only when work_dir
// cannot be created.
InsnPluginPreflight preflight_insn_plugin(ProcessRunner& runner, const InsnPluginFiles& files,
                                          const std::filesystem::path& work_dir, int vcpus = 1);

}  // namespace isolab
