#include "cmdline/cpulist.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "cmdline/tokenize.h"

namespace isolab {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
    if (out.size() > 200) {
      out += "...";
      break;
    }
  }
  return out;
}

// Cursor over the text, with the kernel's end-of-string rule ('\0' or '\n').
struct Cursor {
  std::string_view s;
  size_t pos = 0;
  char at(size_t p) const { return p < s.size() ? s[p] : '\0'; }
  char cur() const { return at(pos); }
};

bool end_of_str(char c) { return c == '\0' || c == '\n'; }
bool end_of_region_sep(char c) { return kernel_isspace(c) || c == ','; }
bool end_of_region(char c) { return end_of_region_sep(c) || end_of_str(c); }

struct Region {
  uint64_t start = 0, end = 0, off = 0, group_len = 0;
  bool start_is_last = false, end_is_last = false;
};

// bitmap_getnum(): 'N' or a decimal number that fits 32 bits.
std::optional<CpuListErrc> getnum(Cursor& c, uint64_t& num, unsigned lastbit, bool* is_last) {
  if (c.cur() == 'N') {
    num = lastbit;
    ++c.pos;
    if (is_last) *is_last = true;
    return std::nullopt;
  }
  size_t len = 0;
  bool overflow = false;
  uint64_t n = 0;
  while (c.at(c.pos + len) >= '0' && c.at(c.pos + len) <= '9') {
    const unsigned d = c.at(c.pos + len) - '0';
    if (n > (UINT64_MAX - d) / 10) overflow = true;
    n = n * 10 + d;
    ++len;
  }
  if (len == 0) return CpuListErrc::kInvalid;
  c.pos += len;
  if (overflow || n > UINT32_MAX) return CpuListErrc::kOverflow;
  num = n;
  return std::nullopt;
}

bool strncasecmp_all(const Cursor& c) {
  for (size_t i = 0; i < 3; ++i) {
    const char ch = c.at(c.pos + i);
    if (std::tolower(static_cast<unsigned char>(ch)) != "all"[i]) return false;
  }
  return true;
}

// bitmap_parse_region(). Returns an error or nothing; advances the cursor.
std::optional<CpuListErrc> parse_region(Cursor& c, Region& r, unsigned lastbit, bool& used_all) {
  if (strncasecmp_all(c)) {
    r.start = 0;
    r.end = lastbit;
    c.pos += 3;
    used_all = true;
  } else {
    if (auto e = getnum(c, r.start, lastbit, &r.start_is_last)) return e;
    if (end_of_region(c.cur())) {
      r.end = r.start;
      r.end_is_last = r.start_is_last;
      r.off = r.end + 1;
      r.group_len = r.end + 1;
      return std::nullopt;
    }
    if (c.cur() != '-') return CpuListErrc::kInvalid;
    ++c.pos;
    if (auto e = getnum(c, r.end, lastbit, &r.end_is_last)) return e;
  }
  if (end_of_region(c.cur())) {
    r.off = r.end + 1;
    r.group_len = r.end + 1;
    return std::nullopt;
  }
  if (c.cur() != ':') return CpuListErrc::kInvalid;
  ++c.pos;
  if (auto e = getnum(c, r.off, lastbit, nullptr)) return e;
  if (c.cur() != '/') return CpuListErrc::kInvalid;
  ++c.pos;
  return getnum(c, r.group_len, lastbit, nullptr);
}

// The narrowest bitmap in which the region's end is not ERANGE (see CpuListParse::min_nbits).
unsigned region_min_nbits(const Region& r, bool used_all) {
  if (used_all) return 0;
  if (!r.end_is_last) return static_cast<unsigned>(r.end) + 1;
  if (!r.start_is_last) return static_cast<unsigned>(r.start) + 1;
  return 0;
}

const char* what_for(CpuListErrc e) {
  switch (e) {
    case CpuListErrc::kInvalid:
      return "invalid syntax or range";
    case CpuListErrc::kRange:
      return "CPU number beyond the bitmap";
    case CpuListErrc::kOverflow:
      return "number too large";
  }
  return "?";
}

}  // namespace

const char* errc_name(CpuListErrc e) {
  switch (e) {
    case CpuListErrc::kInvalid:
      return "EINVAL";
    case CpuListErrc::kRange:
      return "ERANGE";
    case CpuListErrc::kOverflow:
      return "EOVERFLOW";
  }
  return "?";
}

CpuSet::CpuSet(unsigned nbits) {
  if (nbits > kMaxCpus)
    throw Error("CPU bitmap of " + std::to_string(nbits) + " bits exceeds the limit of " +
                std::to_string(kMaxCpus));
  bits_.assign(nbits, false);
}

CpuSet CpuSet::all(unsigned nbits) {
  CpuSet s(nbits);
  s.bits_.assign(nbits, true);
  return s;
}

CpuSet CpuSet::of(unsigned nbits, std::initializer_list<unsigned> cpus) {
  CpuSet s(nbits);
  for (unsigned c : cpus) s.set(c);
  return s;
}

void CpuSet::set(unsigned cpu, bool value) {
  if (cpu >= bits_.size())
    throw Error("CPU " + std::to_string(cpu) + " is outside a bitmap of " +
                std::to_string(bits_.size()) + " CPUs");
  bits_[cpu] = value;
}

bool CpuSet::empty() const { return std::find(bits_.begin(), bits_.end(), true) == bits_.end(); }

unsigned CpuSet::count() const {
  return static_cast<unsigned>(std::count(bits_.begin(), bits_.end(), true));
}

std::optional<unsigned> CpuSet::first() const {
  for (unsigned i = 0; i < bits_.size(); ++i)
    if (bits_[i]) return i;
  return std::nullopt;
}

std::optional<unsigned> CpuSet::last() const {
  for (unsigned i = nbits(); i-- > 0;)
    if (bits_[i]) return i;
  return std::nullopt;
}

std::vector<unsigned> CpuSet::cpus() const {
  std::vector<unsigned> out;
  for (unsigned i = 0; i < bits_.size(); ++i)
    if (bits_[i]) out.push_back(i);
  return out;
}

CpuSet CpuSet::resized(unsigned nbits) const {
  CpuSet s(nbits);
  for (unsigned i = 0; i < std::min(nbits, this->nbits()); ++i) s.bits_[i] = bits_[i];
  return s;
}

CpuSet CpuSet::operator|(const CpuSet& o) const {
  CpuSet s = resized(std::max(nbits(), o.nbits()));
  for (unsigned i = 0; i < o.nbits(); ++i) s.bits_[i] = s.bits_[i] || o.bits_[i];
  return s;
}

CpuSet CpuSet::operator&(const CpuSet& o) const {
  CpuSet s(std::max(nbits(), o.nbits()));
  for (unsigned i = 0; i < std::min(nbits(), o.nbits()); ++i) s.bits_[i] = bits_[i] && o.bits_[i];
  return s;
}

CpuSet CpuSet::operator-(const CpuSet& o) const {
  CpuSet s = resized(std::max(nbits(), o.nbits()));
  for (unsigned i = 0; i < o.nbits(); ++i)
    if (o.bits_[i]) s.bits_[i] = false;
  return s;
}

bool CpuSet::operator==(const CpuSet& o) const {
  const unsigned n = std::max(nbits(), o.nbits());
  for (unsigned i = 0; i < n; ++i)
    if (test(i) != o.test(i)) return false;
  return true;
}

std::string CpuSet::to_list() const {
  std::string out;
  unsigned i = 0;
  while (i < nbits()) {
    if (!bits_[i]) {
      ++i;
      continue;
    }
    unsigned j = i;
    while (j + 1 < nbits() && bits_[j + 1]) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(i);
    if (j > i) out += "-" + std::to_string(j);
    i = j + 1;
  }
  return out;
}

std::string CpuSet::to_mask() const {
  // lib/vsprintf.c bitmap_string(): 32-bit chunks, most significant first; the first chunk is
  // zero-padded to the hex width of its bits, the others to 8 digits.
  const unsigned n = nbits();
  if (n == 0) return "";
  unsigned chunksz = n % 32 ? n % 32 : 32;
  std::string out;
  for (int base = static_cast<int>(((n + 31) / 32 - 1) * 32); base >= 0; base -= 32) {
    uint32_t val = 0;
    for (unsigned b = 0; b < chunksz; ++b)
      if (test(base + b)) val |= 1u << b;
    char buf[16];
    std::snprintf(buf, sizeof buf, "%0*x", static_cast<int>((chunksz + 3) / 4), val);
    if (!out.empty()) out += ',';
    out += buf;
    chunksz = 32;
  }
  return out;
}

CpuListParse try_parse_cpulist(std::string_view text, unsigned nbits) {
  nbits = std::min(nbits, kMaxCpus);
  CpuListParse res;
  res.set = CpuSet(nbits);
  const unsigned lastbit = nbits - 1;  // wraps for nbits 0 as in the kernel; ERANGE follows
  Cursor c{text, 0};
  auto fail = [&](CpuListErrc e, size_t item_begin) {
    size_t item_end = item_begin;
    while (!end_of_region(c.at(item_end))) ++item_end;
    res.errc = e;
    res.bad_token = std::string(text.substr(item_begin, item_end - item_begin));
    res.message = "cpulist '" + printable(text) + "': " + errc_name(e) + ": " + what_for(e) +
                  " in '" + printable(res.bad_token) + "'";
    if (e == CpuListErrc::kRange)
      res.message += " (CPUs 0-" + std::to_string(nbits == 0 ? 0 : nbits - 1) + " exist)";
    return res;
  };
  for (;;) {
    while (end_of_region_sep(c.cur())) ++c.pos;
    if (end_of_str(c.cur())) break;
    const size_t item_begin = c.pos;
    Region r;
    bool used_all = false;
    if (auto e = parse_region(c, r, lastbit, used_all)) return fail(*e, item_begin);
    if (r.start > r.end || r.group_len == 0 || r.off > r.group_len)
      return fail(CpuListErrc::kInvalid, item_begin);
    if (r.end >= nbits) return fail(CpuListErrc::kRange, item_begin);
    for (uint64_t s = r.start; s <= r.end; s += r.group_len) {
      const uint64_t len = std::min<uint64_t>(r.end - s + 1, r.off);
      for (uint64_t b = s; b < s + len; ++b) res.set.set(static_cast<unsigned>(b));
    }
    res.uses_last = res.uses_last || used_all || r.start_is_last || r.end_is_last;
    res.min_nbits = std::max(res.min_nbits, region_min_nbits(r, used_all));
    if (end_of_str(c.cur())) break;
  }
  return res;
}

CpuSet parse_cpulist(std::string_view text, unsigned nbits) {
  CpuListParse p = try_parse_cpulist(text, nbits);
  if (!p.ok()) throw CpuListError(*p.errc, p.bad_token, p.message);
  return p.set;
}

CpuSet parse_cpumask_hex(std::string_view text, unsigned nbits) {
  nbits = std::min(nbits, kMaxCpus);
  const size_t nl = text.find('\n');
  const std::string_view s = text.substr(0, nl);
  auto fail = [&](CpuListErrc e, const std::string& what) -> CpuSet {
    throw CpuListError(e, std::string(s),
                       "cpumask '" + printable(s) + "': " + errc_name(e) + ": " + what);
  };
  const unsigned max_chunks = (nbits + 31) / 32;
  std::vector<uint32_t> chunks;  // least significant first
  long end = static_cast<long>(s.size()) - 1;
  for (;;) {
    while (end >= 0 && end_of_region_sep(s[end])) --end;
    if (end < 0) break;
    if (chunks.size() == max_chunks)
      return fail(CpuListErrc::kOverflow,
                  "more 32-bit chunks than " + std::to_string(nbits) + " CPUs need");
    uint32_t val = 0;
    for (int i = 0;; i += 4) {
      if (i == 32) {
        if (hex_value(s[end]) >= 0)
          return fail(CpuListErrc::kOverflow, "a comma-separated chunk has more than 8 digits");
        break;
      }
      const int h = hex_value(s[end]);
      if (h < 0)
        return fail(CpuListErrc::kInvalid, "'" + printable(s.substr(end, 1)) + "' at offset " +
                                               std::to_string(end) + " is not a hex digit");
      val |= static_cast<uint32_t>(h) << i;
      --end;
      if (end < 0 || end_of_region_sep(s[end])) break;
    }
    chunks.push_back(val);
  }
  CpuSet out(nbits);
  for (size_t ch = 0; ch < chunks.size(); ++ch)
    for (unsigned b = 0; b < 32; ++b)
      if (chunks[ch] >> b & 1u) {
        const uint64_t bit = ch * 32 + b;
        if (bit >= nbits)
          return fail(CpuListErrc::kOverflow, "CPU " + std::to_string(bit) + " set but only " +
                                                  std::to_string(nbits) + " CPUs exist");
        out.set(static_cast<unsigned>(bit));
      }
  return out;
}

}  // namespace isolab
