#include "kernel/build_log.h"

#include <algorithm>
#include <regex>
#include <set>
#include <vector>

#include "base/error.h"
#include "base/files.h"
#include "base/text.h"

namespace isolab {

namespace {

// Splits into lines without copying; lines longer than 4 KiB are cut for the regexes (a
// build log may carry huge lines, e.g. from a failing generated file).
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out = text_lines(text);
  for (std::string_view& l : out)
    if (l.size() > 4096) l = l.substr(0, 4096);
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

std::size_t count_build_steps(std::string_view log) {
  std::size_t n = 0;
  for (std::string_view l : lines_of(log)) {
    if (l.size() < 5 || l[0] != ' ' || l[1] != ' ') continue;
    std::size_t i = 2;
    while (i < l.size() && ((l[i] >= 'A' && l[i] <= 'Z') || (l[i] >= '0' && l[i] <= '9') ||
                            l[i] == '_' || l[i] == '-'))
      ++i;
    // At least two tag characters, then a blank: "  CC      x", not "  Warning: ..."
    if (i >= 4 && l[2] >= 'A' && l[2] <= 'Z' && i < l.size() && l[i] == ' ') ++n;
  }
  return n;
}

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

std::string BuildWarning::describe() const {
  std::string s = file;
  if (line > 0) s += ":" + std::to_string(line);
  if (column > 0) s += ":" + std::to_string(column);
  s += ": warning: " + message;
  if (!klass.empty()) s += " [" + klass + "]";
  return s;
}

namespace {

std::string strip_source(std::string path, const std::string& source_dir) {
  if (!source_dir.empty()) {
    std::string prefix = source_dir.back() == '/' ? source_dir : source_dir + "/";
    if (path.rfind(prefix, 0) == 0) path.erase(0, prefix.size());
  }
  while (path.rfind("../", 0) == 0) path.erase(0, 3);
  return path;
}

int to_int(const std::csub_match& m) {
  if (!m.matched || m.length() > 9) return 0;
  return std::stoi(m.str());
}

// gcc: "file:line[:col]: warning: message [-Wclass]" (clang adds the same suffix).
std::optional<BuildWarning> compiler_warning(std::string_view l, const std::string& src) {
  static const std::regex re(R"(^(\S+?):(\d+):(?:(\d+):)? ?warning: (.*?)(?: \[(-W[^\]]+)\])?$)");
  std::cmatch m;
  if (!search(l, re, &m)) return std::nullopt;
  BuildWarning w;
  w.file = strip_source(m[1].str(), src);
  w.line = to_int(m[2]);
  w.column = to_int(m[3]);
  w.message = m[4].str();
  w.klass = m[5].matched ? m[5].str() : "";
  if (w.file == ".config" || (w.file.size() > 7 && w.file.substr(w.file.size() - 7) == ".config") ||
      w.file.find("Kconfig") != std::string::npos)
    w.klass = "kconfig";
  return w;
}

// objtool, modpost, ld: no line numbers.
std::optional<BuildWarning> tool_warning(std::string_view l, const std::string& src) {
  static const std::regex objtool(R"(^(\S+): warning: objtool: (.*)$)");
  static const std::regex modpost(R"(^WARNING: modpost: (.*)$)");
  static const std::regex ld(R"(^(?:\S*-)?ld(?:\.\w+)?: warning: (.*)$)");
  std::cmatch m;
  BuildWarning w;
  if (search(l, objtool, &m)) {
    w.file = strip_source(m[1].str(), src);
    w.klass = "objtool";
    w.message = m[2].str();
  } else if (search(l, modpost, &m)) {
    w.klass = "modpost";
    w.message = m[1].str();
  } else if (search(l, ld, &m)) {
    w.klass = "ld";
    w.message = m[1].str();
  } else {
    return std::nullopt;
  }
  return w;
}

std::string clean_message(std::string s) {
  s = replace_all(s, "\xe2\x80\x98", "'");
  s = replace_all(s, "\xe2\x80\x99", "'");
  return sanitize_excerpt(s, 300);
}

}  // namespace

std::vector<BuildWarning> parse_build_warnings(std::string_view log,
                                               const std::string& source_dir) {
  std::vector<BuildWarning> out;
  for (auto l : lines_of(log)) {
    while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
    if (l.find("warning: ") == std::string_view::npos &&
        l.find("WARNING: ") == std::string_view::npos &&
        l.find(":warning: ") == std::string_view::npos)
      continue;
    auto w = compiler_warning(l, source_dir);
    if (!w) w = tool_warning(l, source_dir);
    if (!w) continue;
    w->file = sanitize_excerpt(w->file, 200);
    w->message = clean_message(w->message);
    if (std::find(out.begin(), out.end(), *w) == out.end()) out.push_back(std::move(*w));
  }
  return out;
}

std::vector<std::string> patch_touched_files(std::string_view patch) {
  std::set<std::string> files;
  std::string minus;
  auto path_of = [](std::string_view l) {
    l.remove_prefix(4);
    l = l.substr(0, l.find('\t'));  // diff -u puts a timestamp after a tab
    if (l.substr(0, 2) == "a/" || l.substr(0, 2) == "b/") l.remove_prefix(2);
    return std::string(l);
  };
  for (auto l : lines_of(patch)) {
    if (l.substr(0, 4) == "--- ") minus = path_of(l);
    if (l.substr(0, 4) != "+++ ") continue;
    std::string plus = path_of(l);
    if (plus == "dev/null" || l.substr(4) == "/dev/null") plus = minus;
    if (!plus.empty() && plus != "dev/null") files.insert(sanitize_excerpt(plus, 200));
  }
  return {files.begin(), files.end()};
}

std::string build_log_source_dir(std::string_view log) {
  static const std::string script = "/scripts/kconfig/merge_config.sh";
  for (auto l : lines_of(log)) {
    if (l.substr(0, 4) != "### ") continue;
    std::size_t at = l.find(script);
    if (at == std::string_view::npos) continue;
    std::string_view dir = l.substr(4, at - 4);
    if (dir.find(' ') == std::string_view::npos) return std::string(dir);
  }
  return "";
}

nlohmann::json build_warning_to_json(const BuildWarning& w) {
  return {{"file", w.file},
          {"line", w.line},
          {"column", w.column},
          {"class", w.klass},
          {"message", w.message}};
}

BuildWarning build_warning_from_json(const nlohmann::json& j) {
  auto need = [&](const char* k, bool number) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(k) ||
        (number ? !j.at(k).is_number_integer() : !j.at(k).is_string()))
      throw Error(std::string("build warning: field \"") + k + "\" missing or not a " +
                  (number ? "integer" : "string"));
    return j.at(k);
  };
  BuildWarning w;
  w.file = need("file", false).get<std::string>();
  w.line = need("line", true).get<int>();
  w.column = need("column", true).get<int>();
  w.klass = need("class", false).get<std::string>();
  w.message = need("message", false).get<std::string>();
  return w;
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
