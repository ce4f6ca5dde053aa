#include "machine/dump_tree.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <memory>
#include <system_error>

#include "base/error.h"
#include "base/files.h"

namespace isolab {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_path(std::string_view p) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= p.size()) {
    size_t slash = p.find('/', pos);
    if (slash == std::string_view::npos) slash = p.size();
    if (slash > pos) parts.emplace_back(p.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return parts;
}

std::string join_path(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

// Lexical normal form of an archive's path; nullopt when it climbs above the top.
std::optional<std::string> normal_path(std::string_view p) {
  std::vector<std::string> out;
  for (std::string& c : split_path(p)) {
    if (c == ".") continue;
    if (c == "..") {
      if (out.empty()) return std::nullopt;
      out.pop_back();
      continue;
    }
    out.push_back(std::move(c));
  }
  return join_path(out);
}

// Folders whose files say nothing of the CPUs and can be large.
constexpr std::string_view kUnkeptFolders[] = {
    "var/log/", "var/lib/",  "var/cache/",         "usr/",        "lib/",
    "lib64/",   "sos_logs/", "sos_commands/logs/", "sos_reports/"};

std::string archive_error(::archive* a) {
  const char* e = archive_error_string(a);
  return e ? e : "unknown error";
}

using ArchivePtr = std::unique_ptr<::archive, int (*)(::archive*)>;

ArchivePtr new_reader() {
  ArchivePtr a(archive_read_new(), archive_read_free);
  if (!a) throw Error("libarchive: out of memory");
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  return a;
}

}  // namespace

bool looks_like_archive(std::string_view head) {
  static constexpr std::string_view kMagic[] = {std::string_view("\x1f\x8b", 2),
                                                std::string_view("\xfd"
                                                                 "7zXZ\0",
                                                                 6),
                                                "BZh", std::string_view("\x28\xb5\x2f\xfd", 4)};
  for (std::string_view m : kMagic)
    if (head.substr(0, m.size()) == m) return true;
  return head.size() >= 262 && head.substr(257, 5) == "ustar";
}

bool kept_in_archive(std::string_view path) {
  for (std::string_view folder : kUnkeptFolders) {
    const size_t at = path.find(folder);
    if (at != std::string_view::npos && (at == 0 || path[at - 1] == '/')) return false;
  }
  return true;
}

void DumpTree::add(std::string path, Entry e) {
  if (entries_.size() >= kMaxEntries)
    throw Error(name_ + ": more than " + std::to_string(kMaxEntries) + " entries");
  const std::vector<std::string> parts = split_path(path);
  std::string parent;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    parent += (parent.empty() ? "" : "/") + parts[i];
    entries_.try_emplace(parent, Entry{Kind::kDir, "", std::nullopt, false});
  }
  entries_[std::move(path)] = std::move(e);
}

void DumpTree::read_archive(const std::string& label, ::archive* a) {
  archive_entry* e = nullptr;
  size_t n = 0;
  std::string last = "(none)";
  auto fail = [&](const std::string& why) {
    throw Error(label + ": a truncated or corrupt archive: reading stopped after " +
                std::to_string(n) + " entries (last '" + last + "'): libarchive: " + why);
  };
  for (;;) {
    const int r = archive_read_next_header(a, &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) fail(archive_error(a));
    const char* raw = archive_entry_pathname(e);
    const auto path = normal_path(raw ? raw : "");
    if (!path || path->empty()) {
      if (archive_read_data_skip(a) < ARCHIVE_WARN) fail(archive_error(a));
      continue;
    }
    last = *path;
    ++n;
    Entry entry;
    if (const char* hard = archive_entry_hardlink(e)) {
      entry = {Kind::kSymlink, "/" + normal_path(hard).value_or(""), std::nullopt, false};
    } else if (archive_entry_filetype(e) == AE_IFDIR) {
      entry.kind = Kind::kDir;
    } else if (archive_entry_filetype(e) == AE_IFLNK) {
      const char* t = archive_entry_symlink(e);
      entry = {Kind::kSymlink, t ? t : "", std::nullopt, false};
    } else if (archive_entry_filetype(e) != AE_IFREG) {
      if (archive_read_data_skip(a) < ARCHIVE_WARN) fail(archive_error(a));
      continue;
    }
    const auto size = static_cast<uint64_t>(archive_entry_size(e));
    if (entry.kind == Kind::kFile && size <= kMaxKeptFileBytes && kept_in_archive(*path)) {
      if (kept_bytes_ + size > kMaxKeptBytes)
        throw Error(label + ": more than " + std::to_string(kMaxKeptBytes >> 20) +
                    " MiB of files to read; unpack it and give the folder of the machine");
      std::string bytes;
      char buf[64 * 1024];
      for (la_ssize_t got; (got = archive_read_data(a, buf, sizeof buf)) != 0;) {
        if (got < 0) fail(archive_error(a));
        bytes.append(buf, static_cast<size_t>(got));
        if (bytes.size() > kMaxKeptFileBytes)
          fail("the entry holds more bytes than its header says");
      }
      kept_bytes_ += bytes.size();
      entry.content = std::move(bytes);
    } else if (archive_read_data_skip(a) < ARCHIVE_WARN) {
      fail(archive_error(a));
    }
    if (entry.kind == Kind::kDir)
      entries_.try_emplace(*path, entry);
    else
      add(*path, std::move(entry));
  }
}

void DumpTree::index_directory() {
  std::error_code ec;
  fs::recursive_directory_iterator it(root_, fs::directory_options::none, ec), end;
  if (ec) throw Error(name_ + ": cannot read the directory: " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw Error(name_ + ": cannot read the directory: " + ec.message());
    // Lexically: fs::relative() would follow a link to its target's name.
    const fs::path rel = it->path().lexically_relative(root_);
    const fs::file_status st = it->symlink_status(ec);
    if (ec) continue;
    if (fs::is_symlink(st))
      add(rel.generic_string(),
          {Kind::kSymlink, fs::read_symlink(it->path(), ec).string(), std::nullopt, false});
    else if (fs::is_directory(st))
      add(rel.generic_string(), {Kind::kDir, "", std::nullopt, false});
    else if (fs::is_regular_file(st))
      add(rel.generic_string(), {Kind::kFile, "", std::nullopt, true});
  }
}

DumpTree DumpTree::open(const fs::path& path) {
  DumpTree t;
  t.name_ = path.string();
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw Error(t.name_ + ": no such file or directory");
  if (fs::is_directory(st)) {
    t.root_ = path;
    t.index_directory();
    return t;
  }
  t.archive_ = true;
  ArchivePtr a = new_reader();
  if (archive_read_open_filename(a.get(), path.c_str(), size_t{64} * 1024) != ARCHIVE_OK)
    throw Error(t.name_ +
                ": not a directory or an archive libarchive reads: " + archive_error(a.get()));
  t.read_archive(t.name_, a.get());
  return t;
}

DumpTree DumpTree::from_archive_bytes(std::string name, std::string_view bytes) {
  DumpTree t;
  t.name_ = std::move(name);
  t.archive_ = true;
  ArchivePtr a = new_reader();
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
    throw Error(t.name_ + ": not an archive libarchive reads: " + archive_error(a.get()));
  t.read_archive(t.name_, a.get());
  return t;
}

DumpTree DumpTree::in_memory(std::string name,
                             const std::vector<std::pair<std::string, std::string>>& files) {
  DumpTree t;
  t.name_ = std::move(name);
  t.archive_ = true;
  for (const auto& [path, bytes] : files)
    if (auto p = normal_path(path); p && !p->empty()) t.add(*p, {Kind::kFile, "", bytes, false});
  return t;
}

std::optional<std::string> DumpTree::resolve(std::string_view path) const {
  std::vector<std::string> todo = split_path(path);
  std::reverse(todo.begin(), todo.end());
  std::vector<std::string> done;
  int hops = 0;
  while (!todo.empty()) {
    std::string c = std::move(todo.back());
    todo.pop_back();
    if (c == ".") continue;
    if (c == "..") {
      if (done.empty()) return std::nullopt;
      done.pop_back();
      continue;
    }
    done.push_back(std::move(c));
    const auto it = entries_.find(join_path(done));
    if (it == entries_.end()) return std::nullopt;
    if (it->second.kind != Kind::kSymlink) continue;
    if (++hops > 40) return std::nullopt;
    done.pop_back();
    const std::string& target = it->second.target;
    if (!target.empty() && target.front() == '/') done.clear();
    std::vector<std::string> t = split_path(target);
    for (auto r = t.rbegin(); r != t.rend(); ++r) todo.push_back(*r);
  }
  return join_path(done);
}

std::optional<DumpTree::Kind> DumpTree::kind(std::string_view path) const {
  const auto p = resolve(path);
  if (!p) return std::nullopt;
  if (p->empty()) return Kind::kDir;
  const auto it = entries_.find(*p);
  return it == entries_.end() ? std::nullopt : std::optional<Kind>(it->second.kind);
}

std::optional<std::string> DumpTree::read(std::string_view path) const {
  const auto p = resolve(path);
  if (!p) return std::nullopt;
  const auto it = entries_.find(*p);
  if (it == entries_.end() || it->second.kind != Kind::kFile) return std::nullopt;
  if (it->second.content) return it->second.content;
  if (!it->second.on_disk) return std::nullopt;
  const fs::path file = root_ / *p;
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec) throw Error(display_path(*this, *p) + ": cannot read: " + ec.message());
  if (size > kMaxKeptFileBytes) return std::nullopt;
  return read_file(file, kMaxKeptFileBytes);
}

std::optional<std::string> DumpTree::link_target(std::string_view path) const {
  const auto it = entries_.find(path);
  if (it == entries_.end() || it->second.kind != Kind::kSymlink) return std::nullopt;
  return it->second.target;
}

std::vector<std::string> DumpTree::children(std::string_view dir) const {
  const auto p = resolve(dir);
  std::vector<std::string> out;
  if (!p) return out;
  const std::string prefix = p->empty() ? "" : *p + "/";
  for (auto it = entries_.lower_bound(prefix); it != entries_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    const std::string_view rest = std::string_view(it->first).substr(prefix.size());
    if (!rest.empty() && rest.find('/') == std::string_view::npos) out.emplace_back(rest);
  }
  return out;
}

std::vector<std::string> DumpTree::paths() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [path, e] : entries_) out.push_back(path);
  return out;
}

std::string display_path(const DumpTree& tree, std::string_view path) {
  if (tree.from_archive()) return tree.name() + ":" + std::string(path);
  return (fs::path(tree.name()) / std::string(path)).string();
}

}  // namespace isolab
