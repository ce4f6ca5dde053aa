// The result channel: a byte stream the guest writes to its second serial port (ttyS1, raw
// mode), separate from the console, carrying length-prefixed records.
//
// Format (ours), per record:
//   "@@ISOLAB REC <nonce> <name> <rc> <length>\n" <length raw bytes> "\n"
// and once at the end: "@@ISOLAB DONE <nonce>\n".
// <nonce> is a per-boot random token the host puts in the plan; records with another nonce
// are ignored (a guest kernel can print anything, including forged markers, but only on the
// console, and records are length-framed so their content cannot forge a header).
// <name> is [A-Za-z0-9_.-]+, <rc> a decimal exit status, <length> a decimal byte count.
// A name ending in ".gz" says the bytes are the record's data compressed with gzip (RFC 1952):
// /init compresses records of more than 4 KiB (trace text shrinks about 14 times, and the
// emulated UART is the slowest part of a boot under TCG). parse_channel gives such a record
// under its name without ".gz", decompressed (at most 256 MiB); a stream that does not
// decompress whole is a problem and leaves the record truncated with what came out.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

struct ChannelRecord {
  std::string name;
  int rc = 0;
  std::string data;
  bool truncated = false;  // the stream ended before <length> bytes arrived
};

struct ChannelContents {
  std::vector<ChannelRecord> records;  // in arrival order
  bool done = false;                   // the DONE marker with our nonce was seen
  std::vector<std::string> problems;   // malformed headers, foreign nonces, junk (sanitized)

  // The last record with this name, or nullptr.
  const ChannelRecord* find(const std::string& name) const;
  // name -> data of every complete record (last one wins).
  std::map<std::string, std::string> as_map() const;
};

// Parses a result channel stream. Never throws on hostile input; limits: at most 4096 records,
// record length at most 256 MiB (larger declared lengths are reported and skipped).
ChannelContents parse_channel(std::string_view stream, const std::string& nonce);

}  // namespace isolab
