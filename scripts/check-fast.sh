#!/usr/bin/env bash
# Stage 1 of scripts/test.sh: the checks that need no VM and no kernel, run before the slow
# tiers so that a mistake they catch stops the test command within minutes. In order, stopping
# at the first that fails:
#   1. format     clang-format --dry-run -Werror (the repository's .clang-format) on every
#                 tracked C and C++ file
#   2. shellcheck every script in scripts/ and .ci/
#   3. sanitize   only with CHECK_SANITIZE=1: a separate build directory (CHECK_FAST_BUILD_DIR,
#                 default build-sanitize) with ISOLAB_SANITIZE=ON (ASan + UBSan, no recovery)
#                 and ISOLAB_WERROR=ON (-Werror), only the unit tests, then the unit tier there.
#                 Cold, that build takes about half an hour on a 2-core machine
#                 (docs/measurements.md), more than this stage's budget, so CI leaves it out.
#   4. skips      with step 3: the unit tier's skips against the policy (scripts/test-skips.sh;
#                 scripts/test.sh applies it to every tier anyway)
#   5. tidy       scripts/tidy.sh on that build directory's compile database, only with
#                 CHECK_TIDY=1: over the whole tree it takes far longer than this stage's
#                 10-minute budget on a 2-core machine (docs/measurements.md), so CI leaves it out
# Usage: scripts/check-fast.sh   (after scripts/setup.sh --packages-only)
# Exits 0 when all pass, else the failing step's exit status (its name is printed last).
set -euo pipefail
cd "$(dirname "$0")/.."

build="${CHECK_FAST_BUILD_DIR:-build-sanitize}"
jobs="$(nproc)"
t0=$SECONDS
step() { echo "check-fast: [$1] $2 ($((SECONDS - t0)) s so far)"; }
fail() { echo "check-fast: FAILED at step '$1' after $((SECONDS - t0)) s" >&2; exit "$2"; }

step format "clang-format --dry-run -Werror"
mapfile -t sources < <(git ls-files '*.c' '*.cc' '*.h' '*.cpp' '*.hpp')
clang-format --dry-run -Werror "${sources[@]}" || fail format $?

step shellcheck "scripts/ and .ci/"
mapfile -t scripts_ < <(git ls-files 'scripts/*.sh' '.ci/*')
shellcheck "${scripts_[@]}" || fail shellcheck $?

if [ "${CHECK_SANITIZE:-0}" = 1 ] || [ "${CHECK_TIDY:-0}" = 1 ]; then
  step sanitize "configure $build (ASan + UBSan, -Werror)"
  launcher=()
  command -v ccache >/dev/null &&
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DISOLAB_SANITIZE=ON \
    -DISOLAB_WERROR=ON "${launcher[@]}" >/dev/null || fail sanitize $?
  mapfile -t unit_targets < <(for f in tests/unit/*_test.cc; do basename "$f" .cc | sed 's/^/unit_/'; done)
  step sanitize "build ${#unit_targets[@]} unit test programs"
  ninja -C "$build" -j "$jobs" "${unit_targets[@]}" >"$build/check-fast-build.log" 2>&1 || {
    rc=$?
    grep -E 'error|FAILED' "$build/check-fast-build.log" | head -n 40 >&2
    fail sanitize "$rc"
  }
  step sanitize "unit tier under ASan + UBSan"
  # detect_leaks: a leak is a finding too; abort_on_error gives a core-less abort with a report.
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    ctest --test-dir "$build" -L unit -j "$jobs" --output-on-failure --timeout 600 ||
    fail sanitize $?

  step skips "the unit tier's skips"
  ./scripts/test-skips.sh "$build/Testing/Temporary/LastTest.log" || fail skips $?
fi

if [ "${CHECK_TIDY:-0}" = 1 ]; then
  step tidy "scripts/tidy.sh $build"
  ./scripts/tidy.sh "$build" || fail tidy $?
fi

echo "check-fast: all passed in $((SECONDS - t0)) s"
