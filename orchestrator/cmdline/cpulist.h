// CPU sets and the kernel's CPU list / hex mask grammars.
//
// Contract:
//  - CpuSet is a bitmap of `nbits` CPUs (0 <= nbits <= kMaxCpus). Set operations between sets
//    of different widths use the wider width; equality compares the set bits only.
//  - parse_cpulist() follows lib/bitmap.c bitmap_parselist() of Linux 6.1 exactly: items are
//    separated by ',' or whitespace (empty items allowed), an item is `a`, `a-b`, `a-b:used/group`,
//    `all` (case-insensitive, may carry `:used/group`), and `N` stands for nbits-1 anywhere a
//    number may appear. Errors map to the kernel's: EINVAL (bad syntax, `10-1`, group size 0,
//    used > group), ERANGE (a bit >= nbits), EOVERFLOW (a number that does not fit 32 bits).
//    The grammar is documented in Documentation/admin-guide/kernel-parameters.rst "cpu lists".
//  - parse_cpumask_hex() follows lib/bitmap.c bitmap_parse(): comma-separated 32-bit hex chunks,
//    least significant chunk last, as in /proc/irq/default_smp_affinity or
//    /sys/devices/virtual/workqueue/cpumask ("ff", "00000000,000000ff").
//  - to_list() prints like the kernel's "%*pbl" (sorted ranges "2-23,26-47", empty set = "").
//    to_mask() prints like "%*pb" (32-bit chunks, the first one without leading zero padding
//    beyond the width of nbits).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace isolab {

// Upper bound for a CPU bitmap width: x86 CONFIG_NR_CPUS is at most 8192 (MAXSMP).
inline constexpr unsigned kMaxCpus = 8192;

class CpuSet {
 public:
  CpuSet() = default;
  // Throws isolab::Error when nbits > kMaxCpus.
  explicit CpuSet(unsigned nbits);
  static CpuSet all(unsigned nbits);
  // A set of `nbits` with the given CPUs; throws isolab::Error for a CPU >= nbits.
  static CpuSet of(unsigned nbits, std::initializer_list<unsigned> cpus);

  unsigned nbits() const { return static_cast<unsigned>(bits_.size()); }
  bool test(unsigned cpu) const { return cpu < bits_.size() && bits_[cpu]; }
  // Throws isolab::Error when cpu >= nbits.
  void set(unsigned cpu, bool value = true);
  void reset(unsigned cpu) {
    if (cpu < bits_.size()) bits_[cpu] = false;
  }
  bool empty() const;
  unsigned count() const;
  std::optional<unsigned> first() const;
  std::optional<unsigned> last() const;
  std::vector<unsigned> cpus() const;

  // Same bits in a bitmap of `nbits` (bits >= nbits are dropped).
  CpuSet resized(unsigned nbits) const;
  CpuSet operator|(const CpuSet& o) const;
  CpuSet operator&(const CpuSet& o) const;
  CpuSet operator-(const CpuSet& o) const;  // andnot
  bool intersects(const CpuSet& o) const { return !(*this & o).empty(); }
  bool subset_of(const CpuSet& o) const { return (*this - o).empty(); }
  bool operator==(const CpuSet& o) const;

  std::string to_list() const;  // "%*pbl"
  std::string to_mask() const;  // "%*pb"

 private:
  std::vector<bool> bits_;
};

// The kernel's error class for a CPU list / mask.
enum class CpuListErrc { kInvalid, kRange, kOverflow };
const char* errc_name(CpuListErrc e);  // "EINVAL", "ERANGE", "EOVERFLOW"

class CpuListError : public Error {
 public:
  CpuListError(CpuListErrc errc, std::string token, const std::string& message)
      : Error(message), errc_(errc), token_(std::move(token)) {}
  CpuListErrc errc() const { return errc_; }
  const std::string& token() const { return token_; }  // the offending item as written

 private:
  CpuListErrc errc_;
  std::string token_;
};

// Result of a CPU list parse that does not throw. On failure `set` holds what the kernel would
// have set before it stopped (bitmap_parselist() sets regions one by one; irqaffinity= keeps
// that partial mask).
struct CpuListParse {
  CpuSet set;
  std::optional<CpuListErrc> errc;
  std::string bad_token;   // the item that failed, as written
  std::string message;     // "cpulist '<text>': <errno>: <what> in '<item>'"
  bool uses_last = false;  // `N` or `all` appears (their meaning depends on nbits)
  // The smallest bitmap width at which no region of the list is ERANGE: the largest
  // explicit range end + 1 over the regions parsed ("0-15:2/4" needs 16 although its last
  // member is 13; "7" needs 8). A range ending in `N` needs only its explicit start + 1 ("2-N"
  // needs 3); `N` and `all` alone need nothing (0). Covers the regions parsed before an error.
  unsigned min_nbits = 0;
  bool ok() const { return !errc.has_value(); }
};

// Never throws for any input (nbits is clamped to kMaxCpus, nbits 0 makes every item ERANGE).
CpuListParse try_parse_cpulist(std::string_view text, unsigned nbits);
// Throws CpuListError (message names the offending item and the errno) on failure.
CpuSet parse_cpulist(std::string_view text, unsigned nbits);
// Hex mask, lib/bitmap.c bitmap_parse(). Throws CpuListError (EINVAL: non-hex character,
// EOVERFLOW: a chunk wider than 32 bits or a bit >= nbits set).
CpuSet parse_cpumask_hex(std::string_view text, unsigned nbits);

}  // namespace isolab
