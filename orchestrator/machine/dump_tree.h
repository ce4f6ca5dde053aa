// What a customer hands over, read as one tree of files: a directory, or an archive (a sos
// report tarball, a must-gather tarball, the sysinfo.tgz inside a must-gather).
//
// Contract:
//  - Paths are '/'-separated and relative to the top of the directory or archive, without "./"
//    or a trailing '/' ("sos_commands/kernel/uname_-a"). Every entry is indexed with its kind;
//    directories an archive only implies (a file "a/b/c" without "a/b/" entries) are indexed too.
//  - Symlinks are resolved inside the tree only, never on the disk: a relative target against
//    the link's directory, an absolute one against the top (a dump mirrors '/'), at most 40
//    links deep. A link that leaves the tree or names nothing reads as absent.
//  - A directory is indexed at open() without following links; a file's bytes are read when
//    asked for. An archive is read whole at open() with libarchive (any format and filter it
//    knows: tar, gzip, xz, bzip2, zstd, ...; never an external tar): a file's bytes are kept
//    when it is at most kMaxKeptFileBytes and outside the folders that hold logs and packages
//    (kept_in_archive()); others are indexed but read as absent.
//  - Errors (isolab::Error, naming the path given): PATH does not exist or is neither a
//    directory nor an archive libarchive reads; an archive that is cut short or corrupt, with
//    the number of entries read and the last one ("a truncated or corrupt archive ... after 412
//    entries (last 'sys/devices/...'): libarchive: Truncated tar archive") — never a partial
//    tree; more than kMaxEntries entries or kMaxKeptBytes of kept bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct archive;  // libarchive's handle

namespace isolab {

inline constexpr uint64_t kMaxKeptFileBytes = uint64_t{16} << 20;
inline constexpr uint64_t kMaxKeptBytes = uint64_t{1} << 30;
inline constexpr size_t kMaxEntries = 4'000'000;

// Whether the first bytes of a file are an archive DumpTree::open() reads (a tar header, or the
// gzip, xz, bzip2 or zstd magic); a text file (YAML, TuneD variables, a command line) is not.
bool looks_like_archive(std::string_view head);

// Whether an archive's file at `path` has its bytes kept (see the contract): not under
// var/log/, var/lib/, var/cache/, usr/, lib/, lib64/, sos_logs/, sos_commands/logs/ or
// sos_reports/, at any depth below a top folder of the archive.
bool kept_in_archive(std::string_view path);

class DumpTree {
 public:
  enum class Kind { kFile, kDir, kSymlink };

  // A directory or an archive on the disk (see the contract).
  static DumpTree open(const std::filesystem::path& path);
  // An archive held in memory; `name` names it in errors and in display().
  static DumpTree from_archive_bytes(std::string name, std::string_view bytes);
  // A tree of the given files (path -> bytes), for tests and small inputs.
  static DumpTree in_memory(std::string name,
                            const std::vector<std::pair<std::string, std::string>>& files);

  const std::string& name() const { return name_; }
  bool from_archive() const { return archive_; }
  // The entry at `path` after following symlinks; nullopt when absent or dangling.
  std::optional<Kind> kind(std::string_view path) const;
  bool is_dir(std::string_view path) const { return kind(path) == Kind::kDir; }
  bool is_file(std::string_view path) const { return kind(path) == Kind::kFile; }
  // The file's bytes after following symlinks; nullopt when absent, a directory, dangling, or
  // not kept. Reading a directory's file that vanished or cannot be read throws isolab::Error.
  std::optional<std::string> read(std::string_view path) const;
  // The text of a symlink at `path` (not followed); nullopt when it is not a symlink.
  std::optional<std::string> link_target(std::string_view path) const;
  // The names directly under directory `dir` ("" is the top), sorted; links followed.
  std::vector<std::string> children(std::string_view dir) const;
  // Every path, sorted.
  std::vector<std::string> paths() const;

 private:
  struct Entry {
    Kind kind = Kind::kFile;
    std::string target;                  // a symlink's text
    std::optional<std::string> content;  // an archive's kept bytes
    bool on_disk = false;                // a directory's file, read from root_ / path
  };
  std::optional<std::string> resolve(std::string_view path) const;
  void add(std::string path, Entry e);
  void read_archive(const std::string& label, ::archive* a);
  void index_directory();

  std::string name_;
  std::filesystem::path root_;
  bool archive_ = false;
  uint64_t kept_bytes_ = 0;
  std::map<std::string, Entry, std::less<>> entries_;
};

// Where a file of a tree is, for messages: "dump.tar.gz:proc/cmdline" in an archive,
// "DIR/proc/cmdline" in a directory.
std::string display_path(const DumpTree& tree, std::string_view path);

}  // namespace isolab
