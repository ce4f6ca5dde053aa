#include "kernel/cache.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "base/error.h"
#include "base/files.h"

namespace fs = std::filesystem;

namespace isolab {

namespace {

constexpr const char* kLastUse = ".isolab-last-use";

std::int64_t unix_seconds(fs::file_time_type t) {
  auto sys = std::chrono::file_clock::to_sys(t);
  return std::chrono::duration_cast<std::chrono::seconds>(sys.time_since_epoch()).count();
}

// mtime of the first path that exists, in Unix seconds; 0 when none does.
std::int64_t first_mtime(const std::vector<fs::path>& candidates) {
  for (const auto& p : candidates) {
    std::error_code ec;
    auto t = fs::last_write_time(p, ec);
    if (!ec) return unix_seconds(t);
  }
  return 0;
}

// Apparent size of every regular file under p (p itself when it is a file); symlinks are not
// followed. Entries that vanish while walking are ignored.
std::uint64_t tree_bytes(const fs::path& p) {
  std::error_code ec;
  auto st = fs::symlink_status(p, ec);
  if (ec) return 0;
  if (fs::is_regular_file(st)) return fs::file_size(p, ec);
  if (!fs::is_directory(st)) return 0;
  std::uint64_t sum = 0;
  fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_symlink(e2)) continue;
    if (it->is_regular_file(e2)) {
      auto n = it->file_size(e2);
      if (!e2) sum += n;
    }
  }
  return sum;
}

std::vector<std::string> dir_names(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  fs::directory_iterator it(dir, ec), end;
  if (ec) throw Error("cache: cannot read " + dir.string() + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw Error("cache: cannot read " + dir.string() + ": " + ec.message());
    std::string n = it->path().filename().string();
    if (!n.empty() && n[0] != '.' && it->is_directory(ec)) out.push_back(n);
  }
  return out;
}

CacheEntry make_entry(std::string kind, std::string id, std::vector<fs::path> paths,
                      fs::path lock) {
  CacheEntry e;
  e.kind = std::move(kind);
  e.id = std::move(id);
  e.paths = std::move(paths);
  e.lock = std::move(lock);
  return e;
}

std::vector<CacheEntry> scan_kernels(const fs::path& cache) {
  std::vector<CacheEntry> out;
  for (const auto& key : dir_names(cache / "kernels")) {
    const fs::path d = cache / "kernels" / key;
    CacheEntry e = make_entry("kernel", key, {d}, cache / "locks" / (key + ".lock"));
    e.bytes = tree_bytes(d);
    e.last_use = first_mtime({d / kLastUse, d / "meta.json", d});
    try {
      auto j = nlohmann::json::parse(read_file(d / "meta.json", 1 << 20));
      e.detail = j.value("kernel_release", "?") + " (" + j.value("variant_name", "?") + ")";
    } catch (const std::exception&) {
      e.detail = "incomplete (no readable meta.json)";
    }
    out.push_back(std::move(e));
  }
  return out;
}

// "gitdir: <cache>/src/<id>/.git/worktrees/<slot>" -> "<id>".
std::string slot_source(const fs::path& cache, const fs::path& worktree) {
  std::string text;
  try {
    text = read_file(worktree / ".git", 4096);
  } catch (const std::exception&) {
    return "";
  }
  const std::string src_prefix = (cache / "src").string() + "/";
  auto at = text.find(src_prefix);
  if (at == std::string::npos) return "";
  std::string rest = text.substr(at + src_prefix.size());
  return rest.substr(0, rest.find('/'));
}

std::vector<CacheEntry> scan_slots(const fs::path& cache) {
  std::set<std::string> ids;
  for (const auto& s : dir_names(cache / "worktrees")) ids.insert(s);
  for (const auto& s : dir_names(cache / "build")) ids.insert(s);
  std::vector<CacheEntry> out;
  for (const auto& slot : ids) {
    const fs::path wt = cache / "worktrees" / slot, bd = cache / "build" / slot;
    CacheEntry e = make_entry("slot", slot, {wt, fs::path(wt.string() + ".ready"), bd},
                              cache / "locks" / ("slot-" + slot + ".lock"));
    e.bytes = tree_bytes(wt) + tree_bytes(bd);
    e.last_use = first_mtime({bd / kLastUse, bd / ".config", wt, bd});
    e.source_id = slot_source(cache, wt);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<CacheEntry> scan_sources(const fs::path& cache, const std::vector<CacheEntry>& slots) {
  std::vector<CacheEntry> out;
  for (const auto& id : dir_names(cache / "src")) {
    const fs::path d = cache / "src" / id;
    CacheEntry e = make_entry("source", id, {d, fs::path(d.string() + ".json")},
                              cache / "locks" / ("src-" + id + ".lock"));
    e.bytes = tree_bytes(d);
    e.last_use = first_mtime({d / kLastUse, fs::path(d.string() + ".json"), d});
    for (const auto& s : slots)
      if (s.source_id == id) e.last_use = std::max(e.last_use, s.last_use);
    out.push_back(std::move(e));
  }
  return out;
}

std::string utc_text(std::int64_t t) {
  if (t <= 0) return "unknown";
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

// Removes one entry's paths; a kernel directory is renamed out of kernels/ first.
void remove_entry(const fs::path& cache, const CacheEntry& e) {
  for (const auto& p : e.paths) {
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(p, ec))) continue;
    fs::path victim = p;
    if (e.kind == "kernel") {
      victim = cache / "kernels" / (".prune-" + e.id + "-" + std::to_string(::getpid()));
      fs::rename(p, victim, ec);
      if (ec) throw Error("cache prune: cannot move " + p.string() + ": " + ec.message());
    }
    fs::remove_all(victim, ec);
    if (ec) throw Error("cache prune: cannot remove " + victim.string() + ": " + ec.message());
  }
}

// Index files map build inputs to a key; drop those naming a key that no longer exists.
void drop_stale_index(const fs::path& cache) {
  std::error_code ec;
  if (!fs::is_directory(cache / "index", ec)) return;
  for (fs::directory_iterator it(cache / "index", ec), end; !ec && it != end; it.increment(ec)) {
    std::string key;
    try {
      key = read_file(it->path(), 200).substr(0, 64);
    } catch (const std::exception&) {
      continue;
    }
    std::error_code e2;
    if (!fs::exists(cache / "kernels" / key, e2)) fs::remove(it->path(), e2);
  }
}

// Removes the git worktree metadata of a removed slot from its source repository.
void drop_worktree_metadata(const fs::path& cache, const CacheEntry& slot) {
  if (slot.source_id.empty()) return;
  std::error_code ec;
  fs::remove_all(cache / "src" / slot.source_id / ".git" / "worktrees" / slot.id, ec);
}

}  // namespace

void mark_cache_use(const fs::path& dir) {
  std::error_code ec;
  const fs::path f = dir / kLastUse;
  if (!fs::exists(f, ec)) std::ofstream(f).flush();
  fs::last_write_time(f, fs::file_time_type::clock::now(), ec);
}

std::vector<CacheEntry> scan_cache(const fs::path& cache) {
  std::vector<CacheEntry> all = scan_kernels(cache);
  std::vector<CacheEntry> slots = scan_slots(cache);
  std::vector<CacheEntry> sources = scan_sources(cache, slots);
  all.insert(all.end(), slots.begin(), slots.end());
  all.insert(all.end(), sources.begin(), sources.end());
  std::stable_sort(all.begin(), all.end(), [](const CacheEntry& a, const CacheEntry& b) {
    return a.last_use > b.last_use;
  });
  return all;
}

std::uint64_t parse_size(std::string_view text) {
  const std::string t(text);
  auto bad = [&]() -> Error {
    return Error("size '" + t + "': expected a number with an optional K, M, G or T suffix");
  };
  std::size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) ++i;
  if (i == 0) throw bad();
  double number = 0;
  try {
    std::size_t used = 0;
    number = std::stod(t.substr(0, i), &used);
    if (used != i) throw bad();
  } catch (const std::logic_error&) {  // invalid_argument, out_of_range
    throw bad();
  }
  std::string unit = t.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::map<std::string, int> kShift = {{"", 0},   {"B", 0},  {"K", 10},
                                                    {"M", 20}, {"G", 30}, {"T", 40}};
  std::string base = unit;
  if (base.size() == 3 && base.substr(1) == "IB") base = base.substr(0, 1);
  if (base.size() == 2 && base[1] == 'B') base = base.substr(0, 1);
  auto it = kShift.find(base);
  if (it == kShift.end()) throw bad();
  double bytes = std::ldexp(number, it->second);
  if (!(bytes >= 0) || bytes > 1.8e19) throw bad();
  return static_cast<std::uint64_t>(bytes);
}

std::string format_size(std::uint64_t bytes) {
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  std::ostringstream o;
  o.precision(1);
  o << std::fixed << v << " " << kUnits[u];
  return o.str();
}

std::vector<CacheEntry> select_prunable(const std::vector<CacheEntry>& entries,
                                        const PrunePolicy& policy,
                                        const std::set<std::string>& pinned) {
  if (!policy.keep_last && !policy.max_bytes)
    throw Error("cache prune: give --keep-last N and/or --max-size SIZE");
  if (policy.keep_last && *policy.keep_last < 0)
    throw Error("cache prune: --keep-last must be >= 0, got " + std::to_string(*policy.keep_last));
  // Newest first, so the first keep_last of each kind are kept.
  std::vector<const CacheEntry*> order;
  for (const auto& e : entries) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [](const CacheEntry* a, const CacheEntry* b) {
    return a->last_use > b->last_use;
  });
  std::set<const CacheEntry*> removed;
  if (policy.keep_last) {
    std::map<std::string, int> seen;
    for (const auto* e : order)
      if (++seen[e->kind] > *policy.keep_last && !pinned.count(e->kind + "/" + e->id))
        removed.insert(e);
  }
  // A source is needed while a kept slot uses it.
  auto needed_source = [&](const CacheEntry* e) {
    if (e->kind != "source") return false;
    for (const auto* s : order)
      if (s->kind == "slot" && s->source_id == e->id && !removed.count(s)) return true;
    return false;
  };
  for (auto it = removed.begin(); it != removed.end();)
    it = needed_source(*it) ? removed.erase(it) : std::next(it);
  if (policy.max_bytes) {
    auto kept_bytes = [&] {
      std::uint64_t sum = 0;
      for (const auto* e : order)
        if (!removed.count(e)) sum += e->bytes;
      return sum;
    };
    // Oldest first; re-scan after each removal (a removed slot frees its source).
    bool progress = true;
    while (kept_bytes() > *policy.max_bytes && progress) {
      progress = false;
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const CacheEntry* e = *it;
        if (removed.count(e) || pinned.count(e->kind + "/" + e->id) || needed_source(e)) continue;
        removed.insert(e);
        progress = true;
        break;
      }
    }
  }
  // Removal order: oldest first, slots before their sources.
  std::vector<CacheEntry> out;
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    if (removed.count(*it) && (*it)->kind != "source") out.push_back(**it);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    if (removed.count(*it) && (*it)->kind == "source") out.push_back(**it);
  return out;
}

// A source may be in use by a build that is creating its slot's worktree right now (that
// build holds a slot lock, not the source lock): every slot lock must be free too.
std::vector<std::unique_ptr<FileLock>> lock_for_removal(const fs::path& cache,
                                                        const CacheEntry& e) {
  std::vector<std::unique_ptr<FileLock>> held;
  auto l = FileLock::try_lock(e.lock);
  if (!l) return {};
  held.push_back(std::move(l));
  if (e.kind != "source") return held;
  std::error_code ec;
  for (fs::directory_iterator it(cache / "locks", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (n.rfind("slot-", 0) != 0) continue;
    auto sl = FileLock::try_lock(it->path());
    if (!sl) return {};
    held.push_back(std::move(sl));
  }
  return held;
}

PruneReport prune_cache(const fs::path& cache, const PrunePolicy& policy) {
  PruneReport r;
  std::vector<CacheEntry> entries = scan_cache(cache);
  for (const auto& e : entries) r.bytes_before += e.bytes;
  std::set<std::string> pinned;
  for (bool again = true; again;) {
    again = false;
    for (const auto& e : select_prunable(entries, policy, pinned)) {
      auto locks = lock_for_removal(cache, e);
      if (locks.empty()) {
        pinned.insert(e.kind + "/" + e.id);
        r.busy.push_back(e);
      } else {
        remove_entry(cache, e);
        if (e.kind == "slot") drop_worktree_metadata(cache, e);
        r.removed.push_back(e);
      }
      // Select again from what is left: a busy entry may mean an older one must go instead.
      std::erase_if(entries, [&](const CacheEntry& x) {
        return x.kind == e.kind && x.id == e.id && !locks.empty();
      });
      again = true;
      break;
    }
  }
  drop_stale_index(cache);
  r.bytes_after = 0;
  for (const auto& e : entries) r.bytes_after += e.bytes;
  return r;
}

std::string cache_list_text(const std::vector<CacheEntry>& entries) {
  std::ostringstream o;
  std::uint64_t total = 0;
  o << "kind    id                size        last use              detail\n";
  for (const auto& e : entries) {
    total += e.bytes;
    std::string id = e.kind == "kernel" ? e.id.substr(0, 16) : e.id;
    std::string detail = e.detail;
    if (e.kind == "slot" && !e.source_id.empty()) detail = "source " + e.source_id;
    char line[256];
    std::snprintf(line, sizeof line, "%-7s %-17s %-11s %-21s %s\n", e.kind.c_str(), id.c_str(),
                  format_size(e.bytes).c_str(), utc_text(e.last_use).c_str(), detail.c_str());
    o << line;
  }
  o << "total " << format_size(total) << " in " << entries.size() << " entries\n";
  return o.str();
}

std::unique_ptr<FileLock> hold_kernel_entry(const fs::path& cache, const std::string& build_key) {
  return std::make_unique<FileLock>(cache / "locks" / (build_key + ".lock"),
                                    FileLock::Mode::shared);
}

}  // namespace isolab
