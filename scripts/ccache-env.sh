# Sourced by scripts/setup.sh and scripts/check-fast.sh (from the repository root): when ccache
# is installed, sets `cmake_launcher` to the CMake arguments that compile through it and keys
# its cache on paths relative to this checkout (CCACHE_BASEDIR, CCACHE_NOHASHDIR), so a fresh
# clone of the same commit elsewhere reuses what an earlier build compiled. Without ccache,
# `cmake_launcher` is empty and every build compiles everything.
# The precompiled headers (CMakeLists.txt ISOLAB_PCH) hit the cache only with the sloppiness
# ccache's manual asks for ("Precompiled headers"): pch_defines and time_macros (no source here
# uses __DATE__, __TIME__ or __TIMESTAMP__), and include_file_mtime/ctime, since the .gch is
# written moments before the files that include it are compiled.
# shellcheck shell=bash disable=SC2034 # cmake_launcher is read by the sourcing script
cmake_launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
  export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:+$CCACHE_SLOPPINESS,}pch_defines,time_macros,include_file_mtime,include_file_ctime"
  cmake_launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
