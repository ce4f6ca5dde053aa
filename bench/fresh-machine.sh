#!/usr/bin/env bash
# The wall times a new user meets, each measured on a fresh clone of this checkout's HEAD and
# printed beside the previous figure and the target of bench/fresh-machine.tsv as ratios:
#   main-job-cold  scripts/run-default.sh with every isolab cache empty (kernels, their sources,
#                  ccache, clang-tidy's record): the isolab build and both kernel builds included
#   main-job-warm  scripts/run-default.sh with this machine's caches (both kernels cached)
#   nightly        scripts/run-default.sh with both kernels cached and one patch of the series
#                  changed (its subject line), so the patched kernel is rebuilt, as a nightly run
#                  of a revised series is
#   test-cold      .ci/run (the README's test command) with every cache empty
#   test-warm      .ci/run with this machine's caches
#   isolab-build   bench/isolab-build.sh: isolab and its guest tools from nothing (no compiler
#                  cache), as scripts/setup.sh --main-job builds them
# "Cold" here empties the caches by environment variables (ISOLAB_CACHE_DIR, CCACHE_DIR,
# TIDY_CACHE_DIR, all under a scratch directory); the Debian packages stay installed, so a cold
# figure leaves out apt (about 1.5 min on a fresh machine; README "The main job").
# Usage: bench/fresh-machine.sh FIGURE...   Needs what the README's commands need; run on an
# otherwise idle machine (the figures are wall times). Prints, per figure, its seconds, the
# previous figure's seconds and the ratio, and the target's seconds and the ratio; for the main
# job, compare's summary lines first (on stderr).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
table="$root/bench/fresh-machine.tsv"
[ $# -gt 0 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/isolab-bench-fresh.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# Column $2 of the table's row for figure $1 (2: previous seconds, 3: target seconds).
figure_field() { awk -F'\t' -v f="$1" -v c="$2" '!/^#/ && $1 == f { print $c }' "$table"; }

# Empties every cache the commands use, for the rest of this process.
go_cold() {
  export ISOLAB_CACHE_DIR="$scratch/isolab-cache" CCACHE_DIR="$scratch/ccache"
  export TIDY_CACHE_DIR="$scratch/tidy-cache"
  mkdir -p "$ISOLAB_CACHE_DIR" "$CCACHE_DIR" "$TIDY_CACHE_DIR"
}

# Changes the subject of the series' first patch in the clone $1 (the patched kernel's cache key
# follows the patches' bytes).
touch_series() {
  local patch
  patch=$(find "$1/patches/vmstat-nohz" -name '0001-*.patch' | head -n 1)
  sed -i '0,/^Subject: /s//Subject: [nightly] /' "$patch"
}

# Runs figure $1 in a fresh clone; prints its wall seconds.
measure() {
  local clone="$scratch/clone-$1" start end
  git clone -q "$root" "$clone"
  case "$1" in
    main-job-cold | test-cold) go_cold ;;
    nightly) touch_series "$clone" ;;
  esac
  local cmd=(./scripts/run-default.sh)
  case "$1" in
    test-*) cmd=(./.ci/run) ;;
    isolab-build) cmd=(./bench/isolab-build.sh) ;;
  esac
  start=$(date +%s)
  (cd "$clone" && "${cmd[@]}") >"$scratch/$1.log" 2>&1 || {
    tail -n 20 "$scratch/$1.log" >&2
    echo "bench: $1 failed (its log's end is above)" >&2
    exit 1
  }
  end=$(date +%s)
  # The answer beside the time (compare's summary lines; the scratch directory goes at exit).
  grep -E '^  (exit status|primary:)' "$scratch/$1.log" | cut -c1-200 >&2 || true
  echo $((end - start))
}

for fig in "$@"; do
  prev=$(figure_field "$fig" 2)
  [ -n "$prev" ] || { echo "bench: unknown figure '$fig' (see $table)" >&2; exit 2; }
  target=$(figure_field "$fig" 3)
  secs=$( (measure "$fig") )
  awk -v f="$fig" -v s="$secs" -v p="$prev" -v t="$target" 'BEGIN {
    was = p == "-" ? "no previous figure" : sprintf("previous %d s, ratio %.2f", p, s / p)
    printf "%s: %d s; %s; target %d s, ratio %.2f\n", f, s, was, t, s / t }'
done
