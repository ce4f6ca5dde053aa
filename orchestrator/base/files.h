// Small file helpers used everywhere results or caches are written.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace isolab {

// Reads at most max_bytes of the file at path (binary-safe). Throws isolab::Error naming the
// path when it cannot be opened.
std::string read_file(const std::filesystem::path& path, std::size_t max_bytes = SIZE_MAX);

// Writes content to path crash-consistently: a temporary file in the same directory, fsync,
// then rename(2) over path, so a reader sees the old file or the new one, never a torn one.
// Creates parent directories. Throws isolab::Error naming the path on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

// Lowercase hex SHA-256 of data (OpenSSL EVP).
std::string sha256_hex(std::string_view data);

// Lowercase hex SHA-256 of the file's content; throws isolab::Error if unreadable.
std::string sha256_file(const std::filesystem::path& path);

// Replaces every byte outside printable ASCII (and tab/newline) with '?', and cuts the text to
// max_bytes with a "[... N bytes cut]" suffix. Used before quoting untrusted guest output in
// messages and reports.
std::string sanitize_excerpt(std::string_view text, std::size_t max_bytes = 2000);

}  // namespace isolab
