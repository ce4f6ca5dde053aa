// Guest initramfs assembly with libarchive (cpio "newc", the format the kernel's
// init/initramfs.c unpacks; see Documentation/driver-api/early-userspace/buffer-format.rst).
//
// The image is two concatenated archives: a base image (busybox, the workload tools and their
// shared libraries) that is cached by content, and a small per-boot plan archive holding /init.
// The kernel unpacks concatenated newc archives in order, so the plan's /init wins.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sys/process.h"

namespace isolab {

struct ImageFile {
  std::filesystem::path host;  // file on the host (symlinks are followed)
  std::string guest;           // absolute path in the guest, e.g. "/usr/bin/cyclictest"
  unsigned mode = 0755;
};

// Writes a newc archive with the given files, their parent directories, and the device
// nodes /dev/console (5,1) and /dev/null (1,3) so that init has a console before devtmpfs is
// mounted. Throws isolab::Error naming the file or the libarchive error.
void write_cpio(const std::filesystem::path& out, const std::vector<ImageFile>& files,
                bool with_base_dirs);

// Writes a newc archive holding in-memory files: (guest path, content, mode).
struct MemoryFile {
  std::string guest;
  std::string content;
  unsigned mode = 0644;
};
void write_cpio_memory(const std::filesystem::path& out, const std::vector<MemoryFile>& files);

// The shared libraries a dynamically linked ELF needs, from `ldd` (through the runner),
// including the dynamic loader. An empty list for a static binary. Throws if ldd reports a
// missing library ("not found"), naming it.
std::vector<std::filesystem::path> shared_libraries(ProcessRunner& runner,
                                                    const std::filesystem::path& binary);

struct BaseImageInputs {
  std::filesystem::path busybox = "/bin/busybox";  // must be static (busybox-static)
  std::vector<std::filesystem::path> tools;        // put in /usr/bin with their libraries
};

struct BaseImage {
  std::filesystem::path path;  // the cached cpio
  std::string sha256;          // key over every input file's guest path and content
  bool from_cache = false;
};

// Builds (or takes from <cache_dir>/initramfs/<key>.cpio) the base image. Published by
// atomic rename, so concurrent builders never see a torn file.
BaseImage ensure_base_image(ProcessRunner& runner, const BaseImageInputs& in,
                            const std::filesystem::path& cache_dir);

// Concatenates files into out (base image + plan archive).
void concatenate_files(const std::vector<std::filesystem::path>& parts,
                       const std::filesystem::path& out);

}  // namespace isolab
