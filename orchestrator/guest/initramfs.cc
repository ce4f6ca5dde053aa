#include "guest/initramfs.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "base/error.h"
#include "base/files.h"

namespace fs = std::filesystem;

namespace isolab {

namespace {

struct ArchiveFree {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

class CpioWriter {
 public:
  explicit CpioWriter(const fs::path& out) : out_(out), a_(archive_write_new()) {
    if (!a_) throw Error("libarchive: archive_write_new failed");
    check(archive_write_set_format_cpio_newc(a_.get()), "set format newc");
    // No block padding: parts are concatenated.
    check(archive_write_set_bytes_in_last_block(a_.get(), 1), "set last block");
    check(archive_write_open_filename(a_.get(), out.c_str()), "open " + out.string());
  }
  void dir(const std::string& path) {
    if (!dirs_.insert(path).second) return;
    auto e = entry(path, AE_IFDIR, 0755, 0);
    check(archive_write_header(a_.get(), e.get()), "header " + path);
  }
  void parents(const std::string& path) {
    fs::path p = fs::path(path).parent_path();
    std::vector<std::string> chain;
    while (!p.empty() && p != "/") {
      chain.push_back(p.string());
      p = p.parent_path();
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) dir(*it);
  }
  void file(const std::string& path, const std::string& content, unsigned mode) {
    parents(path);
    auto e = entry(path, AE_IFREG, mode, 0);
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(content.size()));
    check(archive_write_header(a_.get(), e.get()), "header " + path);
    if (!content.empty() && archive_write_data(a_.get(), content.data(), content.size()) !=
                                static_cast<la_ssize_t>(content.size()))
      check(ARCHIVE_FATAL, "data " + path);
  }
  void chardev(const std::string& path, unsigned major_, unsigned minor_, unsigned mode) {
    parents(path);
    auto e = entry(path, AE_IFCHR, mode, makedev(major_, minor_));
    check(archive_write_header(a_.get(), e.get()), "header " + path);
  }
  void symlink(const std::string& path, const std::string& target) {
    parents(path);
    auto e = entry(path, AE_IFLNK, 0777, 0);
    archive_entry_set_symlink(e.get(), target.c_str());
    check(archive_write_header(a_.get(), e.get()), "header " + path);
  }
  void close() { check(archive_write_close(a_.get()), "close " + out_.string()); }

 private:
  std::unique_ptr<archive_entry, EntryFree> entry(const std::string& path, unsigned type,
                                                  unsigned mode, dev_t rdev) {
    std::unique_ptr<archive_entry, EntryFree> e(archive_entry_new());
    // newc paths are relative to the root ("bin/busybox").
    std::string rel = path.substr(path.find_first_not_of('/'));
    archive_entry_set_pathname(e.get(), rel.c_str());
    archive_entry_set_filetype(e.get(), type);
    archive_entry_set_perm(e.get(), mode);
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    archive_entry_set_mtime(e.get(), 0, 0);  // reproducible images
    archive_entry_set_nlink(e.get(), type == AE_IFDIR ? 2 : 1);
    archive_entry_set_size(e.get(), 0);
    if (rdev) archive_entry_set_rdev(e.get(), rdev);
    return e;
  }
  void check(int r, const std::string& what) {
    if (r < ARCHIVE_WARN) {
      const char* msg = archive_error_string(a_.get());
      throw Error("initramfs " + out_.string() + ": " + what + ": " +
                  (msg ? msg : "libarchive error"));
    }
  }
  fs::path out_;
  std::unique_ptr<archive, ArchiveFree> a_;
  std::set<std::string> dirs_;
};

void add_base_dirs(CpioWriter& w) {
  for (const char* d : {"/bin", "/sbin", "/usr", "/usr/bin", "/usr/sbin", "/lib", "/lib64", "/etc",
                        "/proc", "/sys", "/dev", "/tmp", "/run", "/root", "/var"})
    w.dir(d);
  w.chardev("/dev/console", 5, 1, 0600);
  w.chardev("/dev/null", 1, 3, 0666);
}

fs::path temp_beside(const fs::path& p) {
  std::random_device rd;
  fs::path t = p;
  t += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  return t;
}

}  // namespace

void write_cpio(const fs::path& out, const std::vector<ImageFile>& files, bool with_base_dirs) {
  CpioWriter w(out);
  if (with_base_dirs) add_base_dirs(w);
  for (const auto& f : files) {
    if (f.guest.empty() || f.guest[0] != '/' || f.guest.find("..") != std::string::npos)
      throw Error("initramfs: bad guest path '" + f.guest + "'");
    w.file(f.guest, read_file(f.host), f.mode);
  }
  w.close();
}

void write_cpio_memory(const fs::path& out, const std::vector<MemoryFile>& files) {
  CpioWriter w(out);
  for (const auto& f : files) w.file(f.guest, f.content, f.mode);
  w.close();
}

std::vector<fs::path> shared_libraries(ProcessRunner& runner, const fs::path& binary) {
  ProcessSpec s;
  s.argv = {"ldd", binary.string()};
  s.timeout = std::chrono::seconds(30);
  ProcessResult r = runner.run(s);
  std::string text = r.out + r.err;
  if (text.find("not a dynamic executable") != std::string::npos ||
      text.find("statically linked") != std::string::npos)
    return {};
  if (!r.ok())
    throw Error("ldd " + binary.string() + ": " + r.describe() + ": " +
                sanitize_excerpt(text, 400));
  std::vector<fs::path> libs;
  std::istringstream in(r.out);
  std::string line;
  static const std::regex arrow(R"(^\s*(\S+)\s+=>\s+(\S+)\s+\(0x[0-9a-f]+\))");
  static const std::regex direct(R"(^\s*(/\S+)\s+\(0x[0-9a-f]+\))");
  static const std::regex missing(R"(^\s*(\S+)\s+=>\s+not found)");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, missing))
      throw Error(binary.string() + " needs " + m[1].str() +
                  ", which ldd did not find on this host");
    if (std::regex_search(line, m, arrow))
      libs.emplace_back(m[2].str());
    else if (std::regex_search(line, m, direct))
      libs.emplace_back(m[1].str());
  }
  return libs;
}

BaseImage ensure_base_image(ProcessRunner& runner, const BaseImageInputs& in,
                            const fs::path& cache_dir) {
  std::vector<ImageFile> files;
  files.push_back({in.busybox, "/bin/busybox", 0755});
  std::set<std::string> seen{"/bin/busybox"};
  for (const auto& tool : in.tools) {
    if (!fs::exists(tool)) throw Error("guest image: tool not found: " + tool.string());
    std::string g = "/usr/bin/" + tool.filename().string();
    if (seen.insert(g).second) files.push_back({tool, g, 0755});
    for (const auto& lib : shared_libraries(runner, tool))
      if (seen.insert(lib.string()).second) files.push_back({lib, lib.string(), 0755});
  }
  std::string keysrc = "isolab-initramfs-v1\n";
  for (const auto& f : files) keysrc += f.guest + " " + sha256_file(f.host) + "\n";
  BaseImage img;
  img.sha256 = sha256_hex(keysrc);
  img.path = cache_dir / "initramfs" / (img.sha256.substr(0, 16) + ".cpio");
  if (fs::exists(img.path)) {
    img.from_cache = true;
    return img;
  }
  fs::create_directories(img.path.parent_path());
  fs::path tmp = temp_beside(img.path);
  try {
    write_cpio(tmp, files, true);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
  fs::rename(tmp, img.path);
  return img;
}

void concatenate_files(const std::vector<fs::path>& parts, const fs::path& out) {
  fs::path tmp = temp_beside(out);
  {
    std::ofstream o(tmp, std::ios::binary);
    if (!o) throw Error("cannot write " + tmp.string());
    for (const auto& p : parts) {
      std::ifstream i(p, std::ios::binary);
      if (!i) throw Error("cannot read " + p.string());
      o << i.rdbuf();
    }
    if (!o) throw Error("cannot write " + tmp.string());
  }
  fs::rename(tmp, out);
}

}  // namespace isolab
