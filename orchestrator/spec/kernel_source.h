// Where a kernel comes from: the spec's "source" object (spec/spec.cc reads it, docs/spec.md
// documents it) and the source of a kernel build request (kernel/kernel.h).
#pragma once

#include <filesystem>
#include <string>

namespace isolab {

struct KernelSourceSpec {
  enum class Kind { tarball, git, prebuilt };
  Kind kind = Kind::tarball;
  // kind == tarball: a kernel source tarball with one top-level directory (kernel.org or
  // Debian linux-source layout); any format `tar -xf` reads.
  std::filesystem::path tarball = "/usr/src/linux-source-6.1.tar.xz";
  // kind == git: a clone URL or local repository path, and a ref (branch, tag or commit).
  std::string git;
  std::string ref = "HEAD";
  // kind == prebuilt: an existing bzImage and, optionally, its `uname -r` string.
  std::filesystem::path prebuilt;
  std::string prebuilt_release;  // empty: unknown
};

}  // namespace isolab
