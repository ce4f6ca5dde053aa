// Where a kernel comes from: the spec's "source" object (spec/spec.cc reads it, docs/spec.md
// documents it) and the source of a kernel build request (kernel/kernel.h). Header-only.
#pragma once

#include <filesystem>
#include <string>

namespace isolab {

// Which of a kernel test robot's checks isolab runs on a variant's patches (spec
// /kernel/robot_checks, docs/spec.md): checkpatch and includecheck (kernel/robot_checks.h), and
// the extra warnings of the touched .c files at W=1 and from sparse (kernel/extra_warnings.h).
// They change no kernel, so they are not part of any build key. Each is on by default; sparse
// runs only where the `sparse` program is installed.
struct RobotChecks {
  bool checkpatch = true;
  bool includecheck = true;
  bool w1 = true;      // make W=1 on the touched .c files, at the base and after the series
  bool sparse = true;  // make C=2 CHECK=sparse on them, in the same pass
};

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
