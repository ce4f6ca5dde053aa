#!/usr/bin/env bash
# Times building isolab from nothing as `scripts/setup.sh --main-job` builds it (Release, no test
# programs, every default target: isolab and its guest tools) in a scratch directory with the
# compiler cache off, for the build options given, and prints the wall seconds of ninja and the
# five steps that took longest (from ninja's log, .ninja_log: start and end in ms per output).
# Compare two settings side by side under a timing harness, e.g.
#   farm-bench --vs 'bench/isolab-build.sh -DISOLAB_UNITY=OFF' -- bench/isolab-build.sh
# Usage: bench/isolab-build.sh [CMAKE_OPTION...]   (e.g. -DISOLAB_UNITY=OFF, -DISOLAB_PCH=ON)
# Run it on an otherwise idle machine: the figure is a wall time over every core (ninja -j nproc).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/isolab-bench-build.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

cmake -S "$root" -B "$scratch" -G Ninja -DCMAKE_BUILD_TYPE=Release -DISOLAB_TESTS=OFF "$@" \
  >"$scratch/configure.log"
start=$(date +%s.%N)
CCACHE_DISABLE=1 ninja -C "$scratch" >"$scratch/build.log" 2>&1 || {
  tail -n 40 "$scratch/build.log" >&2
  exit 1
}
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" 'BEGIN { printf "isolab-build: %.1f s (%s)\n", e - s, ARGV[1]; ARGV[1] = "" }' \
  "${*:-defaults}"
# .ninja_log's columns: start ms, end ms, mtime, output, command hash.
awk -F'\t' '!/^#/ { printf "%8.1f s  %s\n", ($2 - $1) / 1000, $4 }' "$scratch/.ninja_log" |
  sort -rn | head -n 5
