#include "kernel/build_log.h"

#include <regex>
#include <vector>

#include "base/files.h"

namespace isolab {

namespace {

// Splits into lines without copying; lines longer than 4 KiB are cut for the regexes (a
// build log may carry huge lines, e.g. from a failing generated file).
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view l = text.substr(pos, nl - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.size() > 4096) l = l.substr(0, 4096);
    out.push_back(l);
    pos = nl + 1;
  }
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string clean(std::string_view l, const std::string& source_dir) {
  while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
  std::string s(l);
  s = replace_all(s, "\xe2\x80\x98", "'");
  s = replace_all(s, "\xe2\x80\x99", "'");
  if (!source_dir.empty()) {
    std::string prefix = source_dir;
    if (prefix.back() != '/') prefix += '/';
    s = replace_all(s, prefix, "");
  }
  return sanitize_excerpt(s, 400);
}

bool search(std::string_view l, const std::regex& re, std::cmatch* m = nullptr) {
  std::cmatch local;
  return std::regex_search(l.data(), l.data() + l.size(), m ? *m : local, re);
}

}  // namespace

std::string first_build_error(std::string_view log, const std::string& source_dir) {
  static const std::regex compiler(R"(^\S+:\d+:\d+: (fatal )?error: )");
  static const std::regex other(
      R"(^\S+:\d+: (error|Error): |undefined reference to |^ld: .*error)");
  static const std::regex make_err(R"(^make(\[\d+\])?: \*\*\* )");
  auto ls = lines_of(log);
  for (auto l : ls)
    if (search(l, compiler)) return clean(l, source_dir);
  for (auto l : ls)
    if (search(l, other)) return clean(l, source_dir);
  for (auto l : ls)
    if (search(l, make_err)) return clean(l, source_dir);
  return "";
}

std::string PatchFailure::describe() const {
  if (hunk > 0) {
    std::string s = "hunk #" + std::to_string(hunk) + " of " + file + " " + reason;
    if (line > 0) s += " (at line " + std::to_string(line) + ")";
    return s;
  }
  std::string s = file.empty() ? reason : file + ": " + reason;
  if (line > 0) s += " (at line " + std::to_string(line) + ")";
  return s;
}

std::optional<PatchFailure> parse_patch_dry_run(std::string_view output) {
  static const std::regex checking(R"(^checking file (.+)$)");
  static const std::regex hunk_failed(R"(^Hunk #(\d+) FAILED at (\d+))");
  static const std::regex no_file(R"(^can't find file to patch at input line (\d+))");
  static const std::regex reversed(R"(^Reversed \(or previously applied\) patch detected)");
  std::string current;
  std::cmatch m;
  for (auto l : lines_of(output)) {
    if (search(l, checking, &m)) {
      current = m[1].str();
    } else if (search(l, hunk_failed, &m)) {
      return PatchFailure{current, std::stoi(m[1].str()), std::stoi(m[2].str()), "does not apply"};
    } else if (search(l, no_file, &m)) {
      // The file name is in the "--- a/..." header lines that patch quotes after this; the
      // git apply check names it, so keep the reason here and let the caller merge.
      return PatchFailure{"", 0, 0,
                          "file to patch not found (patch input line " + m[1].str() + ")"};
    } else if (search(l, reversed)) {
      return PatchFailure{current, 0, 0, "is already applied (reversed or previously applied)"};
    }
  }
  return std::nullopt;
}

std::optional<PatchFailure> parse_git_apply_check(std::string_view output) {
  static const std::regex failed(R"(^error: patch failed: (.+):(\d+)$)");
  static const std::regex missing(
      R"(^error: (.+): (does not exist in index|No such file or directory)$)");
  static const std::regex exists(R"(^error: (.+): already exists in (working directory|index)$)");
  std::cmatch m;
  for (auto l : lines_of(output)) {
    if (search(l, failed, &m))
      return PatchFailure{m[1].str(), 0, std::stoi(m[2].str()), "does not apply"};
    if (search(l, missing, &m)) return PatchFailure{m[1].str(), 0, 0, "file not found"};
    if (search(l, exists, &m)) return PatchFailure{m[1].str(), 0, 0, "already exists"};
  }
  return std::nullopt;
}

int hunk_number_at(std::string_view patch_text, const std::string& file, int old_line) {
  static const std::regex header(R"(^\+\+\+ (b/)?(\S+))");
  static const std::regex hunk(R"(^@@ -(\d+)(,\d+)? \+\d+(,\d+)? @@)");
  std::string current;
  int n = 0;
  std::cmatch m;
  for (auto l : lines_of(patch_text)) {
    if (search(l, header, &m)) {
      current = m[2].str();
      n = 0;
    } else if (current == file && search(l, hunk, &m)) {
      ++n;
      if (std::stoi(m[1].str()) == old_line) return n;
    }
  }
  return 0;
}

}  // namespace isolab
