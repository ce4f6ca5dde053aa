// The kernel's System.map (written by the kernel's scripts/mksysmap from `nm -n vmlinux`): one
// symbol a line, "<address, hex> <type letter> <name>", sorted by address. Used to attribute
// guest kernel instructions counted per translation-block address to kernel functions. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

struct KernelSymbol {
  std::uint64_t address = 0;
  std::string name;
};

// The text symbols of a System.map (types t, T, w, W), sorted by address, each from its address
// up to the next text symbol. Lines of other types are skipped; so are lines that do not have
// the three fields or whose address is not hex (a truncated last line). Throws isolab::Error
// "System.map: no text symbol" when none is found (not a System.map).
struct SystemMap {
  std::vector<KernelSymbol> text;      // ascending address
  std::uint64_t text_end = 0;          // the address of _etext when present, else the last symbol's
  std::optional<std::uint64_t> stext;  // the address of _stext, when present
};
SystemMap parse_system_map(std::string_view text);

// The function containing pc: the last text symbol at or below pc, when pc < text_end;
// nullopt below the first symbol or at/above text_end (a module, the vsyscall page, or an
// address from a kernel relocated by KASLR that does not match the map).
std::optional<std::string> kernel_function_at(const SystemMap& map, std::uint64_t pc);

// Whether the booted kernel lies where its System.map says (pure). kallsyms_line is what the
// guest read from /proc/kallsyms for _stext ("ffffffff81000000 T _stext", a trailing newline
// allowed; the guest's record kallsyms_stext). "" when its address equals the map's _stext;
// otherwise why the map cannot name the guest's addresses: the guest sent no line (a kernel
// without CONFIG_KALLSYMS), a line that is not "<hex address> <type> _stext", an address of 0
// (kptr_restrict hides addresses), a map without _stext, or a different address ("the kernel
// runs at 0x... (/proc/kallsyms _stext), its System.map has it at 0x...: relocated by
// +0x..., as KASLR does"). Guest output is untrusted: the line is quoted sanitized and short.
std::string kernel_relocation_problem(const SystemMap& map, std::string_view kallsyms_line);

}  // namespace isolab
