#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang + ASan/UBSan) into build-fuzz and runs each
# one over its corpus tests/fuzz/corpus/<target>/ for a bounded time.
#
#   scripts/fuzz.sh                    every target, FUZZ_SECONDS (default 20) each
#   scripts/fuzz.sh console gate       only these targets
#   FUZZ_SECONDS=60 scripts/fuzz.sh
#   FUZZ_JOBS=1 scripts/fuzz.sh        one target at a time (default: as many as the host has CPUs)
#
# New corpus entries and crash files go to a temporary directory (FUZZ_WORKDIR, default a fresh
# mktemp dir), never into the repository; copy an interesting input into the corpus by hand.
# ISOLAB_FUZZ_MASK=utf8,json-number hides bugs already reported (see tests/fuzz/fuzz_bodies.h
# masked()) so that a run can look for further ones; the crash-* reproducers in the corpus still
# fail the replay test until the parsers are fixed.
# Exits 1 when any target crashes (printing the crash file), 2 on a build/usage error.
# Needs clang and libclang-rt-14-dev (scripts/setup.sh installs both).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-20}"
build="${FUZZ_BUILD_DIR:-build-fuzz}"
jobs="${FUZZ_BUILD_JOBS:-2}"
run_jobs="${FUZZ_JOBS:-$(nproc)}"
cxx="${FUZZ_CXX:-}"
if [ -z "$cxx" ]; then
  for c in clang++ clang++-14; do
    if command -v "$c" >/dev/null; then
      cxx="$c"
      break
    fi
  done
fi
[ -n "$cxx" ] || { echo "fuzz: clang++ not found (run scripts/setup.sh)" >&2; exit 2; }
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz: FUZZ_SECONDS must be a number" >&2; exit 2; }
[[ "$run_jobs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FUZZ_JOBS must be a number of 1 or more" >&2; exit 2; }

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# Through ccache when it is installed, keyed on paths relative to this checkout, as the other
# builds (scripts/ccache-env.sh): a fresh clone reuses what an earlier one compiled.
# shellcheck source=scripts/ccache-env.sh
. scripts/ccache-env.sh
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake "${generator[@]}" -S tests/fuzz -B "$build" -DCMAKE_CXX_COMPILER="$cxx" \
    "${cmake_launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 2
fi
# Serialised: two fuzz.sh runs sharing the build directory would race on ninja's log.
mkdir -p "$build"
if command -v flock >/dev/null; then
  flock "$build/.fuzz-build.lock" cmake --build "$build" -j "$jobs" || exit 2
else
  cmake --build "$build" -j "$jobs" || exit 2
fi

# -max_len per target (bytes): console logs are large, the rest are small files or lines.
max_len_of() {
  case "$1" in
    console | json_document) echo $((1 << 20)) ;;
    cpulist) echo 4096 ;;
    *) echo 65536 ;;
  esac
}

if (($#)); then
  targets=("$@")
else
  targets=()
  for d in tests/fuzz/corpus/*/; do targets+=("$(basename "$d")"); done
fi

work="${FUZZ_WORKDIR:-$(mktemp -d /tmp/isolab-fuzz.XXXXXX)}"
mkdir -p "$work"
echo "fuzz: ${#targets[@]} targets, ${seconds}s each, $run_jobs at once, work dir $work"

# run_target T: one target over its corpus; its verdict line goes to $work/T/result.
run_target() {
  local t=$1 exe="$build/fuzz_$1" corpus="tests/fuzz/corpus/$1" log rc crash runs
  mkdir -p "$work/$t/new" "$work/$t/crashes"
  log="$work/$t/fuzz.log"
  # First directory: where libFuzzer writes new inputs; the repo corpus is only read.
  set +e
  "$exe" "$work/$t/new" "$corpus" \
    -max_total_time="$seconds" -max_len="$(max_len_of "$t")" -rss_limit_mb=2048 \
    -timeout=25 -print_final_stats=1 -artifact_prefix="$work/$t/crashes/" >"$log" 2>&1
  rc=$?
  set -e
  crash="$(find "$work/$t/crashes" -maxdepth 1 -type f -printf '%f\n' 2>/dev/null | head -n 1 || true)"
  if [ "$rc" -ne 0 ] || [ -n "$crash" ]; then
    {
      printf 'fuzz: %-16s CRASH (exit %s)\n' "$t" "$rc"
      [ -n "$crash" ] && echo "fuzz:   crash file: $work/$t/crashes/$crash"
      grep -m 3 -E 'ERROR: |what\(\):|runtime error:' "$log" | sed 's/^/fuzz:   /' || true
      echo "fuzz:   log: $log"
    } >"$work/$t/result"
  else
    runs="$(grep -m 1 -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')"
    printf 'fuzz: %-16s ok (%s runs, %s new corpus entries)\n' "$t" "$runs" \
      "$(find "$work/$t/new" -maxdepth 1 -type f | wc -l)" >"$work/$t/result"
  fi
}

for t in "${targets[@]}"; do
  if [ ! -x "$build/fuzz_$t" ] || [ ! -d "tests/fuzz/corpus/$t" ]; then
    echo "fuzz: unknown target '$t' (no $build/fuzz_$t or no tests/fuzz/corpus/$t)" >&2
    exit 2
  fi
done
# FUZZ_JOBS targets at once (each fuzzer is one single-threaded process).
running=0
for t in "${targets[@]}"; do
  if ((running >= run_jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
wait
failed=()
for t in "${targets[@]}"; do
  cat "$work/$t/result"
  grep -q '^fuzz: [^ ]* *CRASH' "$work/$t/result" && failed+=("$t")
done

if ((${#failed[@]})); then
  echo "fuzz: crashes in: ${failed[*]}"
  exit 1
fi
echo "fuzz: no crashes"
