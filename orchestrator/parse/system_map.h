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
  std::vector<KernelSymbol> text;  // ascending address
  std::uint64_t text_end = 0;      // the address of _etext when present, else the last symbol's
};
SystemMap parse_system_map(std::string_view text);

// The function containing pc: the last text symbol at or below pc, when pc < text_end;
// nullopt below the first symbol or at/above text_end (a module, the vsyscall page, or an
// address from a kernel relocated by KASLR that does not match the map).
std::optional<std::string> kernel_function_at(const SystemMap& map, std::uint64_t pc);

}  // namespace isolab
