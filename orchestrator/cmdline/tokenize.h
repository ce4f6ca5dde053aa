// Kernel command line tokenizer.
//
// Contract: tokenize_cmdline() splits a command line exactly as Linux 6.1 lib/cmdline.c
// next_arg() (driven by kernel/params.c parse_args()) does:
//  - tokens are separated by the kernel's isspace() characters (space, \t, \n, \v, \f, \r and
//    the byte 0xA0, which lib/ctype.c counts as a space); leading/trailing spaces are skipped;
//  - double quotes protect spaces; `"foo=bar"` and `foo="bar"` both give (foo, "bar", quoted);
//    an unbalanced quote does not fail: it runs to the end of the line (`foo="1$2` -> "1$2");
//  - the value is everything after the first '=' (`a=b=` -> "b="), `foo=` gives an empty value,
//    a word without '=' gives no value; a '=' in the first position does not count (kernel quirk);
//  - names compare with '-' and '_' equivalent (kernel/params.c parameq()); `normalized` has
//    every '-' of the name turned into '_'; values are kept as written;
//  - repeated parameters are all returned, in order;
//  - a bare `--` ends the kernel's parameters: it is not returned, and every later token has
//    `after_dashes` set (those are arguments for init).
// Limits: input longer than kMaxCmdlineBytes (1 MiB) throws isolab::Error. The kernel's own limit
// (x86 COMMAND_LINE_SIZE 2048 bytes including the NUL) is not enforced here; analyze() cuts the
// line where the kernel does (cmdline/analyze.h).
// Bytes 0x00-0x08, 0x0e-0x1f and 0x7f (binary junk) throw isolab::Error naming the byte and
// offset; bytes >= 0x80 (UTF-8) are accepted.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

inline constexpr size_t kMaxCmdlineBytes = size_t{1} << 20;
// x86 arch/x86/include/asm/setup.h COMMAND_LINE_SIZE (bytes, including the terminating NUL).
inline constexpr size_t kX86CommandLineSize = 2048;

struct CmdlineToken {
  std::string name;        // as written (quotes removed as the kernel removes them)
  std::string normalized;  // name with '-' -> '_'
  std::optional<std::string> value;
  bool quoted = false;        // a double quote was removed from the name or the value
  bool after_dashes = false;  // follows a bare `--`: passed to init, not a kernel parameter
  std::string raw;            // the token's text in the input, as written
  size_t offset = 0;          // byte offset of `raw` in the input

  // "name" or "name=value" with the name normalized; the form used to compare parameters.
  std::string canonical() const;
};

std::vector<CmdlineToken> tokenize_cmdline(std::string_view line);

// The kernel's isspace() (lib/ctype.c): the C locale spaces plus 0xA0 (Latin-1 NBSP), which
// separate command-line parameters and cpulist regions.
bool kernel_isspace(char c);

// '-' -> '_' (kernel/params.c dash2underscore()).
std::string normalize_param_name(std::string_view name);

}  // namespace isolab
