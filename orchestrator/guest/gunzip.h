// Decompressing a gzip stream held in memory (RFC 1952), through libarchive's gzip filter and
// raw format, for the result channel's compressed records (guest/channel.h).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace isolab {

struct GunzipResult {
  std::string data;       // what was decompressed, up to the error or max_bytes
  bool complete = false;  // the whole stream decompressed, within max_bytes
  std::string error;      // "" when complete; else libarchive's message or "more than N bytes"
};

// Decompresses `gz` (one gzip member; the input is untrusted: a truncated or corrupt stream
// gives what came out before the fault, with the error). Stops with an error after max_bytes of
// output, so a small record cannot expand without bound. Never throws.
GunzipResult gunzip(std::string_view gz, std::size_t max_bytes);

}  // namespace isolab
