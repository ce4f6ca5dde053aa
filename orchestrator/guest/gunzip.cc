#include "guest/gunzip.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>

namespace isolab {

GunzipResult gunzip(std::string_view gz, std::size_t max_bytes) {
  GunzipResult r;
  std::unique_ptr<archive, int (*)(archive*)> a(archive_read_new(), archive_read_free);
  if (!a) {
    r.error = "libarchive: out of memory";
    return r;
  }
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_raw(a.get());
  archive_entry* entry = nullptr;
  if (archive_read_open_memory(a.get(), gz.data(), gz.size()) != ARCHIVE_OK ||
      archive_read_next_header(a.get(), &entry) != ARCHIVE_OK ||
      archive_filter_code(a.get(), 0) != ARCHIVE_FILTER_GZIP) {
    const char* e = archive_error_string(a.get());
    r.error = e ? e : "not a gzip stream";
    return r;
  }
  char buf[64 * 1024];
  for (;;) {
    const la_ssize_t n = archive_read_data(a.get(), buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      const char* e = archive_error_string(a.get());
      r.error = e ? e : "corrupt gzip stream";
      return r;
    }
    if (r.data.size() + static_cast<std::size_t>(n) > max_bytes) {
      r.data.append(buf, max_bytes - r.data.size());
      r.error = "more than " + std::to_string(max_bytes) + " bytes";
      return r;
    }
    r.data.append(buf, static_cast<std::size_t>(n));
  }
  r.complete = true;
  return r;
}

}  // namespace isolab
