#include "results/result_file.h"

#include "base/error.h"
#include "base/files.h"
#include "base/json_document.h"

namespace isolab {

namespace {

constexpr std::size_t kMaxResultBytes = 512u << 20;

}  // namespace

nlohmann::json read_json_file(const std::filesystem::path& file) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) throw Error(file.string() + ": cannot read: " + ec.message());
  if (size > kMaxResultBytes) {
    throw Error(file.string() + ": " + std::to_string(size) + " bytes, larger than the " +
                std::to_string(kMaxResultBytes) + " byte limit");
  }
  const std::string text = read_file(file, kMaxResultBytes);
  try {
    return parse_json_document(text, file.string());
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(file.string() + ": not valid JSON at byte " + std::to_string(e.byte) + ": " +
                e.what());
  }
}

std::filesystem::path result_file(const std::filesystem::path& p) {
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) return p / "result.json";
  return p;
}

nlohmann::json load_result(const std::filesystem::path& run_dir_or_file) {
  return read_json_file(result_file(run_dir_or_file));
}

}  // namespace isolab
