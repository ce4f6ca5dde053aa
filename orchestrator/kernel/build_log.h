// Pure scanners over tool output: the first compiler error of a kernel build log, and the
// file/hunk/line of a patch that does not apply (GNU patch --dry-run, git apply --check -v).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isolab {

// The first line of a make/gcc log that reports an error, in this order of preference:
// a compiler diagnostic "<file>:<line>:<col>: error: ..." or "...: fatal error: ...";
// a linker/assembler "<file>:<line>: error: ..." or "undefined reference to"; a make
// "make[N]: *** ... Error N" line. Returned trimmed and sanitized (printable ASCII, at most
// 400 bytes; gcc's UTF-8 quotes U+2018/U+2019 become '), with every "<source_dir>/" removed so
// that paths read "mm/vmstat.c:..."; "" when the log has none of these.
std::string first_build_error(std::string_view log, const std::string& source_dir = "");

// One compiler or kbuild warning of a build log (what kernel test robots report).
struct BuildWarning {
  std::string file;     // relative to the source tree ("mm/vmstat.c"), ".config", "vmlinux.o"
  int line = 0;         // 0 when the tool gives none
  int column = 0;       // 0 when the tool gives none
  std::string klass;    // gcc's "-Wunused-variable" from "[-W...]"; "kconfig" for a .config
                        // warning, "objtool", "modpost", "ld" for those tools; "" otherwise
  std::string message;  // the text after "warning: ", without the "[-W...]" suffix

  // "mm/vmstat.c:2162:13: warning: unused variable 'x' [-Wunused-variable]"
  std::string describe() const;
  bool operator==(const BuildWarning&) const = default;
};

// The warnings of a kernel build log (make with gcc, C locale), in log order, duplicates (same
// file, line, column, class and message: a header warned about once per includer) dropped.
// Recognized lines: gcc/clang "<file>:<line>:<col>: warning: <msg> [-W<class>]" (also without
// the column), Kconfig "<file>:<line>:warning: <msg>", objtool "<obj>: warning: objtool: <msg>",
// modpost "WARNING: modpost: <msg>", ld "ld: warning: <msg>". "<source_dir>/" is removed from
// paths (an O= build prints absolute source paths) and a "../" prefix too; messages are
// sanitized (printable ASCII, gcc's U+2018/U+2019 quotes as ', at most 300 bytes). Notes
// ("note: ...", "In function ...") are not warnings. Never throws.
std::vector<BuildWarning> parse_build_warnings(std::string_view log,
                                               const std::string& source_dir = "");

// The kernel source directory an isolab build log names: the directory of the
// "scripts/kconfig/merge_config.sh" its "### " command header runs; "" when absent.
std::string build_log_source_dir(std::string_view log);

// JSON form used in result.json (variants.<v>.build_warnings[]):
// {"file", "line", "column", "class", "message"}. from_json throws isolab::Error naming the
// field when the object does not have that shape.
nlohmann::json build_warning_to_json(const BuildWarning& w);
BuildWarning build_warning_from_json(const nlohmann::json& j);

// The files a unified diff (git format-patch or diff -u) changes: the "b/" side of each
// "+++ b/<path>" header, or the "a/" side of "--- a/<path>" when the file is deleted
// ("+++ /dev/null"); without a/ b/ prefixes the path as written. Sorted, unique.
std::vector<std::string> patch_touched_files(std::string_view patch_text);

// The number of Kbuild action lines in a make log (quiet output, V=0): lines of two spaces,
// an upper-case tag and the target, as "  CC      mm/vmstat.o", "  LD      vmlinux",
// "  HOSTCC  scripts/basic/fixdep", "  CC [M]  ...". The progress of a kernel build is this
// count against the same count in the log of an earlier build (see kernel.cc); it counts
// objects and generated files alike, so both sides must be counted with this function.
std::size_t count_build_steps(std::string_view log);

// Where a patch failed to apply.
struct PatchFailure {
  std::string file;    // path inside the tree, "mm/vmstat.c"
  int hunk = 0;        // 1-based hunk number within that file; 0 if unknown
  int line = 0;        // line in the original file where the hunk was expected; 0 if unknown
  std::string reason;  // "does not apply", "file not found", "already applied", ...
  // "hunk #2 of mm/vmstat.c does not apply (at line 1234)", "mm/foo.c: file not found", ...
  std::string describe() const;
};

// Parses `patch -p1 --dry-run --batch` output (GNU patch 2.7: "checking file F",
// "Hunk #N FAILED at L.", "can't find file to patch", "Reversed (or previously applied)
// patch detected"). Returns the first failure, nullopt if the output shows none.
std::optional<PatchFailure> parse_patch_dry_run(std::string_view output);

// Parses `git apply --check -v` stderr (apply.c: "error: patch failed: F:L",
// "error: F: does not exist in index", "error: F: No such file or directory",
// "error: F: already exists in working directory"). Hunk is unknown (0) here.
std::optional<PatchFailure> parse_git_apply_check(std::string_view output);

// The 1-based number of the hunk for `file` in a unified diff whose header is
// "@@ -<old_line>,..." (git apply reports the failing hunk's original start line; GNU patch
// numbers hunks per file). 0 when no hunk of that file starts at old_line.
int hunk_number_at(std::string_view patch_text, const std::string& file, int old_line);

}  // namespace isolab
