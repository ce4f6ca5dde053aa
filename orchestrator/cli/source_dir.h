// The source tree this isolab was built from (CMake's CMAKE_SOURCE_DIR, an absolute path):
// where `isolab run` finds guest-images/ and kernel-configs/, and what `isolab import` records.
#pragma once

namespace isolab {

// The path, as CMake gave it at configure time. Only source_dir.cc is compiled with it, so
// that no other compile command carries a path of this checkout (ccache then shares the rest
// between clones).
const char* isolab_source_dir();

}  // namespace isolab
